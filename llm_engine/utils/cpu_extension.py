"""The engine's CPU kernels (llm_engine/csrc/*.cpp), compiled once per ISA level and torch build.

Each kernel names the ISA levels it is built for (utils/cpu_isa.py); the one loaded is the
highest of them the selected level allows. A build lands in torch's extension cache
(~/.cache/torch_extensions, or TORCH_EXTENSIONS_DIR) under a name that carries a hash of
what made it: the source, the flags, the level, the torch build and the interpreter. So a
changed source or another virtualenv gets its own build instead of rebuilding another's
(~10 s each), and only the first process on a machine pays for one. Where a kernel cannot be
built (no compiler, no ninja, flags the compiler refuses) or no level of it fits this CPU,
the caller keeps its torch path; the reason is logged once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import torch

from llm_engine.utils.cpu_isa import CpuIsa, selected_isa

logger = logging.getLogger(__name__)

CSRC = Path(__file__).resolve().parent.parent / "csrc"
# Hex digits of the build hash in a kernel's cache name: enough that two builds never meet.
HASH_CHARS = 16


@dataclass(frozen=True)
class CpuKernel:
    """One C++ source under llm_engine/csrc/ and how to build it."""

    source: str  # file name under csrc/
    levels: tuple[CpuIsa, ...]  # the ISA levels it is built for
    cflags: tuple[str, ...]  # besides the level's -m flags
    what: str  # for the log: "CPU {what} kernel ..."
    fallback: str  # what runs instead, for the log

    def __post_init__(self) -> None:
        if not (CSRC / self.source).is_file():
            raise ValueError(f"CpuKernel: no source {CSRC / self.source}")
        if not self.levels:
            raise ValueError(f"CpuKernel {self.source}: name at least one ISA level")

    @property
    def stem(self) -> str:
        return Path(self.source).stem

    def level_for(self, isa: CpuIsa) -> CpuIsa | None:
        """The highest of this kernel's levels that code at `isa` may run, or None."""
        fitting = [level for level in self.levels if level <= isa]
        return max(fitting, key=lambda level: level.rank) if fitting else None

    def flags(self, level: CpuIsa) -> list[str]:
        return [*level.cflags, *self.cflags]

    def build_name(self, level: CpuIsa) -> str:
        """The extension's name in torch's cache: the kernel, its level, a hash of the build."""
        digest = hashlib.sha256()
        for part in ((CSRC / self.source).read_text(), *self.flags(level), level.value,
                     torch.__version__, str(torch.version.git_version),
                     str(Path(torch.__file__).parent), sys.version,
                     os.environ.get("CXX", "c++")):
            digest.update(part.encode())
            digest.update(b"\0")
        return f"finrag_{self.stem}_{level.value}_{digest.hexdigest()[:HASH_CHARS]}"


def load(kernel: CpuKernel, isa: CpuIsa | None = None) -> ModuleType | None:
    """`kernel` built (or loaded from the cache) at the highest of its levels that `isa` (by
    default the selected level) allows; None, logged, where there is none or the build fails.

    Build with -fopenmp wherever the source uses `at::parallel_for`: it is a header
    template that runs the whole range on the calling thread in an extension built without
    OpenMP (the decode-attention kernel ran on one core that way, 2.0-2.4x slower at 64
    rows on two: benchmarks/decode_attention.py)."""
    isa = selected_isa() if isa is None else isa
    level = kernel.level_for(isa)
    if level is None:
        logger.info("CPU %s kernel: built for %s, this process runs at %s; %s", kernel.what,
                    ", ".join(lv.value for lv in kernel.levels), isa.value, kernel.fallback)
        return None
    name = kernel.build_name(level)
    try:
        from torch.utils.cpp_extension import get_default_build_root, load_inline

        if not _cached(name, get_default_build_root()):
            print(f"llm_engine: compiling the CPU {kernel.what} kernel for {level.value} "
                  "(once a machine, ~10 s)", file=sys.stderr)
        return load_inline(name=name, cpp_sources=[(CSRC / kernel.source).read_text()],
                           extra_cflags=kernel.flags(level), no_implicit_headers=True,
                           verbose=False)
    except Exception as exc:  # no compiler, no ninja, unsupported flags
        logger.warning("CPU %s kernel unavailable at %s (%s); %s", kernel.what, level.value, exc,
                       kernel.fallback)
        return None


def _cached(name: str, default_root: str) -> bool:
    """Whether a build of extension `name` is in torch's extension cache (a cached one loads
    in well under a second; the names carry a hash of what made the build)."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    # By default the cache has a folder per Python version and accelerator (py311_cpu).
    dirs = [Path(root) / name] if root else Path(default_root).glob(f"*/{name}")
    return any(any(d.glob("*.so")) for d in dirs)
