"""Causal self-attention of one prefill chunk on CPU at bf16, with AVX-512 BF16's `vdpbf16ps`.

The chunk may follow a context in the cache (a prefix-cache hit, an earlier chunk), as in
prefill_attention_cpu.py; the same row gives the same result whichever chunk it is in.

The bf16 twin of prefill_attention_cpu.py's fp32 kernel, taken when the KV cache is bf16
(kv_cache_dtype="bfloat16"): the K/V are stored rounded to bf16 anyway, and the queries and
the softmax's probabilities are rounded to bf16 too, as a bf16 model's attention on a GPU
rounds them, so each multiply is `vdpbf16ps` (two bf16 products into each fp32 sum: twice
the fp32 FMA's rate). Sums, the softmax's max, exponentials and normalisation stay fp32.
A 512-token SmolLM2 chunk ran 2.3x the fp32 kernel's speed
(benchmarks/prefill_attention.py).

Instead of a GEMM library's calls it takes a few query rows at a time (6 at head_dim 64) and
runs them through scores, softmax and values while they sit in L1: the scores of
`score_tile` (the keys laid out [dim / 2][tokens][2], so one load holds 16 keys' dimension
pairs), a softmax over the row's causal keys only (no mask: the rows' lengths), and
`value_tile` (the values laid out [tokens / 2][dim][2]). The blocks of `QUERY_BLOCK` rows
are paired as in the fp32 kernel, so both threads hold the same work.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch

from llm_engine.layers.attention.prefill_attention_cpu import QUERY_BLOCK
from llm_engine.utils import cpu_extension
from llm_engine.utils.cpu_isa import CpuIsa

KERNEL = cpu_extension.CpuKernel(
    "prefill_attention_bf16.cpp", (CpuIsa.AVX512_VNNI_BF16,), ("-O3", "-fopenmp"),
    "bf16 prefill-attention", "using the fp32 kernel")


@cache
def load_kernel() -> Callable[..., torch.Tensor] | None:
    """The compiled `causal_prefill_bf16` (llm_engine/csrc/prefill_attention_bf16.cpp), or None
    where it cannot be built or the selected ISA level has no AVX-512 BF16 (logged once)."""
    module = cpu_extension.load(KERNEL)
    return None if module is None else module.causal_prefill_bf16


def compiled_bf16_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                          scale: float) -> torch.Tensor:
    """prefill_attention_cpu.compiled_prefill's arguments and result, attended at bf16 (head
    dims 64 and 128); the selector takes it with a bf16 KV cache where the kernel loads."""
    return load_kernel()(q * scale, k, v, QUERY_BLOCK, k.shape[0] - q.shape[0])
