"""The int8 linear on CPUs with AVX-512 VNNI, bit for bit fbgemm's result.

Two paths, by the number of rows in the call:
- **At most `MAX_ROWS` rows** (decode at small batches, the verification of prompt-lookup
  drafts at batch 1): `int8_gemv`. There fbgemm's int8 GEMM is bound by its per-call work
  (packing the activations, requantization set-up, its thread pool), not by the weight bytes:
  the four linears of SmolLM2's 30 layers took 9.2 ms a decode step at one row with the
  weights out of cache, 11.5 GB/s against the 32 GB/s this machine reads
  (benchmarks/int8_linear.py). Here each weight row is read once for all the rows of the
  call and dotted with them by `vpdpbusd` (uint8 x int8 into int32), one contiguous share of
  the output channels per thread.
- **More rows** (prefill, decode of many sequences): the rows are quantized here, oneDNN's
  int8 GEMM (`torch._int_mm`, int8 x int8 into int32) multiplies them, and the output is
  requantized here. On q/k/v, o and down that ran 1.2-1.7x the speed of fbgemm's whole
  call from 24 rows on, gate/up as fast up to 64 rows and 1.2x at 512, and a 512-token
  prefill 11% faster (benchmarks/int8_linear.py); the LM head keeps fbgemm below
  64 rows (`WIDE_OUTPUT`). fbgemm's uint8
  activation q with zero point 128 goes in as the int8 q - 128, so the int32 sums are
  fbgemm's `acc - 128 * colsum` exactly.

The results are bit for bit fbgemm's (`tests/test_int8_weights.py` checks both paths): the
activations are normalized and quantized with the same fp32 operations in the same order,
the int32 sums are exact, and the requantization is fbgemm's, `float(acc - zp * colsum) *
(input_scale * weight_scale)`. So which path a row goes through, and so which rows share
its call, does not change a token (greedy output alone = in a batch = with drafts). It is
compiled without -ffast-math, which would turn those divisions into reciprocals.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

import torch

from llm_engine.utils import cpu_extension
from llm_engine.utils.cpu_isa import CpuIsa

# Rows of one call up to which `int8_gemv` beats the GEMMs on this model's shapes (int8_linear.py).
MAX_ROWS = 8
# Calls of more rows go to oneDNN's int8 GEMM; False sends them to fbgemm (the caller's path),
# which benchmarks/cpu_kernels.py compares.
ONEDNN_GEMM = True
# Except for weights of at least WIDE_OUTPUT output channels (the LM head's 49,152) below
# WIDE_MIN_ROWS rows: there oneDNN writes an int32 output as wide as the vocabulary, which the
# requantization reads back, and the call ran up to 2x fbgemm's time (9 to 48 rows; even at
# 64). The model's other weights (960, 576, 3,072 and 576 columns) were as fast or faster
# from 9 rows on (benchmarks/int8_linear.py).
WIDE_OUTPUT = 8192
WIDE_MIN_ROWS = 64

KERNEL = cpu_extension.CpuKernel(
    "int8_vnni.cpp", (CpuIsa.AVX512_VNNI,),
    # No -ffast-math and no fused multiply-adds the source does not ask for: either would
    # change the roundings that keep the results fbgemm's.
    ("-O3", "-ffp-contract=off", "-fopenmp"), "int8 VNNI", "fbgemm serves all rows")


@cache
def load_kernel() -> ModuleType | None:
    """The compiled kernels (llm_engine/csrc/int8_vnni.cpp), or None where they cannot be
    built or the selected ISA level has no AVX-512 VNNI (logged once)."""
    return cpu_extension.load(KERNEL)


def takes(rows: int, out_features: int) -> bool:
    """Whether a call of this many rows, to a weight of this many output channels, comes
    here (else it goes to fbgemm)."""
    if rows <= MAX_ROWS:
        return True
    return ONEDNN_GEMM and (out_features < WIDE_OUTPUT or rows >= WIDE_MIN_ROWS)


def linear(kernel: ModuleType, x: torch.Tensor, weights: tuple[torch.Tensor, ...],
           input_scale: float, zero_point: int) -> torch.Tensor:
    """x [M, K] -> [M, N] fp32 through `kernel` (load_kernel's), as fbgemm's linear over rows
    normalized to max |x| = 1. weights: (int8 rows [N, K], their int32 sums, the
    requantization multipliers, 1 / the smoothing or an empty tensor, the bias or an empty
    tensor), as Int8Weight keeps them."""
    if x.shape[0] <= MAX_ROWS:
        return kernel.int8_gemv(x, *weights, input_scale, zero_point)
    rows, _, mult, inv_smooth, bias = weights
    q, row_max = kernel.int8_quantize(x, inv_smooth, input_scale, zero_point)
    return kernel.int8_requantize(torch._int_mm(q, rows.t()), mult, row_max, bias)
