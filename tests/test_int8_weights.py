"""quantization="int8": the quantized linear within int8 error of fp32, the engine's greedy
output and perplexity close to fp32's on real SmolLM2 weights, bad settings refused, and
the fp32 path's row buckets (which bound oneDNN's per-shape memory) exact."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from engine_prompts import prompts_of_lengths
from paths import REPO

from llm_engine import LLM, EngineConfig
from llm_engine.layers.linear import bucket_rows, linear
from llm_engine.layers.quantization import int8_vnni_cpu
from llm_engine.layers.quantization.quantization import Int8Weight
from llm_engine.layers.selector import resolve_backends
from llm_engine.utils.cpu_isa import CpuIsa, cpu_has, selected_isa

sys.path.insert(0, str(REPO / "benchmarks"))
from perplexity import greedy_picks, perplexity, text_windows  # noqa: E402

LENGTHS = [12, 300, 40, 130, 75, 500]
MAX_NEW = 32


@pytest.mark.parametrize("rows", [1, 7, 64, 300])
def test_int8_linear_is_within_int8_error_of_fp32(rows: int) -> None:
    torch.manual_seed(0)
    weight, bias = torch.randn(960, 576) * 0.05, torch.randn(960)
    x = torch.randn(rows, 576)
    x[0] *= 50  # a token of huge norm must not cost the other rows their resolution
    q = Int8Weight.quantize(weight, bias)
    ref = F.linear(x, weight, bias)
    err = (q(x) - ref).abs().amax(dim=1) / ref.abs().amax(dim=1)
    # 8-bit weights and (at worst, 7-bit) activations: about 1% of the row's range.
    assert err.max() < 0.03
    assert err.max() > 0  # it is the quantized kernel, not the fp32 one


def test_a_tokens_result_does_not_depend_on_its_batch() -> None:
    torch.manual_seed(0)
    weight = torch.randn(960, 576) * 0.05
    x = torch.randn(6, 576)
    x[1] = x[1].abs()  # alone, this row's range would be [0, 1], in the batch [-1, 1]
    x[2] *= 1e-3
    for q in (Int8Weight.quantize(weight, None), Int8Weight.quantize(weight, None, x.abs().amax(0))):
        batch = q(x)
        for i in range(len(x)):
            assert torch.equal(batch[i], q(x[i : i + 1])[0]), i


@pytest.mark.parametrize("reduce_range", [False, True])
def test_fixed_range_equals_the_dynamic_kernel_on_rows_spanning_minus_one_to_one(
        reduce_range: bool) -> None:
    """The kernel quantizes the normalised rows over [-1, 1] with a fixed step: bit for bit
    what fbgemm's dynamic kernel does once a row holding -1 and 1 pins its range there."""
    torch.manual_seed(0)
    weight, bias = torch.randn(960, 576) * 0.05, torch.randn(960)
    x = torch.randn(9, 576)
    q = Int8Weight.quantize(weight, bias, act_max=x.abs().amax(0) * 3)
    q = Int8Weight(q.packed, q.scales, q.bias, q.inv_smooth, reduce_range=reduce_range)
    xs = x * q.inv_smooth
    row_max = xs.abs().amax(dim=1, keepdim=True)
    pinned = torch.cat([xs / row_max, torch.tensor([[1.0, -1.0] + [0.0] * 574])])
    dynamic = torch.ops.quantized.linear_dynamic(pinned, q.packed, reduce_range)[:-1]
    assert torch.equal(q(x), dynamic * row_max + bias)


@pytest.mark.parametrize("n, k", [(960, 576), (576, 1536), (100, 70)])
@pytest.mark.parametrize("smoothed", [False, True])
def test_the_vnni_kernels_equal_fbgemm_bit_for_bit(n: int, k: int, smoothed: bool) -> None:
    """Rows go to layers/quantization/int8_vnni_cpu.py (the few-row kernel up to MAX_ROWS, oneDNN's GEMM
    beyond) or to fbgemm; they must agree to the bit, or a token would change with the rows
    that share its step."""
    if not cpu_has("avx512_vnni", "avx512bw"):
        pytest.skip("this CPU has no AVX-512 VNNI: fbgemm serves every row count")
    backends = resolve_backends(torch.device("cpu"), torch.float32, torch.float32, 64, int8=True)
    assert backends.int8_kernel is not None, "the VNNI kernels failed to build"
    assert int8_vnni_cpu.ONEDNN_GEMM
    torch.manual_seed(0)
    weight, bias = torch.randn(n, k) * 0.05, torch.randn(n)
    # A row of values half a step apart, each nudged by at most one ulp: there the
    # rounding of x / step + zero point decides, and only fbgemm's exact sequence agrees.
    step = torch.tensor(2 / 255, dtype=torch.float32)
    ties = (torch.randint(-127, 127, (k,)) + 0.5) * step
    ties = torch.nextafter(ties, ties + torch.randint(-1, 2, (k,)).float())
    ties[0] = 1.0  # the row's max: normalizing leaves it as it is
    many_rows = (int8_vnni_cpu.MAX_ROWS + 1, 17, 64, 301)
    assert all(int8_vnni_cpu.takes(rows, n) for rows in many_rows)
    for use_bias in (False, True):
        q = Int8Weight.quantize(weight, bias if use_bias else None,
                                torch.rand(k) * 5 if smoothed else None, backends)
        assert q.vnni is not None
        vnni = q.vnni
        for rows in (*range(1, int8_vnni_cpu.MAX_ROWS + 1), *many_rows):
            x = torch.randn(rows, k)
            x[0, 3] = 40.0  # one outlier sets its row's step
            if rows > 1:
                x[1] = ties
            if rows > 2:
                x[2] = 0.0  # an all-zero row (its max clamped)
            q.vnni = None
            reference = q(x)
            q.vnni = vnni
            assert torch.equal(q(x), reference), (rows, use_bias)


