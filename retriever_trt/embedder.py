"""The embedder interface every runtime (TensorRT, ONNX Runtime, torch) implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors.

    `model_id` and `precision` identify the vectors an index was built with: two
    embedders whose ids or precisions differ produce incompatible spaces.
    """

    model_id: str
    precision: str
    dim: int

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array, each row of unit L2 norm."""
