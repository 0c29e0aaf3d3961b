"""The fused CPU elementwise ops (layers/cpu_ops.py) against the torch expressions they
replace, to the bit: the fp32 engine's token-exactness with transformers and the int8
engine's tokens rest on it."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from prereqs import CXX, missing

from llm_engine.layers import cpu_ops
from llm_engine.layers.activation import SiluAndMul, torch_silu_and_mul
from llm_engine.layers.activation import exact_kernel_lanes as silu_lanes
from llm_engine.layers.attention.attention import AttentionMetadata, PagedAttention
from llm_engine.layers.backends import TORCH_BACKENDS, Backends
from llm_engine.layers.layernorm import RMSNorm, exact_kernel_lanes, torch_rms_norm
from llm_engine.layers.quantization.quantization import Int8Weight
from llm_engine.layers.rotary_embedding import RotaryEmbedding
from llm_engine.layers.selector import resolve_backends


@pytest.fixture(autouse=True)
def kernel():
    if cpu_ops.load_kernel() is None:
        missing("no C++ compiler for the CPU kernels", CXX)


@pytest.fixture(scope="module")
def fused() -> Backends:
    """An fp32 CPU engine's kernels, as the selector hands them to its layers."""
    backends = resolve_backends(torch.device("cpu"), torch.float32, torch.float32, 64)
    assert backends.fused_ops is not None
    return backends


