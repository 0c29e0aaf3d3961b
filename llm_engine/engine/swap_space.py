"""Host memory for swapped-out KV blocks, and the copies between it and the device cache."""

from __future__ import annotations

from collections.abc import Callable

import torch

# (shape, dtype) -> an uninitialised host tensor. The pipeline passes one that carves the
# memory out of its shared host-buffer pool; the engine never imports the pipeline.
HostAllocator = Callable[[tuple[int, ...], torch.dtype], torch.Tensor]


def default_host_allocator(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """Page-locked where CUDA is present (copies are then asynchronous DMA), else plain.

    Plain `torch.empty` on CPU only reserves address space: pages are committed when a
    block is first swapped out, so an unused swap space costs no memory.
    """
    return torch.empty(shape, dtype=dtype, pin_memory=torch.cuda.is_available())


class SwapSpace:
    """`num_blocks` host blocks, block-major: [num_blocks, layers, 2, kv_heads, slots].

    The device cache is [layers, 2, kv_heads, num_blocks, slots] (one tensor whose
    per-layer views the attention layers use), so the device side of a swap is one
    gather or scatter along dim 3 for all layers at once. On the host side each block is
    one contiguous run, which makes each block one asynchronous DMA on CUDA.
    """

    def __init__(self, num_blocks: int, block_shape: tuple[int, ...], dtype: torch.dtype,
                 allocator: HostAllocator) -> None:
        shape = (num_blocks, *block_shape)
        self.cache = allocator(shape, dtype)
        if tuple(self.cache.shape) != shape or self.cache.dtype != dtype \
                or self.cache.device.type != "cpu":
            raise ValueError(f"the host allocator returned {tuple(self.cache.shape)} "
                             f"{self.cache.dtype} on {self.cache.device}; wanted {shape} "
                             f"{dtype} on the CPU")

    @property
    def num_blocks(self) -> int:
        return self.cache.shape[0]

    def swap_out(self, kv: torch.Tensor, pairs: list[tuple[int, int]]) -> None:
        """Copy device block d to host block h for each (d, h)."""
        device_ids = torch.tensor([d for d, _ in pairs], device=kv.device)
        blocks = kv.index_select(3, device_ids).movedim(3, 0)
        if kv.device.type == "cpu":
            self.cache.index_copy_(0, torch.tensor([h for _, h in pairs]), blocks)
            return
        blocks = blocks.contiguous()
        # Stream-ordered: the device blocks may be overwritten by later kernels, and the
        # host block read back by a later swap-in, only after these copies.
        for i, (_, h) in enumerate(pairs):
            self.cache[h].copy_(blocks[i], non_blocking=True)

    def swap_in(self, kv: torch.Tensor, pairs: list[tuple[int, int]]) -> None:
        """Copy host block h to device block d for each (h, d)."""
        device_ids = torch.tensor([d for _, d in pairs], device=kv.device)
        if kv.device.type == "cpu":
            blocks = self.cache.index_select(0, torch.tensor([h for h, _ in pairs]))
        else:
            blocks = torch.empty((len(pairs), *self.cache.shape[1:]), dtype=kv.dtype,
                                 device=kv.device)
            for i, (h, _) in enumerate(pairs):
                blocks[i].copy_(self.cache[h], non_blocking=True)
        kv.index_copy_(3, device_ids, blocks.movedim(0, 3))
