"""Which layers a TensorRT build ran on 2:4 sparse kernels, read from the builder's log.

With the SPARSE_WEIGHTS flag, TensorRT logs (at INFO) the layers whose weights have the
2:4 pattern ("eligible") and those it then timed faster sparse than dense ("picked").
The log is the only place the builder says so, so a build asked to be sparse logs
through a logger that keeps those lines; TensorRT itself is passed in (lazily imported).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

TAG = "(Sparsity)"
ELIGIBLE = "Layers eligible for sparse math:"
PICKED = "TRT inference plan picked sparse implementation for layers:"


@dataclass
class SparseLayers:
    """None for a list the log never gave (an older or newer TensorRT's wording)."""

    eligible: list[str] | None
    picked: list[str] | None

    @classmethod
    def from_log(cls, lines: list[str]) -> SparseLayers:
        found: dict[str, list[str]] = {}
        for line in lines:
            for key in (ELIGIBLE, PICKED):
                if key in line:
                    names = line.split(key, 1)[1]
                    found[key] = [n.strip() for n in names.split(",") if n.strip()]
        return cls(found.get(ELIGIBLE), found.get(PICKED))

    def line(self) -> str:
        if self.picked is None:
            return ("TensorRT's builder log named no sparse layers (no '(Sparsity)' lines); "
                    "run with --verbose to see the whole log")
        eligible = "?" if self.eligible is None else str(len(self.eligible))
        out = (f"{len(self.picked)} layers run on 2:4 sparse kernels, of {eligible} with "
               "2:4 weights")
        if self.eligible == []:
            out += " (no weights have the 2:4 pattern: --sparsity=force prunes them)"
        return out + (f": {', '.join(self.picked)}" if self.picked else "")


def build_logger(trt: Any, verbose: bool, sparse: bool) -> Any:
    """trt.Logger (warnings up, or all when verbose); for a sparse build a trt.ILogger
    printing the same and keeping the '(Sparsity)' lines in `.sparsity`."""
    if not sparse:
        return trt.Logger(trt.Logger.VERBOSE if verbose else trt.Logger.WARNING)
    threshold = int(trt.Logger.VERBOSE if verbose else trt.Logger.WARNING)

    class Capture(trt.ILogger):
        def __init__(self) -> None:
            trt.ILogger.__init__(self)
            self.sparsity: list[str] = []

        def log(self, severity: Any, msg: str) -> None:
            if TAG in msg:
                self.sparsity.append(msg)
            if int(severity) <= threshold:
                print(f"[TRT] {msg}", file=sys.stderr, flush=True)

    return Capture()
