"""This process's place in the tensor-parallel group, and the collectives the sharded layers use.

The group is passed to the model explicitly rather than read from globals, so that a
single-rank engine never touches torch.distributed even while a tensor-parallel one runs
in the same process.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

# How long a collective may wait for a silent peer before failing. A peer that dies closes
# its sockets and fails the collective at once; this only bounds a hung one.
COLLECTIVE_TIMEOUT = timedelta(minutes=10)


@dataclass(frozen=True)
class TensorParallelGroup:
    """Rank `rank` of `size`; rank 0 is the driver (the engine's own process)."""

    rank: int = 0
    size: int = 1
    # None for a single rank, where no collective is ever called.
    group: dist.ProcessGroup | None = None

    @property
    def is_driver(self) -> bool:
        return self.rank == 0

    def all_reduce(self, x: torch.Tensor) -> torch.Tensor:
        """Sum `x` over the ranks, in place."""
        dist.all_reduce(x, group=self.group)
        return x

    def gather_to_driver(self, x: torch.Tensor, dim: int) -> torch.Tensor | None:
        """Every rank's `x` concatenated along `dim` on the driver; None on the other ranks."""
        parts = [torch.empty_like(x) for _ in range(self.size)] if self.is_driver else None
        dist.gather(x.contiguous(), parts, dst=0, group=self.group)
        return torch.cat(parts, dim) if parts is not None else None

    def min(self, value: int, device: torch.device) -> int:
        """The smallest of every rank's `value` (so all ranks agree on a size)."""
        if self.size == 1:
            return value
        t = torch.tensor([value], dtype=torch.int64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MIN, group=self.group)
        return int(t.item())

    def device(self, base: torch.device) -> torch.device:
        """This rank's device: rank r of a CUDA group takes the r-th GPU from `base` on."""
        if base.type != "cuda" or self.size == 1:
            return base
        return torch.device("cuda", (base.index or 0) + self.rank)


SINGLE = TensorParallelGroup()


def check_no_group() -> None:
    """torch.distributed has one default group per process: one tensor-parallel engine."""
    if dist.is_initialized():
        raise RuntimeError(
            "a tensor-parallel engine is already running in this process; shut it down "
            "(LLMEngine.shutdown()) before starting another with tensor_parallel_size > 1")


def backend_for(device: torch.device) -> str:
    return "nccl" if device.type == "cuda" else "gloo"


def init_tensor_parallel(rank: int, size: int, init_method: str, base_device: torch.device
                         ) -> TensorParallelGroup:
    """Join the group (blocks until every rank has joined): NCCL between GPUs, one per
    rank, else gloo."""
    check_no_group()
    device = TensorParallelGroup(rank, size).device(base_device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(backend_for(device), init_method=init_method, rank=rank,
                            world_size=size, timeout=COLLECTIVE_TIMEOUT)
    return TensorParallelGroup(rank, size, dist.group.WORLD)


def destroy_tensor_parallel() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def free_tcp_address() -> str:
    """An init_method on a loopback port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def divide(numerator: int, denominator: int) -> int:
    assert numerator % denominator == 0, f"{numerator} is not divisible by {denominator}"
    return numerator // denominator
