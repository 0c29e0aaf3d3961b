"""Inference timing for retrexec, reported in trtexec's performance-summary format.

A query is one batch at the chosen shape. Each query is timed in three stages where the
backend has them (host→device copy, compute, device→host copy), which trtexec reports
as H2D Latency, GPU Compute Time and D2H Latency; Latency is their sum per query.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from retriever_trt.embedders.profiles import Shape

CLS_ID, SEP_ID, FIRST_WORD_ID = 101, 102, 1000  # BERT WordPiece special ids


def random_inputs(shape: Shape, vocab: int = 30522, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Valid token ids: [CLS] words… [SEP], full attention mask."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(FIRST_WORD_ID, vocab, size=(shape.batch, shape.seq), dtype=np.int64)
    ids[:, 0] = CLS_ID
    ids[:, -1] = SEP_ID
    return ids, np.ones_like(ids)


class OrtRunner:
    """ONNX Runtime: inputs are bound on the host, so only compute is measurable."""

    stages = ("compute",)

    def __init__(self, session: Any) -> None:
        self.session = session

    def query(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, float]:
        t0 = time.perf_counter()
        self.session.run(["embeddings"], {"input_ids": ids, "attention_mask": mask})
        return {"compute": time.perf_counter() - t0}


class TrtRunner:
    """TensorRT: H2D, compute and D2H, each closed by a stream synchronize. Without
    transfers (--noDataTransfers) the inputs are copied once and only compute is timed."""

    def __init__(self, embedder: Any, transfers: bool = True) -> None:
        self.e, self.transfers, self._loaded = embedder, transfers, False
        self.stages = ("h2d", "compute", "d2h") if transfers else ("compute",)

    def query(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, float]:
        if not self.transfers:
            return self._compute_only(ids, mask)
        e, dev = self.e, self.e.device
        t0 = time.perf_counter()
        e.stage_inputs(ids, mask)
        dev.stream.synchronize()
        t1 = time.perf_counter()
        if not e.context.execute_async_v3(dev.stream_handle):
            raise RuntimeError("TensorRT execution failed")
        dev.stream.synchronize()
        t2 = time.perf_counter()
        dev.d2h(e.buffers["embeddings"], tuple(e.context.get_tensor_shape("embeddings")))
        t3 = time.perf_counter()
        return {"h2d": t1 - t0, "compute": t2 - t1, "d2h": t3 - t2}

    def _compute_only(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, float]:
        e, dev = self.e, self.e.device
        if not self._loaded:  # the same inputs every query: copy them once
            e.stage_inputs(ids, mask)
            dev.stream.synchronize()
            self._loaded = True
        t0 = time.perf_counter()
        if not e.context.execute_async_v3(dev.stream_handle):
            raise RuntimeError("TensorRT execution failed")
        dev.stream.synchronize()
        return {"compute": time.perf_counter() - t0}


@dataclass
class TimingResult:
    batch: int
    walltime: float
    stages: dict[str, list[float]] = field(default_factory=dict)
    latency: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)  # seconds after the timed run began

    @property
    def qps(self) -> float:
        return len(self.latency) / self.walltime if self.walltime else 0.0


def time_queries(query: Callable[[], dict[str, float]], stages: Sequence[str],
                 iterations: int = 10, warmup_ms: float = 200.0, duration_s: float = 3.0,
                 avg_runs: int = 10, on_average: Callable[[str], None] | None = None,
                 batch: int = 1) -> TimingResult:
    """Warm up for `warmup_ms`, then run ≥ `iterations` queries and ≥ `duration_s` seconds."""
    end = time.perf_counter() + warmup_ms / 1000.0
    query()  # at least one warm-up query: first runs allocate and pick kernels
    while time.perf_counter() < end:
        query()
    res = TimingResult(batch, 0.0, {s: [] for s in stages})
    start = time.perf_counter()
    while len(res.latency) < iterations or time.perf_counter() - start < duration_s:
        res.starts.append(time.perf_counter() - start)
        times = query()
        for s in stages:
            res.stages[s].append(times[s])
        res.latency.append(sum(times.values()))
        if on_average and avg_runs and len(res.latency) % avg_runs == 0:
            comp = np.mean(res.stages["compute"][-avg_runs:]) * 1e3
            host = np.mean(res.latency[-avg_runs:]) * 1e3
            on_average(f"Average on {avg_runs} runs - compute latency: {comp:.5g} ms - "
                       f"Host latency: {host:.5g} ms")
    res.walltime = time.perf_counter() - start
    return res


def export_times(res: TimingResult) -> list[dict[str, float]]:
    """trtexec's --exportTimes records: each iteration's stage start/end and durations in ms
    from the start of the timed run (a stage this backend does not have takes 0 ms)."""
    records = []
    for i, t0 in enumerate(res.starts):
        rec: dict[str, float] = {}
        at = t0 * 1e3
        for stage, key in (("h2d", "In"), ("compute", "Compute"), ("d2h", "Out")):
            ms = res.stages[stage][i] * 1e3 if stage in res.stages else 0.0
            rec[f"start{key}Ms"], rec[f"end{key}Ms"] = at, at + ms
            rec[f"{key[0].lower() + key[1:]}Ms"] = ms
            at += ms
        rec["latencyMs"] = res.latency[i] * 1e3
        rec["endToEndMs"] = rec["endOutMs"] - rec["startInMs"]
        records.append(rec)
    return records


def _stats(values_s: Sequence[float], percentiles: Sequence[float]) -> str:
    ms = np.asarray(values_s) * 1e3
    parts = [f"min = {ms.min():.6g} ms", f"max = {ms.max():.6g} ms",
             f"mean = {ms.mean():.6g} ms", f"median = {np.median(ms):.6g} ms"]
    parts += [f"percentile({p:g}%) = {np.percentile(ms, p):.6g} ms" for p in percentiles]
    return ", ".join(parts)


STAGE_TITLES = {"h2d": "H2D Latency", "compute": "GPU Compute Time", "d2h": "D2H Latency"}


def summary_lines(res: TimingResult, percentiles: Sequence[float], gpu: bool) -> list[str]:
    """trtexec's '=== Performance summary ===' block (each line gets the [I] prefix)."""
    lines = ["=== Performance summary ===",
             f"Throughput: {res.qps:.6g} qps",
             f"Latency: {_stats(res.latency, percentiles)}"]
    for stage, values in res.stages.items():
        title = STAGE_TITLES[stage] if gpu else "Compute Time"
        lines.append(f"{title}: {_stats(values, percentiles)}")
    lines.append(f"Total Host Walltime: {res.walltime:.6g} s")
    total = sum(res.stages["compute"])
    lines.append(f"Total {'GPU ' if gpu else ''}Compute Time: {total:.6g} s")
    lines.append(f"Embeddings per second: {res.qps * res.batch:.6g} (batch {res.batch})")
    return lines
