"""`retrexec --dumpProfile` on ONNX Runtime: per-node times from ORT's profiler, printed as
trtexec's per-layer table.

The profile comes from a separate run of its own session, so the profiler's overhead does
not touch the performance summary (trtexec's --separateProfileRun).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def node_times(path: Path, providers: Sequence, ids: np.ndarray, mask: np.ndarray,
               iterations: int) -> dict[str, list[float]]:
    """{node name: [ms per run]} in execution order, over `iterations` runs."""
    import onnxruntime as ort

    from retriever_trt.embedders.ort_embedder import resolve_providers

    with tempfile.TemporaryDirectory(prefix="retrexec-profile-") as tmp:
        opts = ort.SessionOptions()
        opts.enable_profiling = True
        opts.profile_file_prefix = str(Path(tmp) / "ort")
        sess = ort.InferenceSession(str(path), opts, providers=resolve_providers(providers))
        sess.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})  # warm-up
        for _ in range(max(iterations, 1)):
            sess.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})
        events = json.loads(Path(sess.end_profiling()).read_text())
    times: dict[str, list[float]] = {}
    for ev in events:
        if ev.get("cat") == "Node" and ev.get("name", "").endswith("_kernel_time"):
            times.setdefault(ev["name"].removesuffix("_kernel_time"), []).append(ev["dur"] / 1e3)
    # The first run was the warm-up: drop each node's first sample.
    return {name: ms[1:] or ms for name, ms in times.items()}


def profile_lines(times: dict[str, list[float]], iterations: int) -> list[str]:
    """trtexec's '=== Profile (N iterations ) ===' table."""
    total = sum(sum(ms) for ms in times.values()) or 1.0
    lines = [f"=== Profile ({iterations} iterations ) ===",
             f"{'Time(ms)':>12} {'Avg.(ms)':>12} {'Median(ms)':>12} {'Time(%)':>9}   Layer"]
    for name, ms in times.items():
        lines.append(f"{sum(ms):12.4f} {np.mean(ms):12.4f} {np.median(ms):12.4f} "
                     f"{100 * sum(ms) / total:9.1f}   {name}")
    per_run = total / max(iterations, 1)
    lines.append(f"{total:12.4f} {per_run:12.4f} {per_run:12.4f} {100.0:9.1f}   Total")
    return lines
