"""One pool of host staging buffers for query embeddings.

With CUDA the buffers are page-locked (torch `pin_memory`), so a device-to-host copy of the
embeddings is a single DMA; without CUDA they are plain numpy arrays. Either way a lease
hands out a C-contiguous (rows, dim) float32 numpy *view* of a buffer, which FAISS reads in
place (`np.ascontiguousarray` of it is the same memory: no copy).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:  # pragma: no cover - torch is a dependency
        return False


class HostBufferPool:
    """`num_buffers` buffers of (max_rows, dim) float32; `lease(rows)` blocks while all are out."""

    def __init__(self, num_buffers: int, max_rows: int, dim: int,
                 pinned: bool | None = None) -> None:
        if num_buffers < 1 or max_rows < 1 or dim < 1:
            raise ValueError("num_buffers, max_rows and dim must be >= 1")
        self.max_rows, self.dim = max_rows, dim
        self.pinned = _cuda_available() if pinned is None else pinned
        self._tensors = []  # keeps pinned torch storage alive behind the numpy views
        self._buffers: list[np.ndarray] = []
        for _ in range(num_buffers):
            if self.pinned:
                import torch

                t = torch.empty((max_rows, dim), dtype=torch.float32, pin_memory=True)
                self._tensors.append(t)
                self._buffers.append(t.numpy())
            else:
                self._buffers.append(np.empty((max_rows, dim), dtype=np.float32))
        self._free = list(range(num_buffers))
        self._cond = threading.Condition()
        self.leases = 0

    @property
    def num_buffers(self) -> int:
        return len(self._buffers)

    @property
    def num_free(self) -> int:
        with self._cond:
            return len(self._free)

    def acquire(self, rows: int, timeout: float | None = None) -> tuple[int, np.ndarray]:
        if not 1 <= rows <= self.max_rows:
            raise ValueError(f"rows must be in [1, {self.max_rows}], got {rows}")
        with self._cond:
            if not self._cond.wait_for(lambda: self._free, timeout):
                raise TimeoutError("no host buffer free")
            slot = self._free.pop()
            self.leases += 1
        return slot, self._buffers[slot][:rows]

    def release(self, slot: int) -> None:
        with self._cond:
            if slot in self._free or not 0 <= slot < len(self._buffers):
                raise ValueError(f"buffer {slot} is not leased")
            self._free.append(slot)
            self._cond.notify()

    @contextmanager
    def lease(self, rows: int, timeout: float | None = None) -> Iterator[np.ndarray]:
        slot, view = self.acquire(rows, timeout)
        try:
            yield view
        finally:
            self.release(slot)


class StagingEmbedder:
    """Wraps an embedder so `encode` returns a view of a leased staging buffer.

    The retriever hands that view to FAISS unchanged. Leases taken by `encode` are held
    until `release_all()`, which the retrieval worker calls once the search is done.
    """

    def __init__(self, inner, pool: HostBufferPool) -> None:
        self.inner, self.pool = inner, pool
        self.model_id, self.precision, self.dim = inner.model_id, inner.precision, inner.dim
        self._held = threading.local()

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def encode(self, texts) -> np.ndarray:
        texts = list(texts)
        if len(texts) > self.pool.max_rows:  # larger than any staging buffer: plain array
            return self.inner.encode(texts)
        slot, view = self.pool.acquire(len(texts))
        held = getattr(self._held, "slots", None)
        if held is None:
            held = self._held.slots = []
        held.append(slot)
        encode_into = getattr(self.inner, "encode_into", None)
        if encode_into is not None:
            encode_into(texts, view)
        else:
            view[...] = self.inner.encode(texts)
        return view

    def release_all(self) -> None:
        for slot in getattr(self._held, "slots", []):
            self.pool.release(slot)
        self._held.slots = []