@pytest.mark.parametrize("tokens", [1, 7, 300])
@pytest.mark.parametrize(("heads", "kv_heads", "dim"), [(9, 3, 64), (4, 2, 128)])
def test_rotary_equals_the_torch_expression(tokens: int, heads: int, kv_heads: int, dim: int,
                                            fused: Backends) -> None:
    rotary = RotaryEmbedding(dim, 8192, 100_000.0, None)
    gen = torch.Generator().manual_seed(tokens + dim)
    # As the model passes them: views into one q/k/v row per token, so not contiguous.
    qkv = torch.randn(tokens, (heads + 2 * kv_heads) * dim, generator=gen) * 4
    positions = torch.randint(0, 8192, (tokens,), generator=gen)

    def split(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        q, k, _ = t.split([heads * dim, kv_heads * dim, kv_heads * dim], dim=-1)
        return q.view(tokens, heads, dim), k.view(tokens, kv_heads, dim)

    q_ref, k_ref = rotary(positions, *split(qkv.clone()))  # not bound: torch's ops
    rotary.bind(fused)
    rotated = qkv.clone()
    q, k = rotary(positions, *split(rotated))
    assert torch.equal(q, q_ref) and torch.equal(k, k_ref)
    # In place, and the values untouched.
    assert torch.equal(rotated[:, (heads + kv_heads) * dim:], qkv[:, (heads + kv_heads) * dim:])
    assert not torch.equal(q, split(qkv)[0])


@pytest.mark.parametrize("rows", [9, 64, 301])
@pytest.mark.parametrize(("n", "k"), [(960, 576), (100, 70)])
@pytest.mark.parametrize("smoothed", [False, True])
def test_int8_rows_equal_the_torch_expressions(rows: int, n: int, k: int, smoothed: bool,
                                               fused: Backends) -> None:
    """Past the few-row kernel's rows: the normalization before fbgemm and the rescaling
    after it, fused or as torch ops."""
    gen = torch.Generator().manual_seed(rows * 7 + k)
    weight, bias = torch.randn(n, k, generator=gen) * 0.05, torch.randn(n, generator=gen)
    x = torch.randn(rows, k, generator=gen)
    x[0, 3] = 40.0  # an outlier sets its row's step
    x[1] = 0.0  # an all-zero row: its max is clamped
    x[2] = torch.randn(k, generator=gen) * 1e-30  # a row below the clamp
    inv_smooth = torch.rand(k, generator=gen) + 0.5
    scaled, row_max = cpu_ops.load_kernel().int8_rows(x, inv_smooth if smoothed else cpu_ops.NONE)
    smooth = x * inv_smooth if smoothed else x
    expected_max = smooth.abs().amax(dim=1, keepdim=True).clamp_(min=1e-12)
    assert torch.equal(row_max, expected_max) and torch.equal(scaled, smooth / expected_max)
    for use_bias in (False, True):
        args = (weight, bias if use_bias else None,
                torch.rand(k, generator=gen) * 5 if smoothed else None)
        # torch's ops at the engine's activation range (8 bits with VNNI, else 7)
        torch_ops = replace(TORCH_BACKENDS, int8_reduce_range=fused.int8_reduce_range)
        reference = Int8Weight.quantize(*args, torch_ops)(x)
        # The fused rows around fbgemm (the VNNI kernels, where this CPU has them, aside).
        q = Int8Weight.quantize(*args, replace(fused, int8_kernel=None))
        assert torch.equal(q(x), reference), use_bias
        # and on a view that is not contiguous, as a sliced activation can be
        wide = torch.cat([x, x], dim=1)[:, :k]
        assert torch.equal(q(wide), reference), use_bias


def test_int8_rows_returns_the_scaled_rows_and_their_max() -> None:
    x = torch.tensor([[1.0, -4.0, 2.0], [0.0, 0.0, 0.0]])
    inv = torch.tensor([1.0, 0.5, 2.0])
    scaled, row_max = cpu_ops.load_kernel().int8_rows(x, inv)
    assert row_max.shape == (2, 1)
    assert row_max.flatten().tolist() == [4.0, torch.tensor(1e-12).item()]  # fp32's 1e-12
    assert scaled[0].tolist() == [0.25, -0.5, 1.0]
    assert scaled[1].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("rows", [1, 5, 300])
@pytest.mark.parametrize("dim", [576, 960, 2052])
def test_rms_norm_equals_torch_with_and_without_a_residual(rows: int, dim: int,
                                                           fused: Backends) -> None:
    """The compiled norm sums in torch's order: bit for bit, or the fp32 engine's tokens
    could drift from transformers'."""
    assert exact_kernel_lanes() is not None, "the compiled RMSNorm differs from torch's here"
    gen = torch.Generator().manual_seed(rows + dim)
    norm = RMSNorm(dim, 1e-5)
    norm.bind(fused)
    norm.weight.data = torch.randn(dim, generator=gen)
    x, residual = torch.randn(rows, dim, generator=gen) * 2, torch.randn(rows, dim, generator=gen) * 5
    expected = torch_rms_norm(x, norm.weight, 1e-5)
    assert torch.equal(norm(x), expected)
    x2, r2 = x.clone(), residual.clone()
    out, summed = norm(x2, r2)
    assert torch.equal(summed, x + residual)
    assert torch.equal(out, torch_rms_norm(x + residual, norm.weight, 1e-5))
    assert out.data_ptr() == x2.data_ptr() and summed.data_ptr() == r2.data_ptr()  # in place


def test_the_norm_check_catches_another_summation_order() -> None:
    """What the check at first use guards against: summed in another order (8 lanes where
    torch uses 16, or the reverse), the norm is not torch's."""
    lanes = exact_kernel_lanes()
    assert lanes is not None
    gen = torch.Generator().manual_seed(1)
    x, w = torch.randn(64, 576, generator=gen) * 3, torch.randn(576, generator=gen)
    other = cpu_ops.load_kernel().rms_norm(x, cpu_ops.NONE, w, 1e-5, 24 - lanes)
    assert not torch.equal(other, torch_rms_norm(x, w, 1e-5))


@pytest.mark.parametrize("cache_dtype", [torch.float32, torch.bfloat16])
def test_kv_writes_equal_the_indexed_assignment(cache_dtype: torch.dtype, fused: Backends) -> None:
    attn = PagedAttention(num_heads=6, num_kv_heads=3, head_dim=64)
    blocks, block_size, tokens = 10, 16, 37
    gen = torch.Generator().manual_seed(2)
    cache = torch.randn(2, 3, blocks, 64 * block_size, generator=gen).to(cache_dtype)
    slots = torch.randperm(blocks * block_size, generator=gen)[:tokens]
    qkv = torch.randn(tokens, (6 + 3 + 3) * 64, generator=gen)  # k, v as views, as the model has them
    k, v = qkv[:, 384:576].view(tokens, 3, 64), qkv[:, 576:].view(tokens, 3, 64)
    meta = AttentionMetadata(slot_blocks=slots // block_size, slot_offsets=slots % block_size,
                             decodes=[], prefills=[])

    def written(backends: Backends) -> torch.Tensor:
        c = cache.clone()
        attn.k_cache = c[0].view(3, blocks, 64, block_size)
        attn.v_cache = c[1].view(3, blocks, block_size, 64)
        attn.bind(backends)
        attn(torch.zeros(tokens, 6, 64), k, v, meta)
        return c

    one_pass = written(fused)
    assert torch.equal(one_pass, written(TORCH_BACKENDS))
    assert not torch.equal(one_pass, cache)


@pytest.mark.parametrize(("rows", "dim"), [(1, 1536), (7, 1536), (300, 1536), (4, 1000),
                                          (20, 80), (20, 48)])
def test_silu_and_mul_equals_torch(rows: int, dim: int, fused: Backends) -> None:
    assert silu_lanes() is not None, "the compiled silu_and_mul differs from torch's here"
    x = torch.randn(rows, 2 * dim, generator=torch.Generator().manual_seed(rows)) * 4
    act = SiluAndMul()
    act.bind(fused)
    assert act.fused is not None
    assert torch.equal(act(x), torch_silu_and_mul(x))


def test_the_silu_check_catches_another_vector_width() -> None:
    """Where the two widths' scalar tails differ, their results do: the check can tell."""
    lanes = silu_lanes()
    assert lanes is not None
    x = torch.randn(64, 2 * 48, generator=torch.Generator().manual_seed(3)) * 4
    try:
        other = cpu_ops.load_kernel().silu_and_mul(x, 24 - lanes)
    except RuntimeError:
        pytest.skip(f"this build has no {24 - lanes}-lane vectors to compare with")
    assert not torch.equal(other, torch_silu_and_mul(x))
