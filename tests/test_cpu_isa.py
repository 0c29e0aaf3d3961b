"""The CPU kernels' ISA levels: named -m flags per level, the level read from the running CPU,
and FINRAG_CPU_ISA to pick a lower one (refused above what the CPU runs, or unknown)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from llm_engine.layers.selector import resolve_backends
from llm_engine.utils import cpu_isa
from llm_engine.utils.cpu_isa import ISA_ENV, CpuIsa, cpu_has, host_isa, selected_isa


@pytest.fixture
def fresh_selection(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """selected_isa() read anew under the test's environment, and anew after it."""
    selected_isa.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    selected_isa.cache_clear()


def test_levels_are_ordered_and_each_adds_flags() -> None:
    levels = list(CpuIsa)
    assert levels[0] == CpuIsa.GENERIC and levels[-1] == CpuIsa.AVX512_VNNI_BF16
    for lower, higher in zip(levels, levels[1:], strict=False):
        assert lower < higher and lower <= higher and not higher <= lower
        assert set(lower.cflags) < set(higher.cflags)
        assert lower.cpu_flags < higher.cpu_flags
    assert CpuIsa.GENERIC.cflags == ()
    assert {"-mavx2", "-mfma"} <= set(CpuIsa.AVX2.cflags)
    assert "-mavx512vnni" in CpuIsa.AVX512_VNNI.cflags
    assert "-mavx512bf16" in CpuIsa.AVX512_VNNI_BF16.cflags
    assert all(flag.startswith("-m") and "march" not in flag for isa in CpuIsa for flag in isa.cflags)


def test_the_host_level_is_the_highest_whose_flags_the_cpu_lists() -> None:
    host = host_isa()
    flags = cpu_isa.cpu_flags()
    if flags:  # Linux
        assert host.cpu_flags <= flags
        above = [level for level in CpuIsa if host < level]
        assert all(not level.cpu_flags <= flags for level in above)


def test_without_the_switch_the_host_level_is_used(fresh_selection: pytest.MonkeyPatch) -> None:
    fresh_selection.delenv(ISA_ENV, raising=False)
    assert selected_isa() == host_isa()


@pytest.mark.parametrize("name", ["generic", "GENERIC", " generic "])
def test_the_switch_names_a_lower_level(name: str, fresh_selection: pytest.MonkeyPatch) -> None:
    fresh_selection.setenv(ISA_ENV, name)
    assert selected_isa() == CpuIsa.GENERIC


def test_a_level_above_the_cpu_is_refused(fresh_selection: pytest.MonkeyPatch) -> None:
    above = [level for level in CpuIsa if host_isa() < level]
    if not above:
        pytest.skip(f"this CPU runs the highest level, {host_isa().value}")
    fresh_selection.setenv(ISA_ENV, above[-1].value)
    with pytest.raises(ValueError, match=rf"^{ISA_ENV}={above[-1].value} but this CPU runs at "
                                         rf"most {host_isa().value}"):
        selected_isa()


def test_an_unknown_level_is_refused_with_the_names(fresh_selection: pytest.MonkeyPatch) -> None:
    fresh_selection.setenv(ISA_ENV, "sse9")
    with pytest.raises(ValueError, match=rf"^{ISA_ENV}='sse9' is no ISA level; use one of "
                                         r"generic, avx2, avx512, avx512_vnni, avx512_vnni_bf16$"):
        selected_isa()


def test_the_int8_activations_range_follows_the_selected_level(
        fresh_selection: pytest.MonkeyPatch) -> None:
    """fbgemm gets 8-bit activations only where the selected level has VNNI (else a pair of
    products saturates int16): the host's level decides as the CPU's flags did, and a level
    FINRAG_CPU_ISA names below it takes 7 bits, as a CPU of that level would. (A bf16 engine
    compiles no kernel: only the choices are resolved.)"""
    def backends():
        return resolve_backends(torch.device("cpu"), torch.bfloat16, torch.bfloat16, 64)

    fresh_selection.delenv(ISA_ENV, raising=False)
    host = backends()
    assert host.isa == host_isa()
    assert host.int8_reduce_range == (not (cpu_has("avx512_vnni") or cpu_has("avx_vnni")))
    assert not host.onednn_linear  # oneDNN's GEMM is the fp32 engines'
    if host_isa() == CpuIsa.GENERIC:
        pytest.skip("this CPU runs no level below its own")
    selected_isa.cache_clear()
    fresh_selection.setenv(ISA_ENV, CpuIsa.GENERIC.value)
    lowered = backends()
    assert lowered.isa == CpuIsa.GENERIC and lowered.int8_reduce_range
    assert "7-bit activations" in lowered.describe()