def test_smoothing_keeps_the_product_and_cuts_the_error_of_outlier_channels() -> None:
    torch.manual_seed(0)
    weight = torch.randn(576, 1536) * 0.05
    x = torch.randn(64, 1536)
    x[:, :8] *= 100  # a few channels far larger than the rest, in every token (as in an MLP)
    ref = F.linear(x, weight)
    plain = Int8Weight.quantize(weight, None)
    smoothed = Int8Weight.quantize(weight, None, act_max=x.abs().amax(dim=0))
    err_plain = ((plain(x) - ref).norm() / ref.norm()).item()
    err_smooth = ((smoothed(x) - ref).norm() / ref.norm()).item()
    print(f"relative error: per token {err_plain:.4f}, smoothed {err_smooth:.4f}")
    assert err_smooth < err_plain / 2, (err_plain, err_smooth)
    assert err_smooth > 0


def test_bucketed_fp32_linear_equals_unpadded() -> None:
    torch.manual_seed(0)
    weight = torch.randn(576, 1536)
    for rows in (1, 8, 9, 13, 100, 513):
        x = torch.randn(rows, 1536)
        torch.testing.assert_close(linear(x, weight, None), F.linear(x, weight), rtol=1e-4, atol=1e-3)
    buckets = {bucket_rows(m) for m in range(1, 2049)}
    assert len(buckets) == 40
    assert all(m <= bucket_rows(m) <= 1.25 * m for m in range(1, 2049))


@pytest.mark.parametrize("bad, message", [("fp8", "None or 'auto' or 'int8'"),
                                          ("INT8", "None or 'auto' or 'int8'")])
def test_unknown_quantization_is_refused_with_the_accepted_values(bad: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EngineConfig(quantization=bad)


def test_int8_needs_fp32_activations() -> None:
    with pytest.raises(ValueError, match="dtype='float32' or 'auto'"):
        EngineConfig(quantization="int8", dtype="bfloat16")


def test_auto_quantization_is_int8_on_cpu_fp32_only() -> None:
    assert EngineConfig(device="cpu", quantization="auto").quantization_method == "int8"
    assert EngineConfig(device="cpu", dtype="bfloat16", quantization="auto").quantization_method is None
    assert EngineConfig(device="cpu").quantization_method is None  # the engine's own default


@pytest.fixture(scope="module")
def engines(prepared_default: Path):
    args = {"max_model_len": 1024, "kv_cache_memory": 160 << 20}
    return (LLM(str(prepared_default), quantization=None, **args),
            LLM(str(prepared_default), quantization="int8", **args))


def test_every_linear_and_the_lm_head_run_in_int8(engines) -> None:
    _, int8 = engines
    model = int8.llm_engine.executor.driver.model
    layers = [m for m in model.modules() if hasattr(m, "quantize_int8")]
    # 4 linears a decoder layer (qkv, o, gate_up, down), plus the LM head
    assert len(layers) == 4 * model.config.num_hidden_layers + 1
    assert all(m.int8 is not None for m in layers)
    # each smoothed by the calibration text's activation ranges (layers/quantization/calibration.py)
    assert all(m.int8.inv_smooth is not None for m in layers)
    assert all(m.int8.inv_smooth.shape == (m.int8.packed.unpack()[0].shape[1],) for m in layers)


# The least share of fp32's greedy tokens int8 picks, by whether the CPU has AVX-512 VNNI.
MIN_INT8_AGREEMENT = {True: 0.8, False: 0.78}


def test_int8_greedy_output_agrees_with_fp32_on_most_tokens(engines, fp32_greedy) -> None:
    fp32, int8 = engines
    prompts = prompts_of_lengths(fp32.get_tokenizer(), LENGTHS)
    # fp32's greedy text (conftest.py: made once a run, by this module's fp32 engine or
    # test_kv_cache_dtype.py's, for the same prompts and length).
    texts = fp32_greedy(fp32, prompts, MAX_NEW)
    # Teacher-forced on fp32's greedy text: free-running, the first near-tie that int8
    # breaks the other way sends the two engines down different texts for good.
    agreed = 0
    for prompt, text in zip(prompts, texts, strict=True):
        picks = greedy_picks(int8, prompt, text)
        agreed += int((picks == torch.tensor(text)).sum())
    share = agreed / (len(LENGTHS) * MAX_NEW)
    print(f"int8 picks fp32's greedy token at {share:.3f} of positions")
    # Measured 0.896 on AVX-512 VNNI (0.859 before smoothing; 0.885 while the check ran the
    # LM head over every prompt row too, rows that took fbgemm, not the VNNI kernel decoding
    # takes) and 0.797 on an AVX2-only host, where fbgemm's int8 GEMMs round differently (the
    # same 0.797 before the kernels moved to .cpp sources): exact equality is not expected of
    # int8, and free-running the texts part at the first near-tie it flips.
    assert share >= MIN_INT8_AGREEMENT[CpuIsa.AVX512_VNNI <= selected_isa()], share


def test_int8_perplexity_is_close_to_fp32(engines) -> None:
    fp32, int8 = engines
    windows = text_windows(fp32.get_tokenizer(), 2, 512)
    base, quantized = perplexity(fp32, windows), perplexity(int8, windows)
    print(f"perplexity fp32 {base:.3f}, int8 {quantized:.3f}")
    # benchmarks/perplexity.py on 4 windows: +1.0% smoothed, +4.1% per token without
    # smoothing, +57% per tensor.
    assert base < quantized < 1.03 * base, (base, quantized)
