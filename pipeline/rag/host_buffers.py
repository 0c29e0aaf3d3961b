"""The process's host memory for device transfers: one account, carved into the staging
buffers of query embeddings and the LLM engine's KV swap space.

With CUDA the memory is page-locked (torch `pin_memory`), so a copy between device and
host is a single asynchronous DMA; without CUDA it is plain memory. A lease from the
staging pool hands out a C-contiguous (rows, dim) float32 numpy *view* of a buffer, which
FAISS reads in place (`np.ascontiguousarray` of it is the same memory: no copy).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import torch


class HostMemory:
    """Host tensors for device transfers, page-locked when CUDA is present, accounted by use.

    Page-locked memory cannot be paged out, so every user of it draws from this one
    account: `bytes_by_use` says how much each holds (embedding staging, KV swap).
    """

    def __init__(self, pinned: bool | None = None) -> None:
        self.pinned = torch.cuda.is_available() if pinned is None else pinned
        self.bytes_by_use: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes_by_use.values())

    def allocate(self, shape: tuple[int, ...], dtype: torch.dtype, use: str) -> torch.Tensor:
        t = torch.empty(shape, dtype=dtype, pin_memory=self.pinned)
        with self._lock:
            self.bytes_by_use[use] += t.numel() * t.element_size()
        return t

    def allocator(self, use: str) -> Callable[[tuple[int, ...], torch.dtype], torch.Tensor]:
        """`allocate` for one use, in the engine's HostAllocator form: (shape, dtype)."""
        return lambda shape, dtype: self.allocate(shape, dtype, use)


class HostBufferPool:
    """`num_buffers` buffers of (max_rows, dim) float32; `lease(rows)` blocks while all are out.

    The buffers come from `memory` (a HostMemory of their own when none is given).
    """

    def __init__(self, num_buffers: int, max_rows: int, dim: int,
                 pinned: bool | None = None, memory: HostMemory | None = None) -> None:
        if num_buffers < 1 or max_rows < 1 or dim < 1:
            raise ValueError("num_buffers, max_rows and dim must be >= 1")
        if memory is not None and pinned is not None and pinned != memory.pinned:
            raise ValueError(f"pinned={pinned} but the host memory given is "
                             f"{'' if memory.pinned else 'not '}page-locked")
        memory = memory or HostMemory(pinned)
        self.max_rows, self.dim = max_rows, dim
        self.pinned = memory.pinned
        # The torch tensors own the memory behind the numpy views.
        self._tensors = [memory.allocate((max_rows, dim), torch.float32, "embedding staging")
                         for _ in range(num_buffers)]
        self._buffers: list[np.ndarray] = [t.numpy() for t in self._tensors]
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
