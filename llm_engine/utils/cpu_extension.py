"""The engine's CPU kernels, compiled once with torch's C++ extension loader.

The build lands in torch's extension cache (~/.cache/torch_extensions), so only the first
process on a machine pays its ~30 s. Where it cannot be built (no compiler, no ninja, flags
the compiler refuses) the caller keeps its torch path; the reason is logged once.
"""

from __future__ import annotations

import logging
import sys
from types import ModuleType

logger = logging.getLogger(__name__)


def build(name: str, source: str, functions: list[str], cflags: list[str], what: str,
          fallback: str) -> ModuleType | None:
    """`source` compiled as extension `name` exposing `functions`, or None (logged:
    "CPU {what} kernel unavailable (...); {fallback}").

    Build with -fopenmp wherever the source uses `at::parallel_for`: it is a header
    template that runs the whole range on the calling thread in an extension built without
    OpenMP (the decode-attention kernel ran on one core that way, 2.0-2.4x slower at 64
    rows on two: benchmarks/RESULTS.md, "Issue 13, fourth pass")."""
    try:
        from torch.utils.cpp_extension import load_inline

        print(f"llm_engine: loading the CPU {what} kernel (compiled once, ~30 s)", file=sys.stderr)
        return load_inline(name=name, cpp_sources=[source], functions=functions,
                           extra_cflags=cflags, verbose=False)
    except Exception as exc:  # no compiler, no ninja, unsupported flags
        logger.warning("CPU %s kernel unavailable (%s); %s", what, exc, fallback)
        return None
