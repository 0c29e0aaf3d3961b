"""Agreement between two embedders' vectors (an export against its FP32 reference)."""

from __future__ import annotations

import numpy as np


def mean_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Mean row-wise cosine of two (n, dim) L2-normalised arrays."""
    return float((a * b).sum(-1).mean())


def nn_agreement(ref: np.ndarray, other: np.ndarray) -> float:
    """Share of rows whose nearest neighbour (excluding itself) is the same in both spaces."""
    def nn(x: np.ndarray) -> np.ndarray:
        sims = x @ x.T
        np.fill_diagonal(sims, -np.inf)
        return sims.argmax(1)

    return float((nn(ref) == nn(other)).mean())
