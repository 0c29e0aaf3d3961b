"""RMSNorm as Llama defines it: normalise in float32, scale in the model dtype.

With a residual (vLLM's interface) the norm first adds it in: `norm(x, residual)` returns
(norm(x + residual), x + residual), one pass where the compiled CPU op runs
(layers/cpu_ops.py), which then writes both in place. That op sums the squares in torch's
own order, so its result is torch's bit for bit; it is checked against torch once, when the
engine starts (layers/selector.py), and where it differs (another torch, another vector
width) torch's ops stay.
"""

from __future__ import annotations

from functools import cache

import torch

from llm_engine.layers import cpu_ops
from llm_engine.layers.backends import BackendLayer, Backends


def torch_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    dtype = x.dtype
    x32 = x.float()
    x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x32.to(dtype)


@cache
def exact_kernel_lanes() -> int | None:
    """The vector width (8 or 16 lanes) with which the compiled RMSNorm equals
    torch_rms_norm here, or None (logged) where neither does.

    torch's sum kernel need not use the CPU's widest vectors (on AVX-512 CPUs torch 2.13 sums
    with AVX2's 8 lanes), so the width is found by trying both."""
    kernel = cpu_ops.load_kernel()
    if kernel is None:
        return None
    gen = torch.Generator().manual_seed(0)
    # Rows alone and split between threads; widths with a scalar tail, a partial group of
    # vectors, and enough vectors for the summation's cascade to carry; every width under
    # torch's serial-reduction size (32,768 elements a row), as hidden sizes are.
    cases = [(torch.randn(rows, dim, generator=gen) * 3, torch.randn(dim, generator=gen))
             for rows, dim in ((1, 576), (3, 960), (300, 576), (2, 4100), (1, 16_384 + 8))]
    return cpu_ops.exact_width(
        "RMSNorm", lambda x, w, lanes: kernel.rms_norm(x, cpu_ops.NONE, w, 1e-5, lanes),
        lambda x, w: torch_rms_norm(x, w, 1e-5), cases, (8, 16))


class RMSNorm(BackendLayer):
    def __init__(self, hidden_size: int, eps: float) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def bind(self, backends: Backends) -> None:
        # The compiled norm and the width at which it equals torch's; None: torch's ops.
        self.fused_norm = backends.fused_ops.rms_norm if backends.fused_ops is not None \
            and backends.norm_lanes else None
        self.lanes = backends.norm_lanes

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None
                ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        if self.fused_norm is not None and x.is_contiguous() and (
                residual is None or residual.is_contiguous()):
            if residual is None:
                return self.fused_norm(x, cpu_ops.NONE, self.weight, self.eps, self.lanes)
            self.fused_norm(x, residual, self.weight, self.eps, self.lanes)
            return x, residual
        if residual is None:
            return torch_rms_norm(x, self.weight, self.eps)
        residual = x + residual
        return torch_rms_norm(residual, self.weight, self.eps), residual
