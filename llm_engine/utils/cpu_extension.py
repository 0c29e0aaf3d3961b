"""The engine's CPU kernels, compiled once with torch's C++ extension loader.

The build lands in torch's extension cache (~/.cache/torch_extensions), so only the first
process on a machine pays its ~30 s. Where it cannot be built (no compiler, no ninja, flags
the compiler refuses) the caller keeps its torch path; the reason is logged once.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from types import ModuleType

logger = logging.getLogger(__name__)


def build(name: str, source: str, functions: list[str], cflags: list[str], what: str,
          fallback: str) -> ModuleType | None:
    """`source` compiled as extension `name` exposing `functions`, or None (logged:
    "CPU {what} kernel unavailable (...); {fallback}").

    Build with -fopenmp wherever the source uses `at::parallel_for`: it is a header
    template that runs the whole range on the calling thread in an extension built without
    OpenMP (the decode-attention kernel ran on one core that way, 2.0-2.4x slower at 64
    rows on two: benchmarks/decode_attention.py)."""
    try:
        from torch.utils.cpp_extension import get_default_build_root, load_inline

        if not _cached(name, get_default_build_root()):
            print(f"llm_engine: compiling the CPU {what} kernel (once a machine, ~30 s)",
                  file=sys.stderr)
        return load_inline(name=name, cpp_sources=[source], functions=functions,
                           extra_cflags=cflags, verbose=False)
    except Exception as exc:  # no compiler, no ninja, unsupported flags
        logger.warning("CPU %s kernel unavailable (%s); %s", what, exc, fallback)
        return None


def _cached(name: str, default_root: str) -> bool:
    """Whether a build of extension `name` is in torch's extension cache (a cached one loads
    in well under a second; our names carry a version, bumped when their source changes)."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    # By default the cache has a folder per Python version and accelerator (py311_cpu).
    dirs = [Path(root) / name] if root else Path(default_root).glob(f"*/{name}")
    return any(any(d.glob("*.so")) for d in dirs)
