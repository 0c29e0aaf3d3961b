"""The CPU kernels' build helper: one cache name per source, flags, ISA level and torch build
(so two installs do not rebuild each other's kernels), the highest level of a kernel that the
selected one allows, and the "compiling" notice only where no build is cached."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from llm_engine.layers import cpu_ops
from llm_engine.layers.attention import paged_attention_cpu, prefill_attention_bf16_cpu
from llm_engine.utils import cpu_extension
from llm_engine.utils.cpu_extension import CpuKernel, _cached
from llm_engine.utils.cpu_isa import CpuIsa


def test_a_build_is_cached_only_where_its_library_is(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    (tmp_path / "py311_cpu" / "ext_a").mkdir(parents=True)
    (tmp_path / "py311_cpu" / "ext_a" / "ext_a.so").write_bytes(b"")
    (tmp_path / "py311_cpu" / "ext_b").mkdir()  # a build that failed or is under way
    assert _cached("ext_a", str(tmp_path))
    assert not _cached("ext_b", str(tmp_path))
    assert not _cached("ext_c", str(tmp_path))
    # TORCH_EXTENSIONS_DIR: the extensions' folders directly under it.
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "py311_cpu"))
    assert _cached("ext_a", "/nonexistent")
    assert not _cached("ext_b", "/nonexistent")


def test_the_cache_name_hashes_what_made_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = paged_attention_cpu.KERNEL
    name = kernel.build_name(CpuIsa.AVX2)
    assert name.startswith("finrag_paged_attention_avx2_")
    assert name == kernel.build_name(CpuIsa.AVX2)  # stable
    others = {kernel.build_name(CpuIsa.AVX512),
              CpuKernel(kernel.source, kernel.levels, (*kernel.cflags, "-DX"), kernel.what,
                        kernel.fallback).build_name(CpuIsa.AVX2)}
    monkeypatch.setattr(torch, "__version__", "0.0.0+another")
    others.add(kernel.build_name(CpuIsa.AVX2))
    monkeypatch.undo()
    monkeypatch.setattr(torch, "__file__", "/another/venv/torch/__init__.py")
    others.add(kernel.build_name(CpuIsa.AVX2))
    assert len(others) == 4 and name not in others


def test_a_kernel_loads_at_the_highest_of_its_levels_the_selection_allows() -> None:
    assert cpu_ops.KERNEL.level_for(CpuIsa.AVX512_VNNI_BF16) == CpuIsa.AVX512
    assert cpu_ops.KERNEL.level_for(CpuIsa.AVX2) == CpuIsa.AVX2
    assert cpu_ops.KERNEL.level_for(CpuIsa.GENERIC) is None
    assert paged_attention_cpu.KERNEL.level_for(CpuIsa.GENERIC) == CpuIsa.GENERIC
    assert prefill_attention_bf16_cpu.KERNEL.level_for(CpuIsa.AVX512_VNNI) is None
    # Below its levels a kernel is not built at all: the torch path stays.
    assert cpu_extension.load(prefill_attention_bf16_cpu.KERNEL, CpuIsa.AVX2) is None


def test_a_kernel_names_a_source_that_exists() -> None:
    with pytest.raises(ValueError, match="no source .*nothing.cpp"):
        CpuKernel("nothing.cpp", (CpuIsa.GENERIC,), (), "test", "torch")
    with pytest.raises(ValueError, match="at least one ISA level"):
        CpuKernel("cpu_ops.cpp", (), (), "test", "torch")


@pytest.mark.parametrize("kv_dtype,attention,int8", [
    (torch.float32, "auto", True), (torch.bfloat16, "auto", False), (torch.float32, "torch", False)])
def test_the_kernels_built_side_by_side_are_the_ones_the_start_loads(
        monkeypatch: pytest.MonkeyPatch, kv_dtype: torch.dtype, attention: str, int8: bool) -> None:
    """resolve_backends compiles its kernels a thread each (a first start's ~30 s builds at
    once on 2 cores), then takes them in order: the same kernels, none built for nothing."""
    import threading

    from llm_engine.layers.attention import prefill_attention_cpu
    from llm_engine.layers.backends import AttentionBackend
    from llm_engine.layers.quantization import int8_vnni_cpu
    from llm_engine.layers.selector import resolve_backends

    calls: dict[str, set[str]] = {"pool": set(), "start": set()}
    modules = (cpu_ops, paged_attention_cpu, prefill_attention_bf16_cpu, prefill_attention_cpu,
               int8_vnni_cpu)

    def counted(load, name: str):
        def call():
            main = threading.current_thread() is threading.main_thread()
            calls["start" if main else "pool"].add(name)
            return load()
        return call

    for module in modules:
        monkeypatch.setattr(module, "load_kernel",
                            counted(module.load_kernel, module.__name__.rsplit(".", 1)[-1]))
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    resolve_backends(torch.device("cpu"), torch.float32, kv_dtype, 64, AttentionBackend(attention),
                     int8)
    assert calls["pool"] and calls["pool"] <= calls["start"]
    # Where the CPU has no AVX-512 BF16 the bf16 prefill kernel is None and the start falls
    # back to the fp32 one, which was not built ahead.
    assert calls["start"] - calls["pool"] <= {"prefill_attention_cpu"}
