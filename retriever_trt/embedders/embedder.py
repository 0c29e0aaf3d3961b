"""The embedder interface every runtime (TensorRT, ONNX Runtime, torch) implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from retriever_trt.store.storage import file_sha256

# Hex digits of a file's sha256 shown in messages: enough to tell two files apart by eye.
SHORT_SHA = 12


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors.

    `model_id` and `precision` identify the vectors an index was built with: two
    embedders whose ids or precisions differ produce incompatible spaces. `file_sha256`
    tells apart two files of one id and precision (the INT8 Q/DQ and dynamic graphs, a
    re-export): an index records it and refuses questions encoded by another file.
    """

    model_id: str
    precision: str
    dim: int

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array, each row of unit L2 norm."""

    @cached_property
    def file_sha256(self) -> str:
        """The sha256 of the one file this encoder runs (an ONNX graph, a TensorRT plan);
        '' for one without such a file (a torch model folder). Hashed once, when an index
        is built or loaded: ~0.1 s for MiniLM's INT8 graph."""
        path = getattr(self, "path", None)
        return file_sha256(Path(path)) if path is not None and Path(path).is_file() else ""


def describe_encoder(model_id: str, precision: str, dim: int, sha256: str) -> str:
    """'all-minilm-l6-v2 (int8, dim 384, file sha256 f0985291e317)': what a message names."""
    file = f", file sha256 {sha256[:SHORT_SHA]}" if sha256 else ""
    return f"{model_id} ({precision}, dim {dim}{file})"
