"""Resolves the engine's kernels once, at start (as vLLM's attention-backend selector does).

Every choice the layers used to make per call or at import lives here: the CPU kernels' ISA
level (utils/cpu_isa.py, FINRAG_CPU_ISA), the decode attention (EngineConfig.attention_backend),
the prefill attention by KV-cache dtype, the fused fp32 elementwise ops and the widths at
which they equal torch's, the fp32 GEMM (oneDNN's or torch's), and the int8 linear's VNNI
kernel and its activations' range (8 bits with VNNI, else 7), both by the selected ISA
level. The result is one Backends, logged on one INFO line, which the model runner hands to
the layers (backends.bind_backends).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import torch

from llm_engine.layers import activation, cpu_ops, layernorm
from llm_engine.layers.attention import (
    paged_attention_cpu,
    prefill_attention_bf16_cpu,
    prefill_attention_cpu,
)
from llm_engine.layers.backends import AttentionBackend, Backends, PrefillAttention
from llm_engine.layers.quantization import int8_vnni_cpu
from llm_engine.utils.cpu_isa import CpuIsa, cpu_has, host_isa, selected_isa

logger = logging.getLogger(__name__)

# Head dims the bf16 prefill kernel's tiles are written for.
BF16_PREFILL_HEAD_DIMS = (64, 128)


def resolve_backends(device: torch.device, dtype: torch.dtype, kv_dtype: torch.dtype,
                     head_dim: int, attention: AttentionBackend = AttentionBackend.AUTO,
                     int8: bool = False) -> Backends:
    """The kernels for an engine of these settings (ValueError where `attention` names one
    that cannot run here). int8: whether its linears are int8 (builds the VNNI kernel)."""
    on_cpu = device.type == "cpu"
    cpu_fp32 = on_cpu and dtype == torch.float32
    isa = selected_isa() if on_cpu else None
    if cpu_fp32:
        _build_side_by_side(_cpu_fp32_kernels(kv_dtype, head_dim, attention, int8))
    fused = cpu_ops.load_kernel() if cpu_fp32 else None
    decode, decode_kernel = _decode_attention(attention, device, cpu_fp32)
    prefill = _cpu_prefill(dtype, kv_dtype, head_dim) if on_cpu else None
    return Backends(
        isa=isa, decode=decode, decode_kernel=decode_kernel, prefill=prefill,
        # After a context an fp32 cache stays on torch's SDPA, which the fp32 kernel beat on
        # long chunks only (1.1-1.5x, slower at 32 tokens: benchmarks/prefill_attention.py);
        # a bf16 cache takes the same kernel as a chunk without context.
        prefill_after_context=prefill if kv_dtype == torch.bfloat16 else None,
        fused_ops=fused,
        norm_lanes=layernorm.exact_kernel_lanes() if fused is not None else None,
        silu_lanes=activation.exact_kernel_lanes() if fused is not None else None,
        int8_kernel=int8_vnni_cpu.load_kernel() if int8 and cpu_fp32 else None,
        int8_reduce_range=not _int8_vnni(isa),
        onednn_linear=cpu_fp32 and _onednn_gemm())


def select_backends(device: torch.device, dtype: torch.dtype, kv_dtype: torch.dtype,
                    head_dim: int, attention: AttentionBackend, int8: bool) -> Backends:
    """resolve_backends, logged on one INFO line."""
    backends = resolve_backends(device, dtype, kv_dtype, head_dim, attention, int8)
    host = f" (this CPU runs {host_isa().value})" if backends.isa is not None else ""
    logger.info("backends: %s%s", backends.describe(), host)
    return backends


def _int8_vnni(isa: CpuIsa | None) -> bool:
    """Whether fbgemm adds int8 products straight into int32 at the selected level: AVX-512
    VNNI, or AVX-VNNI (a CPU flag of AVX2-level CPUs; not where FINRAG_CPU_ISA lowered the
    level below the host's)."""
    if isa is None:
        return False
    return CpuIsa.AVX512_VNNI <= isa or (isa == host_isa() and cpu_has("avx_vnni"))


def _onednn_gemm() -> bool:
    """Whether torch has oneDNN's fp32 linear. It runs 1.25-1.75x faster than the MKL path
    behind F.linear on the AMD EPYC (AVX-512) machines we serve from: measured 197 vs 156
    GFLOP/s at 2048x576x3072 and 160 vs 91 GFLOP/s for the 64-row LM head. oneDNN picks
    its instructions for the CPU itself (ONEDNN_MAX_CPU_ISA bounds them, not
    FINRAG_CPU_ISA), so no level below turns it off."""
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def _cpu_fp32_kernels(kv_dtype: torch.dtype, head_dim: int, attention: AttentionBackend,
                      int8: bool) -> list[Callable[[], object]]:
    """The loaders of the compiled kernels an fp32 CPU engine of these settings takes (what
    resolve_backends and the helpers below ask for first)."""
    loaders: list[Callable[[], object]] = [cpu_ops.load_kernel]
    if attention in (AttentionBackend.AUTO, AttentionBackend.CPU_KERNEL):
        loaders.append(paged_attention_cpu.load_kernel)
    bf16_prefill = kv_dtype == torch.bfloat16 and head_dim in BF16_PREFILL_HEAD_DIMS
    loaders.append(prefill_attention_bf16_cpu.load_kernel if bf16_prefill
                   else prefill_attention_cpu.load_kernel)
    if int8:
        loaders.append(int8_vnni_cpu.load_kernel)
    return loaders


def _build_side_by_side(loaders: list[Callable[[], object]]) -> None:
    """Run the kernels' loaders (each cached once a process) a thread each, one per core: on
    a machine's first start each compiles for ~30 s in a compiler process of its own, and one
    after the other four took two minutes on 2 cores. Cached builds load in well under a
    second either way; what a loader returns is read again from its cache in order."""
    workers = min(len(loaders), os.cpu_count() or 1)
    if workers < 2:
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda load: load(), loaders))


