"""The kernels the layers run, chosen once when the engine starts (layers/selector.py).

A layer does not ask at each call which kernel it may use: the engine resolves every choice
once (the CPU kernels' ISA level, the decode and prefill attention, the fused elementwise
ops and their vector widths, the fp32 GEMM, the int8 linear and its activations' range),
logs it, and hands each layer its callables
through `bind`. A layer that was never bound (a test's, a tool's) runs torch's ops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch

from llm_engine.config import AttentionBackend
from llm_engine.utils.cpu_isa import CpuIsa

# (q [T, heads, dim], k, v [ctx, kv_heads, dim], scale) -> [T, heads, dim]
PrefillAttention = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor]


@dataclass(frozen=True)
class Backends:
    """Every kernel choice of one engine; the defaults are torch's ops throughout."""

    isa: CpuIsa | None = None  # the CPU kernels' ISA level; None off CPU
    decode: AttentionBackend = AttentionBackend.TORCH
    decode_kernel: Callable[..., torch.Tensor] | None = None
    # A prefill chunk with nothing cached before it, and one after a cached context (a
    # prefix-cache hit, an earlier chunk); None: torch's SDPA.
    prefill: PrefillAttention | None = None
    prefill_after_context: PrefillAttention | None = None
    # The fused fp32 elementwise ops (layers/cpu_ops.py), and the vector widths at which its
    # RMSNorm and SiluAndMul equal torch's (None: that op stays torch's).
    fused_ops: ModuleType | None = None
    norm_lanes: int | None = None
    silu_lanes: int | None = None
    int8_kernel: ModuleType | None = None  # layers/quantization/int8_vnni_cpu.py's; None: fbgemm
    # 7-bit activations into fbgemm (layers/quantization/quantization.py): right on every CPU; 8-bit only
    # where the selected ISA level adds int8 products straight into int32 (VNNI).
    int8_reduce_range: bool = True
    # The fp32 linears through oneDNN's GEMM with bucketed rows (layers/linear.py); False:
    # torch's F.linear.
    onednn_linear: bool = False

    def describe(self) -> str:
        """One line for the log."""
        def name(fn: Callable | None, default: str) -> str:
            return default if fn is None else getattr(fn, "__name__", repr(fn))

        fused = "off" if self.fused_ops is None else (
            f"on (RMSNorm {self.norm_lanes or 'torch'} lanes, SiluAndMul "
            f"{self.silu_lanes or 'torch'} lanes)")
        return (f"CPU ISA {'none' if self.isa is None else self.isa.value}; decode attention "
                f"{self.decode.value}; prefill attention {name(self.prefill, 'torch SDPA')}, "
                f"after a context {name(self.prefill_after_context, 'torch SDPA')}; fused "
                f"elementwise ops {fused}; fp32 linear "
                f"{'oneDNN, bucketed rows' if self.onednn_linear else 'torch'}; int8 linear "
                f"{'fbgemm' if self.int8_kernel is None else 'VNNI kernel + oneDNN'}, "
                f"{7 if self.int8_reduce_range else 8}-bit activations")


TORCH_BACKENDS = Backends()


class BackendLayer(torch.nn.Module):
    """A layer whose kernels come from the engine's Backends; torch's until `bind`."""

    def __init__(self) -> None:
        super().__init__()
        self.bind(TORCH_BACKENDS)

    def bind(self, backends: Backends) -> None:
        """Take this layer's callables from `backends`."""
        raise NotImplementedError


def bind_backends(model: torch.nn.Module, backends: Backends) -> None:
    """Hand every layer of `model` its kernels."""
    for module in model.modules():
        if isinstance(module, BackendLayer):
            module.bind(backends)
