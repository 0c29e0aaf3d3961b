"""The CUDA-graph path's padded inputs, checked on the CPU (capture itself: tests/gpu).

A graph replays a fixed batch size, so a smaller step is padded. What can go wrong without
a GPU in sight: padded rows writing K/V into a real sequence's block (a larger earlier
step left real slots in those rows), or attending to nothing (NaN). The CPU decode kernel
reads block tables and lengths as the Triton one does, so it runs the padded metadata here.
"""

from __future__ import annotations

import pytest
import torch
from prereqs import CXX, missing
from test_paged_attention import _decode_case

from llm_engine import EngineConfig
from llm_engine.engine.cuda_graph import StaticDecodeInputs, capture_sizes
from llm_engine.layers.attention.attention import PagedAttention
from llm_engine.layers.attention.paged_attention_cpu import load_kernel, paged_decode


def test_padded_rows_write_only_the_scratch_block() -> None:
    if load_kernel() is None:
        missing("no C++ compiler for the CPU kernel", CXX)
    attn, q, k, v, meta = _decode_case(rows=5)
    earlier = _decode_case(rows=8)[4]
    scratch = attn.v_cache.shape[1]  # one block past those the tables use
    attn.k_cache = torch.cat([attn.k_cache, torch.zeros_like(attn.k_cache[:, :1])], dim=1)
    attn.v_cache = torch.cat([attn.v_cache, torch.zeros_like(attn.v_cache[:, :1])], dim=1)
    attn.decode_kernel = paged_decode
    eager = PagedAttention(attn.num_heads, attn.num_kv_heads, attn.head_dim)
    eager.k_cache, eager.v_cache = attn.k_cache.clone(), attn.v_cache.clone()
    eager.decode_kernel = paged_decode
    expected = eager(q, k, v, meta)

    inputs = StaticDecodeInputs(8, 8, scratch, torch.device("cpu"))
    ids = torch.arange(8)
    inputs.load(ids, ids, earlier, 8)  # a step of 8 leaves real slots in rows 5..7
    inputs.load(ids[:5] + 10, ids[:5] + 20, meta, 8)
    assert inputs.input_ids.tolist() == [10, 11, 12, 13, 14, 0, 0, 0]
    assert inputs.positions.tolist() == [20, 21, 22, 23, 24, 0, 0, 0]
    assert inputs.slot_blocks[5:].tolist() == [scratch] * 3
    assert inputs.lens[5:].tolist() == [1] * 3

    def pad(t: torch.Tensor) -> torch.Tensor:
        return torch.cat([t, torch.randn(3, *t.shape[1:])])

    out = attn(pad(q), pad(k), pad(v), inputs.meta(8))
    assert torch.equal(out[:5], expected)
    assert not out[5:].isnan().any()
    assert torch.equal(attn.k_cache[:, :scratch], eager.k_cache[:, :scratch])
    assert torch.equal(attn.v_cache[:, :scratch], eager.v_cache[:, :scratch])


def test_capture_sizes_cover_every_decode_batch_the_scheduler_makes() -> None:
    assert capture_sizes(EngineConfig(max_num_seqs=256)) == [1, 2, 4, *range(8, 257, 8)]
    assert capture_sizes(EngineConfig(max_num_seqs=12)) == [1, 2, 4, 8, 12]
    assert capture_sizes(EngineConfig(max_num_seqs=64, max_num_batched_tokens=20)) == \
        [1, 2, 4, 8, 16, 20]
    assert capture_sizes(EngineConfig(max_num_seqs=1)) == [1]


def test_triton_backend_on_cpu_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^attention_backend must be .*'triton' needs CUDA"):
        EngineConfig(device="cpu", attention_backend="triton")
