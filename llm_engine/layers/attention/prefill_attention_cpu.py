"""Causal self-attention of one prefill chunk on CPU, as query blocks of GEMMs.

The chunk may follow a context already in the cache (a prefix-cache hit, an earlier chunk):
its keys and values then come first, and query i sits at position past + i. With a bf16 KV
cache the engine calls this kernel's bf16 twin (prefill_attention_bf16_cpu.py) where the CPU
has AVX-512 BF16; with an fp32 one it calls this kernel for a chunk without context only,
torch's SDPA for the others (layers/selector.py decides, once, and says why).

torch's CPU flash-attention kernel (`scaled_dot_product_attention`) ran a 512-token
SmolLM2 prefill at about half the GEMM rate of the CPU: 45% of the int8 engine's time to
first token. Here the queries go in blocks of `QUERY_BLOCK` rows, each block scored
against only the keys up to its last row (so the causal mask's upper triangle is skipped
but for the diagonal block), softmaxed whole, and multiplied by the values. The query
heads that share a K/V head are stacked as that head's rows, so grouped-query attention
reads each key once. benchmarks/prefill_attention.py measures it.

The blocks are independent, so a compiled driver (llm_engine/csrc/prefill_attention.cpp) runs
them as tasks on ATen's thread pool, each with ATen's own single-threaded `mm` and
`softmax`: block i of n is paired with block n - 1 - i, so every task holds the same work
and the threads finish together (batched `bmm` over 3 K/V heads kept two threads only 1.3x
ahead of one). It runs the same operations in the same order as the Python loop, which
stays for where it cannot be built:
at 1, 64, 77, 300 and 512 tokens the two agree bit for bit, at 65 within one fp32 rounding
(a one-row block through `mm` rather than `bmm`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch

from llm_engine.utils import cpu_extension
from llm_engine.utils.cpu_isa import CpuIsa

# 32-96 measured alike on a 512-token chunk (9 heads of 64, 3 K/V heads); 128 and up pay
# for more of the masked triangle, smaller blocks for more calls.
QUERY_BLOCK = 64

KERNEL = cpu_extension.CpuKernel(
    "prefill_attention.cpp", (CpuIsa.GENERIC,), ("-O3", "-fopenmp"), "prefill-attention",
    "using the Python loop")



@cache
def load_kernel() -> Callable[..., torch.Tensor] | None:
    """The compiled `causal_prefill` (llm_engine/csrc/prefill_attention.cpp), or None where it
    cannot be built (logged once)."""
    module = cpu_extension.load(KERNEL)
    return None if module is None else module.causal_prefill


def compiled_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """q: [T, heads, dim], the last T of the keys' positions; k, v: [past + T, kv_heads, dim]
    (past: the context cached before the chunk). Returns [T, heads, dim]. The compiled
    kernel's tasks; the selector (layers/selector.py) takes it where the kernel is built."""
    return load_kernel()(q * scale, k, v, QUERY_BLOCK, k.shape[0] - q.shape[0])


def blocked_loop(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """The same blocks one after another, each `bmm` over the K/V heads; no compiler needed."""
    t, heads, d = q.shape
    kvh = k.shape[1]
    group = heads // kvh
    past = k.shape[0] - t
    # [kvh, T * group, dim]: row (i, g) is token i's query head g of this K/V head.
    qs = (q * scale).view(t, kvh, group, d).transpose(0, 1).reshape(kvh, t * group, d)
    keys_t = k.permute(1, 2, 0).contiguous()  # [kvh, dim, T]
    values = v.transpose(0, 1).contiguous()  # [kvh, T, dim]
    out = torch.empty(t, kvh, group, d, dtype=q.dtype, device=q.device)
    above = torch.ones(QUERY_BLOCK, QUERY_BLOCK, dtype=torch.bool, device=q.device).triu_(1)
    for start in range(0, t, QUERY_BLOCK):
        end = min(start + QUERY_BLOCK, t)
        rows = end - start
        seen = past + end
        scores = torch.bmm(qs[:, start * group : end * group], keys_t[:, :, :seen])
        diagonal = scores.view(kvh, rows, group, seen)[..., past + start :]
        diagonal.masked_fill_(above[:rows, None, :rows], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out[start:end] = torch.bmm(probs, values[:, :seen]).view(kvh, rows, group, d).transpose(0, 1)
    return out.view(t, heads, d)
