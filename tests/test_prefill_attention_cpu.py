"""The CPU prefill attention (query blocks of GEMMs: compiled tasks, and the Python loop
where there is no compiler) against torch's causal SDPA."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from prereqs import CXX, missing

from llm_engine.layers.prefill_attention_cpu import (
    QUERY_BLOCK,
    blocked_loop,
    causal_prefill_attention,
    load_kernel,
)


@pytest.mark.parametrize("path", ["compiled", "loop"])
@pytest.mark.parametrize("tokens", [1, QUERY_BLOCK - 1, QUERY_BLOCK, QUERY_BLOCK + 1,
                                    3 * QUERY_BLOCK + 5, 8 * QUERY_BLOCK])
@pytest.mark.parametrize(("heads", "kv_heads"), [(9, 3), (4, 4), (6, 1)])
def test_matches_causal_sdpa(path: str, tokens: int, heads: int, kv_heads: int) -> None:
    if path == "compiled" and load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    attend = causal_prefill_attention if path == "compiled" else blocked_loop
    gen = torch.Generator().manual_seed(tokens * 100 + heads * 10 + kv_heads)
    q = torch.randn(tokens, heads, 64, generator=gen) * 3
    k = torch.randn(tokens, kv_heads, 64, generator=gen) * 3
    v = torch.randn(tokens, kv_heads, 64, generator=gen)
    ref = F.scaled_dot_product_attention(
        q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None],
        is_causal=True, scale=0.125, enable_gqa=heads != kv_heads)[0].transpose(0, 1)
    with torch.inference_mode():  # as the engine calls it: the pool's threads must follow
        out = attend(q, k, v, 0.125)
    assert out.shape == (tokens, heads, 64)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    # Token 0 sees only itself: its output is its own value, whatever follows it.
    torch.testing.assert_close(out[0], v[0].repeat_interleave(heads // kv_heads, dim=0))
