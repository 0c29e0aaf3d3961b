"""Elementwise passes of the CPU forward, each fused into one pass over memory.

torch runs `q * cos + rotate_half(q) * sin` as six kernels (and looks the cos/sin rows up
again in each of the 30 layers), RMSNorm with its residual add as eight, SwiGLU's
silu(gate) * up as two, the K/V writes as two indexed assignments, and the int8 linear's
row normalization (smoothing, max |x|, the division) and rescaling (row max, bias) as six
more: each reads and writes the whole activation, and at one row each is a dispatch of a
few microseconds. Here each is one loop over the rows, split between the threads
(benchmarks/cpu_kernels.py measures the engine with and without them).

They compute what the torch expressions compute, bit for bit: the same fp32 operations,
one rounding each, in the same order (compiled with -ffp-contract=off and without
-ffast-math, so no multiply-add is fused and no division becomes a reciprocal); a row max,
exact in any order; the RMSNorm's sum of squares in the order of torch's sum kernel and
silu's exp from the same Sleef function (layers/layernorm.py and layers/activation.py check
each against torch at first use). So the fp32 engine stays token-exact with
transformers and the int8 engine gives the tokens it gave before (tests/test_cpu_ops.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import cache
from types import ModuleType

import torch

from llm_engine.utils import cpu_extension
from llm_engine.utils.cpu_isa import CpuIsa

logger = logging.getLogger(__name__)

# What the ops take for "no tensor" (no residual, no smoothing, no bias).
NONE = torch.empty(0)

KERNEL = cpu_extension.CpuKernel(
    "cpu_ops.cpp", (CpuIsa.AVX2, CpuIsa.AVX512),
    # No -ffast-math and no fused multiply-adds: either would change the roundings.
    ("-O3", "-ffp-contract=off", "-fopenmp"), "elementwise", "using torch's elementwise ops")



@cache
def load_kernel() -> ModuleType | None:
    """The compiled ops (llm_engine/csrc/cpu_ops.cpp), or None where they cannot be built
    (logged once)."""
    return cpu_extension.load(KERNEL)


def exact_width(what: str, compiled: Callable[..., torch.Tensor],
                reference: Callable[..., torch.Tensor], cases: Sequence[tuple],
                widths: Sequence[int]) -> int | None:
    """The first vector width in `widths` at which `compiled(*case, width)` equals
    `reference(*case)` on every case, bit for bit; None (logged) where none does.

    For the ops whose result depends on how torch runs its own kernel (the order of its
    sum, where its vector loop ends), which can change with the torch build and the CPU."""
    for lanes in widths:
        try:
            if all(torch.equal(compiled(*case, lanes), reference(*case)) for case in cases):
                return lanes
        except RuntimeError:  # no vectors of that width in this build
            continue
    logger.warning("compiled %s differs from torch's at %s lanes (CPU capability %s); using "
                   "torch's ops", what, " and ".join(map(str, widths)),
                   torch.backends.cpu.get_cpu_capability())
    return None
