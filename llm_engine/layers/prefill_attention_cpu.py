"""Causal self-attention of one prefill chunk on CPU, as query blocks of batched GEMMs.

torch's CPU flash-attention kernel (`scaled_dot_product_attention`) ran a 512-token
SmolLM2 prefill at about half the GEMM rate of the CPU: 45% of the int8 engine's time to
first token. Here the queries go in blocks of `QUERY_BLOCK` rows, each block scored
against only the keys up to its last row (so the causal mask's upper triangle is skipped
but for the diagonal block) by `bmm`, softmaxed whole, and multiplied by the values. The
query heads that share a K/V head are stacked as that head's rows, so grouped-query
attention reads each key once. RESULTS.md, "Issue 13, second pass", has the measurements.
"""

from __future__ import annotations

import torch

# 32-96 measured alike on a 512-token chunk (9 heads of 64, 3 K/V heads); 128 and up pay
# for more of the masked triangle, smaller blocks for more calls.
QUERY_BLOCK = 64


def causal_prefill_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float
                             ) -> torch.Tensor:
    """q: [T, heads, dim]; k, v: [T, kv_heads, dim], with no context before them.
    Returns [T, heads, dim]."""
    t, heads, d = q.shape
    kvh = k.shape[1]
    group = heads // kvh
    # [kvh, T * group, dim]: row (i, g) is token i's query head g of this K/V head.
    qs = (q * scale).view(t, kvh, group, d).transpose(0, 1).reshape(kvh, t * group, d)
    keys_t = k.permute(1, 2, 0).contiguous()  # [kvh, dim, T]
    values = v.transpose(0, 1).contiguous()  # [kvh, T, dim]
    out = torch.empty(t, kvh, group, d, dtype=q.dtype, device=q.device)
    above = torch.ones(QUERY_BLOCK, QUERY_BLOCK, dtype=torch.bool, device=q.device).triu_(1)
    for start in range(0, t, QUERY_BLOCK):
        end = min(start + QUERY_BLOCK, t)
        rows = end - start
        scores = torch.bmm(qs[:, start * group : end * group], keys_t[:, :, :end])
        diagonal = scores.view(kvh, rows, group, end)[..., start:]
        diagonal.masked_fill_(above[:rows, None, :rows], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out[start:end] = torch.bmm(probs, values[:, :end]).view(kvh, rows, group, d).transpose(0, 1)
    return out.view(t, heads, d)
