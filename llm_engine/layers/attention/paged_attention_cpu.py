"""A CPU kernel for decode attention that reads K/V blocks where they lie.

The torch path must first gather every sequence's blocks into a contiguous tensor, which
copies the whole context's K/V each step and then reads it again: on the standard workload
that copy was a third of a decode step. This kernel walks each sequence's block table and
reads the cache in place, one (sequence, K/V head) pair per task on ATen's thread pool,
from an fp32 cache or a bf16 one (kv_cache_dtype="bfloat16"), widened as it is read. Its
source, llm_engine/csrc/paged_attention.cpp, is compiled at first use for the CPU's ISA
level (utils/cpu_extension.py); where it cannot be built the engine keeps the torch path.

On the model's shapes (head_dim 64, blocks of 16 or 32, up to 4 query heads a K/V head) a
task scores and weighs its query heads together (`grouped_task`): each key block and value
row is read once for all of them, the heads' sums are independent chains the CPU overlaps,
and the next block is prefetched (blocks lie anywhere in the cache: each new block's first
loads stalled the loop). Every head's sums run in the order the per-head loop runs them, so
the result is that loop's bit for bit (tests/test_paged_attention.py). 64 rows of 450
tokens: 1.6x (fp32 cache) and 2.4x (bf16) the per-head loop
(benchmarks/decode_attention.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch

from llm_engine.utils import cpu_extension
from llm_engine.utils.cpu_isa import CpuIsa

KERNEL = cpu_extension.CpuKernel(
    "paged_attention.cpp", (CpuIsa.GENERIC, CpuIsa.AVX2, CpuIsa.AVX512),
    ("-O3", "-fopenmp", "-ffast-math"), "paged-attention", "using the torch path")


@cache
def load_kernel() -> Callable[..., torch.Tensor] | None:
    """The compiled `paged_decode` (llm_engine/csrc/paged_attention.cpp), or None where it
    cannot be built (logged once)."""
    module = cpu_extension.load(KERNEL)
    return None if module is None else module.paged_decode


def paged_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                 tables: torch.Tensor, lens: torch.Tensor, scale: float,
                 grouped: bool = True) -> torch.Tensor:
    kernel = load_kernel()
    assert kernel is not None, "call load_kernel() first"
    return kernel(q.contiguous(), k_cache, v_cache, tables, lens, scale, grouped)
