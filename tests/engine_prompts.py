"""Real English text for engine tests, cut to exact token lengths."""

from __future__ import annotations

import argparse
import collections
import json
import random
import textwrap
import unittest


def english_corpus() -> str:
    # Standard-library documentation: real prose that every Python ships.
    docs = [json.__doc__, argparse.__doc__, collections.__doc__, textwrap.__doc__,
            unittest.__doc__, random.__doc__]
    return "\n\n".join(d for d in docs if d)


def prompts_of_lengths(tokenizer, lengths: list[int], seed: int = 0) -> list[list[int]]:
    ids = tokenizer.encode(english_corpus(), add_special_tokens=False)
    rng = random.Random(seed)
    out = []
    for n in lengths:
        start = rng.randrange(0, max(len(ids) - n, 1))
        chunk = ids[start : start + n]
        while len(chunk) < n:
            chunk += ids[: n - len(chunk)]
        out.append(chunk)
    return out
