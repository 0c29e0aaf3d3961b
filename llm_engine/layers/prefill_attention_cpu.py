"""Causal self-attention of one prefill chunk on CPU, as query blocks of GEMMs.

The chunk may follow a context already in the cache (a prefix-cache hit, an earlier chunk):
its keys and values then come first, and query i sits at position past + i. With a bf16 KV
cache the engine calls this kernel's bf16 twin (prefill_attention_bf16_cpu.py); with an fp32
one it calls this kernel for a chunk without context only, torch's SDPA for the others
(attention.py says why).

torch's CPU flash-attention kernel (`scaled_dot_product_attention`) ran a 512-token
SmolLM2 prefill at about half the GEMM rate of the CPU: 45% of the int8 engine's time to
first token. Here the queries go in blocks of `QUERY_BLOCK` rows, each block scored
against only the keys up to its last row (so the causal mask's upper triangle is skipped
but for the diagonal block), softmaxed whole, and multiplied by the values. The query
heads that share a K/V head are stacked as that head's rows, so grouped-query attention
reads each key once. benchmarks/prefill_attention.py measures it.

The blocks are independent, so a compiled driver (`_SOURCE`) runs them as tasks on ATen's
thread pool, each with ATen's own single-threaded `mm` and `softmax`: block i of n is paired
with block n - 1 - i, so every task holds the same work and the threads finish together
(batched `bmm` over 3 K/V heads kept two threads only 1.3x ahead of one). It runs the same
operations in the same order as the Python loop, which stays for where it cannot be built:
at 1, 64, 77, 300 and 512 tokens the two agree bit for bit, at 65 within one fp32 rounding
(a one-row block through `mm` rather than `bmm`).
"""

from __future__ import annotations

from functools import cache

import torch

from llm_engine.layers import prefill_attention_bf16_cpu
from llm_engine.utils import cpu_extension

# 32-96 measured alike on a 512-token chunk (9 heads of 64, 3 K/V heads); 128 and up pay
# for more of the masked triangle, smaller blocks for more calls.
QUERY_BLOCK = 64

_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <algorithm>
#include <limits>

// q: [T, H, D] (scaled), at positions past .. past + T - 1; k, v: [past + T, KVH, D].
// Returns [T, H, D].
torch::Tensor causal_prefill(torch::Tensor q, torch::Tensor k, torch::Tensor v,
                             int64_t block, int64_t past) {
  const int64_t T = q.size(0), H = q.size(1), D = q.size(2), KVH = k.size(1), G = H / KVH;
  auto qh = q.view({T, KVH, G, D}).transpose(0, 1).reshape({KVH, T * G, D});
  auto keys_t = k.permute({1, 2, 0}).contiguous();  // [KVH, D, T]
  auto values = v.transpose(0, 1).contiguous();     // [KVH, T, D]
  auto out = torch::empty({T, KVH, G, D}, q.options());
  const int64_t nb = (T + block - 1) / block, pairs = (nb + 1) / 2;
  auto attend = [&](int64_t kh, int64_t b) {
    const int64_t start = b * block, end = std::min(T, start + block), rows = end - start;
    const int64_t seen = past + end;  // keys of the block's last row
    auto scores = at::mm(qh[kh].narrow(0, start * G, rows * G), keys_t[kh].narrow(1, 0, seen));
    // The causal mask of the diagonal block, written in place: a masked_fill_ of a strided
    // view with a broadcast mask cost as much as the softmax (RESULTS.md, "sixth pass").
    float* sp = scores.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t g = 0; g < G; ++g)
        std::fill(sp + (i * G + g) * seen + past + start + i + 1, sp + (i * G + g + 1) * seen,
                  -std::numeric_limits<float>::infinity());
    auto probs = at::softmax(scores, -1);
    out.narrow(0, start, rows).select(1, kh).copy_(
        at::mm(probs, values[kh].narrow(0, 0, seen)).view({rows, G, D}));
  };
  // The pool's threads do not inherit the caller's inference mode, and in-place writes to
  // an inference tensor (out) are refused outside it.
  const bool inference = c10::InferenceMode::is_enabled();
  at::parallel_for(0, KVH * pairs, 1, [&](int64_t first, int64_t last) {
    c10::InferenceMode guard(inference);
    for (int64_t task = first; task < last; ++task) {
      const int64_t kh = task / pairs, p = task % pairs;
      attend(kh, p);
      if (nb - 1 - p != p) attend(kh, nb - 1 - p);
    }
  });
  return out.view({T, H, D});
}
"""


@cache
def load_kernel():
    """The compiled `causal_prefill`, or None where it cannot be built (logged once)."""
    module = cpu_extension.build(
        "finrag_prefill_attention_cpu_v3", _SOURCE, ["causal_prefill"],
        ["-O3", "-fopenmp"], "prefill-attention", "using the Python loop")
    return None if module is None else module.causal_prefill


def causal_prefill_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float,
                             bf16: bool = False) -> torch.Tensor:
    """q: [T, heads, dim], the last T of the keys' positions; k, v: [past + T, kv_heads, dim]
    (past: the context cached before the chunk). Returns [T, heads, dim]. bf16: at bf16
    where the CPU has AVX-512 BF16 (the KV cache is bf16: prefill_attention_bf16_cpu.py),
    else as without it."""
    past = k.shape[0] - q.shape[0]
    if q.dtype == torch.float32:
        if bf16 and q.shape[-1] in (64, 128) and (kernel := prefill_attention_bf16_cpu.load_kernel()):
            return kernel(q * scale, k, v, QUERY_BLOCK, past)
        if (kernel := load_kernel()) is not None:
            return kernel(q * scale, k, v, QUERY_BLOCK, past)
    return blocked_loop(q, k, v, scale)


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