def _decode_attention(attention: AttentionBackend, device: torch.device, cpu_fp32: bool
                      ) -> tuple[AttentionBackend, Callable[..., torch.Tensor] | None]:
    """The decode attention `attention` resolves to here, and its kernel (None: torch's)."""
    triton = _triton_kernel(device) if attention in (AttentionBackend.AUTO,
                                                     AttentionBackend.TRITON) else None
    if triton is not None:
        return AttentionBackend.TRITON, triton
    if attention == AttentionBackend.TRITON:
        raise ValueError("attention_backend='triton' but Triton is missing or its kernel "
                         "failed to compile (see the warning above); use 'torch' or 'auto'")
    if attention in (AttentionBackend.AUTO, AttentionBackend.CPU_KERNEL) and cpu_fp32 \
            and paged_attention_cpu.load_kernel() is not None:
        return AttentionBackend.CPU_KERNEL, paged_attention_cpu.paged_decode
    if attention == AttentionBackend.CPU_KERNEL:
        raise ValueError("attention_backend='cpu_kernel' but the kernel could not be "
                         "compiled (see the warning above); use 'torch' or 'auto'")
    return AttentionBackend.TORCH, None


def _cpu_prefill(dtype: torch.dtype, kv_dtype: torch.dtype, head_dim: int) -> PrefillAttention:
    """The CPU prefill attention: at bf16 with a bf16 cache where the CPU has AVX-512 BF16,
    else the compiled fp32 kernel, else its Python loop (also for activations not in fp32)."""
    if dtype != torch.float32:
        return prefill_attention_cpu.blocked_loop
    if kv_dtype == torch.bfloat16 and head_dim in BF16_PREFILL_HEAD_DIMS \
            and prefill_attention_bf16_cpu.load_kernel() is not None:
        return prefill_attention_bf16_cpu.compiled_bf16_prefill
    if prefill_attention_cpu.load_kernel() is not None:
        return prefill_attention_cpu.compiled_prefill
    return prefill_attention_cpu.blocked_loop


def _triton_kernel(device: torch.device) -> Callable[..., torch.Tensor] | None:
    """The Triton decode kernel on CUDA where Triton imports and compiles, else None."""
    if device.type != "cuda":
        return None
    try:
        from llm_engine.layers.attention.paged_attention_triton import load_kernel
    except ImportError as exc:
        logger.warning("Triton unavailable (%s); using the torch attention path", exc)
        return None
    return load_kernel(device)
