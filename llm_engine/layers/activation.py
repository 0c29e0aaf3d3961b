"""SwiGLU's gate, vLLM's SiluAndMul: silu(gate) * up of a packed [T, 2 * D] (gate | up) input.

On CPU in fp32 it is one pass (layers/cpu_ops.py) that computes what F.silu(gate) * up does,
bit for bit: the same exp (Sleef's, at the vector width torch's kernel runs at) in the same
loop. The width is found by checking against torch once, when the engine starts
(layers/selector.py); where neither width agrees (another torch, another CPU) torch's ops stay.
"""

from __future__ import annotations

from functools import cache

import torch
import torch.nn.functional as F

from llm_engine.layers import cpu_ops
from llm_engine.layers.backends import BackendLayer, Backends


def torch_silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


@cache
def exact_kernel_lanes() -> int | None:
    """The vector width (16 or 8 lanes) with which the compiled op equals torch_silu_and_mul
    here, or None (logged) where neither does. torch's silu runs at AVX-512's 16 lanes where
    the CPU has them (its sum does not: layers/layernorm.py), so the width is found by trying."""
    kernel = cpu_ops.load_kernel()
    if kernel is None:
        return None
    gen = torch.Generator().manual_seed(0)
    # Rows few enough that torch runs them on one thread (a split of its flat range mid-row
    # would move where its vector loop ends); widths whose scalar tails differ by width
    # (48: none at 8 lanes, 16 elements at 16), where std::exp and Sleef's exp disagree on
    # some of them.
    cases = [(torch.randn(rows, 2 * dim, generator=gen) * 4,)
             for rows, dim in ((1, 1536), (64, 48), (40, 112), (3, 1000), (2, 8192 + 5))]
    return cpu_ops.exact_width("silu_and_mul", kernel.silu_and_mul, torch_silu_and_mul, cases,
                               (16, 8))


class SiluAndMul(BackendLayer):
    def bind(self, backends: Backends) -> None:
        # The compiled op and the width at which it equals torch's; None: torch's ops.
        self.fused = backends.fused_ops.silu_and_mul if backends.fused_ops is not None \
            and backends.silu_lanes else None
        self.lanes = backends.silu_lanes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fused is not None and x.is_contiguous():
            return self.fused(x, self.lanes)
        return torch_silu_and_mul(x)
