"""The x86 instruction-set levels the CPU kernels are built for, and the one this process runs.

Each kernel (llm_engine/csrc/) is compiled for named levels with explicit -m flags, never
for whatever CPU compiles it: a build made on one machine then runs on any machine of its level, and a
cache or image made on an AVX-512 host cannot crash an AVX2 host with an illegal
instruction. The level is chosen at run time from the running CPU's flags (Linux's
/proc/cpuinfo, else torch's own capability probe); FINRAG_CPU_ISA names a lower one, e.g.
to run and test the AVX2 builds on an AVX-512 machine.
"""

from __future__ import annotations

import logging
import os
import platform
from enum import Enum
from functools import cache
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

# The switch: a level name (CpuIsa's values), at most the running CPU's.
ISA_ENV = "FINRAG_CPU_ISA"
_CPUINFO = Path("/proc/cpuinfo")
_X86 = ("x86_64", "amd64", "i386", "i686")


class CpuIsa(Enum):
    """Instruction-set levels, lowest first; each includes those before it."""

    GENERIC = "generic"  # the compiler's default target: no vector extension named
    AVX2 = "avx2"
    AVX512 = "avx512"
    AVX512_VNNI = "avx512_vnni"
    AVX512_VNNI_BF16 = "avx512_vnni_bf16"

    @property
    def rank(self) -> int:
        return list(CpuIsa).index(self)

    def __le__(self, other: CpuIsa) -> bool:
        return self.rank <= other.rank

    def __lt__(self, other: CpuIsa) -> bool:
        return self.rank < other.rank

    @property
    def cpu_flags(self) -> frozenset[str]:
        """The /proc/cpuinfo flags a CPU needs to run code built at this level."""
        return frozenset(f for level in list(CpuIsa)[: self.rank + 1] for f in _LEVEL_FLAGS[level])

    @property
    def cflags(self) -> tuple[str, ...]:
        """The compiler's -m flags for this level (and every level below it)."""
        return tuple(f for level in list(CpuIsa)[: self.rank + 1] for f in _LEVEL_CFLAGS[level])


# What each level adds to the one below it: the CPU's flags, the compiler's.
_LEVEL_FLAGS: dict[CpuIsa, tuple[str, ...]] = {
    CpuIsa.GENERIC: (),
    CpuIsa.AVX2: ("avx", "avx2", "fma", "f16c"),
    CpuIsa.AVX512: ("avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"),
    CpuIsa.AVX512_VNNI: ("avx512_vnni",),
    CpuIsa.AVX512_VNNI_BF16: ("avx512_bf16",),
}
_LEVEL_CFLAGS: dict[CpuIsa, tuple[str, ...]] = {
    CpuIsa.GENERIC: (),
    CpuIsa.AVX2: ("-mavx", "-mavx2", "-mfma", "-mf16c"),
    CpuIsa.AVX512: ("-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx512cd"),
    CpuIsa.AVX512_VNNI: ("-mavx512vnni",),
    CpuIsa.AVX512_VNNI_BF16: ("-mavx512bf16",),
}
# torch's capability probe, where /proc/cpuinfo is not there to read (not Linux).
_TORCH_CAPABILITY = {"AVX512": CpuIsa.AVX512, "AVX2": CpuIsa.AVX2}


@cache
def cpu_flags() -> frozenset[str]:
    """The running CPU's flags as Linux lists them; empty where it does not."""
    try:
        text = _CPUINFO.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def cpu_has(*flags: str) -> bool:
    """Whether Linux lists every one of `flags` for this CPU (False where it lists none)."""
    return bool(cpu_flags()) and set(flags) <= cpu_flags()


@cache
def host_isa() -> CpuIsa:
    """The highest level the running CPU executes."""
    if platform.machine().lower() not in _X86:
        return CpuIsa.GENERIC
    flags = cpu_flags()
    if not flags:
        return _TORCH_CAPABILITY.get(torch.backends.cpu.get_cpu_capability(), CpuIsa.GENERIC)
    return max((level for level in CpuIsa if level.cpu_flags <= flags), key=lambda lv: lv.rank)


def parse_isa(name: str) -> CpuIsa:
    """A level by name; ValueError naming FINRAG_CPU_ISA and the levels where it is none."""
    try:
        return CpuIsa(name.strip().lower())
    except ValueError:
        names = ", ".join(level.value for level in CpuIsa)
        raise ValueError(f"{ISA_ENV}={name!r} is no ISA level; use one of {names}") from None


@cache
def selected_isa() -> CpuIsa:
    """The level the CPU kernels are built and loaded at: FINRAG_CPU_ISA where set (refused
    above what this CPU runs, which would die of an illegal instruction), else the host's."""
    host = host_isa()
    requested = os.environ.get(ISA_ENV, "").strip()
    if not requested:
        return host
    isa = parse_isa(requested)
    if host < isa:
        raise ValueError(f"{ISA_ENV}={isa.value} but this CPU runs at most {host.value}: "
                         f"unset it or name a level up to {host.value}")
    logger.info("CPU kernels at ISA level %s (%s; this CPU runs %s)", isa.value, ISA_ENV,
                host.value)
    return isa
