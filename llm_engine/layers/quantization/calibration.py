"""Activation ranges for int8 smoothing: each linear layer's largest |input| per channel.

`quantization="int8"` calibrates at load, before quantizing (a later start with the same
weights, text and kernels loads the result: engine/calibration_cache.py): the fp32 model
reads a few windows of fixed English prose (the standard library's own documentation, which every
Python ships, so nothing is downloaded and the text is not the finance data the engine is
evaluated on) and a forward hook on every quantizable layer keeps the running maximum of
|x| per input channel. Which channels carry the outliers is a property of the weights
(RMSNorm gains, the MLP's gating), not of the text, so a small generic sample finds them.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import textwrap
import unittest
from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

CALIBRATION_WINDOWS = 4
CALIBRATION_WINDOW_TOKENS = 512


def calibration_text() -> str:
    docs = [json.__doc__, argparse.__doc__, collections.__doc__, textwrap.__doc__,
            unittest.__doc__, random.__doc__]
    return "\n\n".join(d for d in docs if d)


def calibration_windows(encode, max_len: int) -> list[list[int]]:
    """Token windows of the calibration text; `encode` maps text to token ids."""
    ids = encode(calibration_text())
    n = min(CALIBRATION_WINDOW_TOKENS, max_len)
    return [ids[i : i + n] for i in range(0, len(ids), n)][:CALIBRATION_WINDOWS]


@contextmanager
def record_input_maxima(modules: dict[str, nn.Module]) -> Iterator[dict[str, torch.Tensor]]:
    """While open, every forward of modules[name] raises maxima[name] to max |x| per channel."""
    maxima: dict[str, torch.Tensor] = {}

    def hook(name: str):
        def record(_module: nn.Module, inputs: tuple[torch.Tensor, ...], _out: object) -> None:
            m = inputs[0].detach().abs().reshape(-1, inputs[0].shape[-1]).amax(dim=0).float()
            maxima[name] = torch.maximum(maxima[name], m) if name in maxima else m
        return record

    handles = [module.register_forward_hook(hook(name)) for name, module in modules.items()]
    try:
        yield maxima
    finally:
        for h in handles:
            h.remove()
