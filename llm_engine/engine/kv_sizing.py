"""How many KV blocks the cache gets, and the start-up check that one sequence fits.

Three sources, in order: `num_gpu_blocks_override` (a fixed count, on any device, so that
tests and operators can create memory pressure on purpose); on CUDA, what is left of
`gpu_memory_utilization` of the device after the weights, the activations of one profiled
forward pass at `max_num_batched_tokens`, and memory torch does not manage; on CPU,
`kv_cache_memory` bytes or a share of available memory.

CUDA graphs are captured after the cache is allocated (their inputs hold its address), so
their memory pool comes out of the share that gpu_memory_utilization leaves, as in vLLM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from llm_engine.config import EngineConfig

_GiB = float(1 << 30)


def _size(n: float) -> str:
    return f"{n / _GiB:.2f} GiB" if n >= _GiB else f"{n / (1 << 20):.1f} MiB"


@dataclass(frozen=True)
class KVCachePlan:
    """The block count and where it came from, so that errors can say what to change."""

    num_blocks: int  # allocated
    bytes_per_block: int
    source: str  # "num_gpu_blocks_override", "kv_cache_memory" or "gpu_memory_utilization"
    detail: str  # how the budget was reached, for the log and the error
    reserved_blocks: int = 0  # allocated but never handed out (the CUDA-graph scratch block)
    # CUDA only: device memory, and what the cache must leave to weights and activations.
    total_bytes: int = 0
    fixed_bytes: int = 0

    @property
    def usable_blocks(self) -> int:
        return max(self.num_blocks - self.reserved_blocks, 0)

    def check_fits(self, max_model_len: int, block_size: int, config: EngineConfig) -> None:
        """Fail unless one sequence of `max_model_len` tokens fits, naming what to change."""
        capacity = self.usable_blocks * block_size
        if capacity >= max_model_len:
            return
        need = -(-max_model_len // block_size) + self.reserved_blocks
        need_bytes = need * self.bytes_per_block
        lower = (f"lower max_model_len to at most {capacity}" if capacity else
                 "lower max_model_len")
        if self.source == "num_gpu_blocks_override":
            raise_ = f"raise num_gpu_blocks_override to at least {need}"
        elif self.source == "kv_cache_memory":
            raise_ = (f"raise kv_cache_memory to at least {need_bytes} bytes ({_size(need_bytes)}), "
                      f"or set num_gpu_blocks_override to at least {need}")
        else:
            util = (self.fixed_bytes + need_bytes) / self.total_bytes
            room = (f"raise gpu_memory_utilization to at least {util:.3f}" if util <= 1.0 else
                    "the device cannot hold it at any gpu_memory_utilization")
            raise_ = (f"{room}, lower max_num_batched_tokens (now {config.max_num_batched_tokens}"
                      "; its activations are reserved), use a smaller dtype, or shard the model "
                      "over more devices")
        kept, counted = ((", one more kept back for CUDA graphs", " with that one")
                         if self.reserved_blocks else ("", ""))
        raise ValueError(
            f"max_model_len={max_model_len} tokens does not fit the KV cache, which holds "
            f"{capacity} tokens ({self.usable_blocks} blocks of {block_size}{kept}; "
            f"{self.detail}); one sequence of max_model_len tokens needs {need} blocks"
            f"{counted} ({_size(need_bytes)}, {self.bytes_per_block} bytes a block): {lower}, "
            f"or {raise_}"
        )


def plan_kv_cache(config: EngineConfig, device: torch.device, bytes_per_block: int,
                  profile: Callable[[], int], reserved_blocks: int = 0,
                  tp_size: int = 1) -> KVCachePlan:
    """`profile` (CUDA only) runs the forward pass that needs the most activation memory
    and returns the bytes of scratch KV cache it allocated for it. `bytes_per_block` is
    one rank's share under tensor parallelism."""
    if config.num_gpu_blocks_override is not None:
        n = config.num_gpu_blocks_override
        return KVCachePlan(n, bytes_per_block, "num_gpu_blocks_override",
                           f"num_gpu_blocks_override={n}", reserved_blocks)
    if device.type == "cuda":
        return _plan_cuda(config, device, bytes_per_block, profile, reserved_blocks)
    total = config.default_kv_cache_memory()
    how = (f"kv_cache_memory={total} bytes" if config.kv_cache_memory is not None else
           f"kv_cache_memory unset: a quarter of available memory, at most 4 GiB = {_size(total)}")
    if tp_size > 1:
        # The ranks of a CPU group share the host's memory: the budget is for all of them.
        how += f", split over tensor_parallel_size={tp_size}"
    return KVCachePlan(total // tp_size // bytes_per_block, bytes_per_block, "kv_cache_memory",
                       how, reserved_blocks)


def _plan_cuda(config: EngineConfig, device: torch.device, bytes_per_block: int,
               profile: Callable[[], int], reserved_blocks: int) -> KVCachePlan:
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    weights = torch.cuda.memory_allocated(device)
    free, total = torch.cuda.mem_get_info(device)
    # CUDA context, cuBLAS/NCCL workspaces and other processes: counted so that the cache
    # never takes memory that is not there.
    other = total - free - torch.cuda.memory_reserved(device)
    scratch = profile()
    torch.cuda.synchronize(device)
    activations = torch.cuda.max_memory_allocated(device) - weights - scratch
    torch.cuda.empty_cache()
    fixed = weights + activations + other
    budget = total * config.gpu_memory_utilization - fixed
    detail = (f"gpu_memory_utilization={config.gpu_memory_utilization} x {_size(total)} - weights "
              f"{_size(weights)} - activations {_size(activations)} at max_num_batched_tokens="
              f"{config.max_num_batched_tokens} - other {_size(other)} = {_size(max(budget, 0))}")
    return KVCachePlan(max(int(budget // bytes_per_block), 0), bytes_per_block,
                       "gpu_memory_utilization", detail, reserved_blocks, total, fixed)
