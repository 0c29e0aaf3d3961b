"""Questions while a filing is uploaded: /ask latency idle and during indexing, side by side.

Starts `finrag serve` (bundled model and demo corpus, uploads in a temporary folder), keeps
--clients clients asking TAT-QA dev questions back to back, first for --idle-s seconds, then
uploads a real filing and goes on until it is `ready`. Prints the p50, p90 and p99 of each
phase and their ratio (issue 28's target: p50 during indexing within 2x of idle), the
latency of a /health probe sent every PROBE_INTERVAL_S (the event loop's responsiveness),
the time to ready, and whether the uploaded filing has the same chunks a folder index gives.

With --requests N each phase ends after N answers instead (the indexing phase at `ready`
if that comes first): a short, bounded run that does not wait for a large filing. --root
serves another checkout (e.g. the code before a change) with this one's artifacts.

    python benchmarks/upload_load.py --filing ../shared/data/filings/nflx-10-q-2025-07-18.html
    python benchmarks/upload_load.py --clients 16 --requests 96 --root ../before \
        --filing ../shared/data/filings/aapl-10-k-2024-11-01.html
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from reproduce import print_command  # noqa: E402
from serving import CORPUS, ROOT, free_port, questions  # noqa: E402

FILING = ROOT.parent / "shared" / "data" / "filings" / "nflx-10-q-2025-07-18.html"
START_GUARD_S = 900
PROBE_INTERVAL_S = 0.1
POLL_S = 0.5


class Load(threading.Thread):
    """One client asking questions back to back (from the `first`th); (start time,
    seconds) of each answer."""

    def __init__(self, base: str, qs: list[str], first: int = 0) -> None:
        super().__init__(daemon=True)
        self.base, self.qs, self.first = base, qs, first
        self.stop, self.times = threading.Event(), []

    def run(self) -> None:
        i = self.first
        while not self.stop.is_set():
            t0 = time.perf_counter()
            r = httpx.post(f"{self.base}/ask", json={"question": self.qs[i % len(self.qs)]},
                           timeout=600)
            if r.status_code != 200:
                raise SystemExit(f"/ask answered {r.status_code}: {r.text[:300]}")
            self.times.append((t0, time.perf_counter() - t0))
            i += 1

    def between(self, a: float, b: float) -> list[float]:
        return [s for t, s in self.times if a <= t < b]


class Probe(Load):
    """GET /health every PROBE_INTERVAL_S: how long the event loop keeps a request waiting."""

    def run(self) -> None:
        while not self.stop.wait(PROBE_INTERVAL_S):
            t0 = time.perf_counter()
            httpx.get(f"{self.base}/health", timeout=600).raise_for_status()
            self.times.append((t0, time.perf_counter() - t0))


def answered(loads: list[Load], a: float, b: float) -> list[float]:
    return [s for load in loads for s in load.between(a, b)]


def start_server(port: int, documents: Path, root: Path = ROOT) -> subprocess.Popen:
    """`finrag serve` of the checkout at `root`, with this checkout's engines/ (its model,
    encoder, kernels and demo index)."""
    env = {"FINRAG_ENGINES_DIR": str(ROOT / "engines"), **os.environ,
           "FINRAG_DOCUMENTS_DIR": str(documents),
           "PYTHONPATH": os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "serve", "--port", str(port),
                             "--corpus", str(CORPUS)], cwd=root, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_GUARD_S
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"finrag serve exited with {proc.returncode}")
        time.sleep(1)
    proc.kill()
    raise SystemExit("finrag serve was not ready in time")


def folder_chunks(filing: Path) -> list[str]:
    """The chunk texts `finrag index` gives the filing (same embedder tokenizer)."""
    from pipeline.settings import Settings
    from retriever_trt.embedders.loader import load_embedder
    from retriever_trt.indexing.chunking import DEFAULT_OVERLAP
    from retriever_trt.indexing.ingest import ingest
    from retriever_trt.search.retriever import chunk_counter

    settings = Settings()
    embedder = load_embedder(settings.embedder, settings.engines_path)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / filing.name).symlink_to(filing.resolve())
        store, _ = ingest(tmp, settings.chunk_tokens, DEFAULT_OVERLAP, chunk_counter(embedder))
    return [c.text for c in store]


def stats(xs: list[float], what: str = "answers") -> str:
    if not xs:
        return f"no {what}"
    q = statistics.quantiles(xs, n=100, method="inclusive") if len(xs) > 1 else xs * 99
    return (f"{len(xs)} {what}, p50 {statistics.median(xs) * 1000:.0f} ms, p90 "
            f"{q[89] * 1000:.0f} ms, p99 {q[98] * 1000:.0f} ms")


def wait_answers(loads: list[Load], since: float, n: int, done: Any = None) -> None:
    """Until `n` answers asked since `since` are in (or `done()` says the phase is over)."""
    while len(answered(loads, since, float("inf"))) < n and not (done and done()):
        time.sleep(POLL_S)


@dataclass
class Run:
    """What one run saw: the clients, the probe, the filing's state, the phases' bounds."""

    loads: list[Load]
    probe: Probe
    doc: dict[str, Any]
    t_idle: float
    t_up: float
    t_end: float


def run_phases(base: str, args: argparse.Namespace) -> Run:
    """The idle phase, the upload, the indexing phase; the clients stopped after."""
    qs = questions(200, args.seed)
    loads = [Load(base, qs, i * len(qs) // args.clients) for i in range(args.clients)]
    probe = Probe(base, qs)
    for thread in (*loads, probe):
        thread.start()
    t_idle = time.perf_counter()
    if args.requests is None:
        time.sleep(args.idle_s)
    else:
        wait_answers(loads, t_idle, args.requests)
    t_up = time.perf_counter()
    r = httpx.post(f"{base}/v1/documents", timeout=600,
                   files={"file": (args.filing.name, args.filing.read_bytes())})
    doc = r.json()["documents"][0]

    def indexed() -> bool:
        nonlocal doc
        doc = httpx.get(f"{base}/v1/documents/{doc['id']}", timeout=60).json()
        return doc["status"] != "indexing"

    if args.requests is None:
        while not indexed():
            time.sleep(POLL_S)
    else:
        wait_answers(loads, t_up, args.requests, indexed)
    t_end = time.perf_counter()
    for thread in (*loads, probe):
        thread.stop.set()
    for thread in (*loads, probe):
        thread.join()
    return Run(loads, probe, doc, t_idle, t_up, t_end)


def report(run: Run, args: argparse.Namespace) -> None:
    doc, t_up = run.doc, run.t_up
    idle, busy = answered(run.loads, run.t_idle, t_up), answered(run.loads, t_up, run.t_end)
    print(f"filing: {args.filing.name}, {doc['chunks']} chunks, "
          f"{doc['metadata'].get('pages')} pages, {doc['status']} {run.t_end - t_up:.1f} s "
          "after upload")
    print(f"{args.clients} clients; idle:     {stats(idle)}")
    print(f"{args.clients} clients; indexing: {stats(busy)}")
    print(f"/health idle:     {stats(run.probe.between(run.t_idle, t_up), 'probes')}")
    print(f"/health indexing: {stats(run.probe.between(t_up, run.t_end), 'probes')}")
    if idle and busy:
        print(f"p50 ratio indexing / idle: {statistics.median(busy) / statistics.median(idle):.2f}"
              " (target <= 2)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filing", type=Path, default=FILING)
    p.add_argument("--idle-s", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clients", type=int, default=1, help="clients asking at once")
    p.add_argument("--requests", type=int, default=None,
                   help="answers a phase (default: --idle-s, then until ready)")
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    args = p.parse_args()
    if not args.filing.is_file():
        p.error(f"--filing {args.filing}: no such file")
    if not (args.root / "pipeline" / "cli.py").is_file():
        p.error(f"--root {args.root}: no finrag checkout there")
    print_command(__file__)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_server(port, Path(tmp) / "documents", args.root.resolve())
        try:
            run = run_phases(f"http://127.0.0.1:{port}", args)
        finally:
            proc.terminate()
            proc.wait(timeout=120)
        segment = Path(tmp) / "documents" / "segments" / run.doc["id"] / "store" / "chunks.jsonl"
        uploaded = [json.loads(line)["text"] for line in segment.read_text().splitlines()] \
            if run.doc["status"] == "ready" else None
    report(run, args)
    if uploaded is None:
        print(f"chunks not compared: the filing is {run.doc['status']}")
        return 0 if args.requests is not None and run.doc["status"] == "indexing" else 1
    same = uploaded == folder_chunks(args.filing)
    print(f"chunks as a folder index gives them: {'same' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
