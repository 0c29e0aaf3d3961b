"""The CPU prefill attention (query blocks of GEMMs: compiled tasks, and the Python loop
where there is no compiler) against torch's causal SDPA."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from prereqs import CXX, missing

from llm_engine.layers.attention import prefill_attention_bf16_cpu
from llm_engine.layers.attention.attention import chunk_causal_mask
from llm_engine.layers.attention.prefill_attention_bf16_cpu import compiled_bf16_prefill
from llm_engine.layers.attention.prefill_attention_cpu import (
    QUERY_BLOCK,
    blocked_loop,
    compiled_prefill,
    load_kernel,
)
from llm_engine.utils.cpu_isa import cpu_has


@pytest.mark.parametrize("path", ["compiled", "loop"])
@pytest.mark.parametrize("tokens", [1, QUERY_BLOCK - 1, QUERY_BLOCK, QUERY_BLOCK + 1,
                                    3 * QUERY_BLOCK + 5, 8 * QUERY_BLOCK])
@pytest.mark.parametrize(("heads", "kv_heads"), [(9, 3), (4, 4), (6, 1)])
@pytest.mark.parametrize("past", [0, 37])
def test_matches_causal_sdpa(path: str, tokens: int, heads: int, kv_heads: int, past: int) -> None:
    """past: tokens of context cached before the chunk (a prefix-cache hit, a later chunk)."""
    if path == "compiled" and load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    attend = compiled_prefill if path == "compiled" else blocked_loop
    gen = torch.Generator().manual_seed(tokens * 100 + heads * 10 + kv_heads + past)
    q = torch.randn(tokens, heads, 64, generator=gen) * 3
    k = torch.randn(past + tokens, kv_heads, 64, generator=gen) * 3
    v = torch.randn(past + tokens, kv_heads, 64, generator=gen)
    ref = F.scaled_dot_product_attention(
        q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None],
        attn_mask=chunk_causal_mask(tokens, past, q.device), scale=0.125,
        enable_gqa=heads != kv_heads)[0].transpose(0, 1)
    with torch.inference_mode():  # as the engine calls it: the pool's threads must follow
        out = attend(q, k, v, 0.125)
    assert out.shape == (tokens, heads, 64)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    if past == 0:  # token 0 sees only itself: its output is its own value, whatever follows
        torch.testing.assert_close(out[0], v[0].repeat_interleave(heads // kv_heads, dim=0))



def bf16_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """The bf16 kernel's arithmetic in float64: q * scale, k, v and the unnormalised
    probabilities rounded to bf16, everything else exact."""
    t, heads, _ = q.shape
    group = heads // k.shape[1]
    past = k.shape[0] - t

    def rounded(x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.bfloat16).double()
    qs = rounded(q * scale).transpose(0, 1)  # [heads, T, d]
    ks = rounded(k).repeat_interleave(group, dim=1).transpose(0, 1)
    vs = rounded(v).repeat_interleave(group, dim=1).transpose(0, 1)
    scores = (qs @ ks.transpose(1, 2)).masked_fill(~chunk_causal_mask(t, past, q.device), float("-inf"))
    e = torch.exp(scores - scores.amax(-1, keepdim=True))
    return ((rounded(e.float()) @ vs) / e.sum(-1, keepdim=True)).transpose(0, 1).float()


@pytest.mark.parametrize("tokens", [1, 2, 31, 33, QUERY_BLOCK + 1, 3 * QUERY_BLOCK + 5,
                                    8 * QUERY_BLOCK])
@pytest.mark.parametrize(("heads", "kv_heads", "dim"), [(9, 3, 64), (4, 4, 64), (6, 1, 64),
                                                        (8, 2, 128), (5, 5, 128)])
@pytest.mark.parametrize("past", [0, 37])
def test_bf16_kernel_rounds_where_it_says_and_nowhere_else(tokens: int, heads: int,
                                                           kv_heads: int, dim: int, past: int) -> None:
    """With a bf16 KV cache the prefill attends at bf16 (prefill_attention_bf16_cpu.py): its
    output is the float64 attention of bf16-rounded inputs and probabilities, up to fp32 sums
    and the bf16 roundings that fp32 and float64 place on either side of a tie; against fp32
    attention it is off by bf16's roundings only."""
    if not cpu_has("avx512_bf16", "avx512bw"):
        pytest.skip("this CPU has no AVX-512 BF16: the bf16 cache prefills with the fp32 kernel")
    if prefill_attention_bf16_cpu.load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    gen = torch.Generator().manual_seed(tokens * 1000 + heads * 10 + dim + past)
    q = torch.randn(tokens, heads, dim, generator=gen) * 3
    k = torch.randn(past + tokens, kv_heads, dim, generator=gen) * 3
    v = torch.randn(past + tokens, kv_heads, dim, generator=gen)
    scale = dim**-0.5
    with torch.inference_mode():
        out = compiled_bf16_prefill(q, k, v, scale)
        fp32 = compiled_prefill(q, k, v, scale)
    assert out.shape == (tokens, heads, dim)
    # Fewer than 1% of the outputs see a probability rounded the other way (by at most one
    # bf16 step, 0.4% of it); the rest agree to fp32's precision.
    err = (out - bf16_reference(q, k, v, scale)).abs()
    assert (err > 1e-5).float().mean() < 0.01 and err.max() < 1e-2
    err = (out - fp32).abs()
    assert 0 < err.max() < 0.2 and err.mean() < 0.02  # bf16 (8 bits) is not fp32 (24)
    if past == 0:
        torch.testing.assert_close(out[0], v[0].to(torch.bfloat16).float().repeat_interleave(
            heads // kv_heads, dim=0), rtol=0, atol=1e-6)
