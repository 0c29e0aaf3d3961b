"""The compiled CPU decode kernel and the torch gather path compute the same attention."""

from __future__ import annotations

import pytest
import torch
from prereqs import CXX, missing

from llm_engine.layers.attention.attention import AttentionMetadata, DecodeGroup, PagedAttention
from llm_engine.layers.attention.paged_attention_cpu import load_kernel, paged_decode


def _decode_case(rows: int = 12, heads: int = 8, kv_heads: int = 2, dim: int = 64,
                 block_size: int = 16, num_blocks: int = 64, max_len: int = 90):
    gen = torch.Generator().manual_seed(0)
    attn = PagedAttention(heads, kv_heads, dim)
    attn.k_cache = torch.randn(kv_heads, num_blocks, dim, block_size, generator=gen)
    attn.v_cache = torch.randn(kv_heads, num_blocks, block_size, dim, generator=gen)
    lens = torch.randint(1, max_len, (rows,), generator=gen).sort().values
    width = int(lens.max() + block_size - 1) // block_size
    tables = torch.stack([torch.randperm(num_blocks, generator=gen)[:width] for _ in range(rows)])
    mask = (torch.arange(width * block_size)[None] < lens[:, None])[:, None, :]
    q = torch.randn(rows, heads, dim, generator=gen)
    k = torch.randn(rows, kv_heads, dim, generator=gen)
    v = torch.randn(rows, kv_heads, dim, generator=gen)
    # Each row's new token goes in the slot at position lens - 1 of its own table.
    pos = lens - 1
    blocks = tables[torch.arange(rows), pos // block_size]
    meta = AttentionMetadata(blocks, pos % block_size, [DecodeGroup(0, rows, tables, lens, mask)],
                             [])
    return attn, q, k, v, meta


def _reference(attn: PagedAttention, q, meta: AttentionMetadata) -> torch.Tensor:
    """Plain softmax attention, one row at a time, over the row's own tokens."""
    group = meta.decodes[0]
    kvh, _, bs, d = attn.v_cache.shape
    outs = []
    for r in range(q.shape[0]):
        n = int(group.lens[r])
        blocks = group.block_tables[r]
        keys = attn.k_cache[:, blocks].transpose(-1, -2).reshape(kvh, -1, d)[:, :n]
        values = attn.v_cache[:, blocks].reshape(kvh, -1, d)[:, :n]
        rep = attn.num_heads // kvh
        keys, values = keys.repeat_interleave(rep, 0), values.repeat_interleave(rep, 0)
        w = torch.softmax(q[r][:, None] @ keys.transpose(1, 2) * attn.scale, -1)
        outs.append((w @ values).reshape(-1))
    return torch.stack(outs)


@pytest.mark.parametrize("backend", ["torch", "cpu_kernel"])
def test_decode_attention_matches_reference(backend: str) -> None:
    if backend == "cpu_kernel" and load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    attn, q, k, v, meta = _decode_case()
    attn.decode_kernel = paged_decode if backend == "cpu_kernel" else None
    out = attn(q, k, v, meta)
    expected = _reference(attn, q, meta)  # after forward: the new K/V are in the cache
    torch.testing.assert_close(out, expected, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("backend", ["torch", "cpu_kernel"])
def test_bf16_cache_attends_like_fp32_over_the_same_values(backend: str) -> None:
    """kv_cache_dtype="bfloat16": K/V are rounded to bf16 once, when written; attention then
    reads them widened, so it equals fp32 attention over the rounded values."""
    if backend == "cpu_kernel" and load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    attn, q, k, v, meta = _decode_case()
    attn.k_cache, attn.v_cache = attn.k_cache.bfloat16(), attn.v_cache.bfloat16()
    attn.decode_kernel = paged_decode if backend == "cpu_kernel" else None
    out = attn(q, k, v, meta)
    assert out.dtype == torch.float32
    wide = PagedAttention(attn.num_heads, attn.num_kv_heads, attn.head_dim)
    wide.k_cache, wide.v_cache = attn.k_cache.float(), attn.v_cache.float()
    expected = _reference(wide, q, meta)
    torch.testing.assert_close(out, expected, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("cache_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("heads, kv_heads, block_size", [(9, 3, 16), (8, 2, 32), (4, 4, 16)])
def test_grouped_heads_equal_the_per_head_loop_bit_for_bit(cache_dtype: torch.dtype, heads: int,
                                                           kv_heads: int, block_size: int) -> None:
    """The model's shapes take the grouped path (the query heads of a K/V head together, the
    next block prefetched); its sums run in the per-head loop's order, so a token cannot
    depend on which path ran. Lengths cover one token, partial blocks and many blocks."""
    if load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    for max_len in (2, 40, 600):
        attn, q, _, _, meta = _decode_case(heads=heads, kv_heads=kv_heads,
                                           block_size=block_size, num_blocks=64 * 40 // block_size,
                                           max_len=max_len)
        group = meta.decodes[0]
        caches = attn.k_cache.to(cache_dtype), attn.v_cache.to(cache_dtype)
        args = (q, *caches, group.block_tables, group.lens, attn.scale)
        assert torch.equal(paged_decode(*args, grouped=True), paged_decode(*args, grouped=False))
