"""Questions while a filing is uploaded: /ask latency idle and during indexing, side by side.

Starts `finrag serve` (bundled model and demo corpus, uploads in a temporary folder), keeps
one client asking TAT-QA dev questions back to back, first for --idle-s seconds, then
uploads a real filing and goes on until it is `ready`. Prints the p50 and p90 of each
phase and their ratio (issue 28's target: p50 during indexing within 2x of idle), the
time to ready, and whether the uploaded filing has the same chunks a folder index gives.

    python benchmarks/upload_load.py --filing ../shared/data/filings/nflx-10-q-2025-07-18.html
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from serving import CORPUS, ROOT, free_port, questions  # noqa: E402

FILING = ROOT.parent / "shared" / "data" / "filings" / "nflx-10-q-2025-07-18.html"
START_GUARD_S = 900


class Load(threading.Thread):
    """One client asking questions back to back; (start time, seconds) of each answer."""

    def __init__(self, base: str, qs: list[str]) -> None:
        super().__init__(daemon=True)
        self.base, self.qs, self.stop, self.times = base, qs, threading.Event(), []

    def run(self) -> None:
        i = 0
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


def start_server(port: int, documents: Path) -> subprocess.Popen:
    env = {**os.environ, "FINRAG_DOCUMENTS_DIR": str(documents),
           "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "serve", "--port", str(port),
                             "--corpus", str(CORPUS)], cwd=ROOT, env=env,
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
    from retriever_trt.chunking import DEFAULT_OVERLAP
    from retriever_trt.ingest import ingest
    from retriever_trt.loader import load_embedder
    from retriever_trt.retriever import chunk_counter

    settings = Settings()
    embedder = load_embedder(settings.embedder, settings.engines_path)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / filing.name).symlink_to(filing.resolve())
        store, _ = ingest(tmp, settings.chunk_tokens, DEFAULT_OVERLAP, chunk_counter(embedder))
    return [c.text for c in store]


def stats(xs: list[float]) -> str:
    if not xs:
        return "no answers"
    q = statistics.quantiles(xs, n=10) if len(xs) > 1 else xs * 9
    return f"{len(xs)} answers, p50 {statistics.median(xs) * 1000:.0f} ms, p90 {q[8] * 1000:.0f} ms"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--filing", type=Path, default=FILING)
    p.add_argument("--idle-s", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if not args.filing.is_file():
        p.error(f"--filing {args.filing}: no such file")
    print("command:", shlex.join([sys.executable, *sys.argv]), flush=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        proc = start_server(port, Path(tmp) / "documents")
        try:
            load = Load(base, questions(200, args.seed))
            load.start()
            t_idle = time.perf_counter()
            time.sleep(args.idle_s)
            t_up = time.perf_counter()
            r = httpx.post(f"{base}/v1/documents", timeout=600,
                           files={"file": (args.filing.name, args.filing.read_bytes())})
            doc = r.json()["documents"][0]
            while doc["status"] == "indexing":
                time.sleep(0.5)
                doc = httpx.get(f"{base}/v1/documents/{doc['id']}", timeout=60).json()
            t_ready = time.perf_counter()
            load.stop.set()
            load.join()
        finally:
            proc.terminate()
            proc.wait(timeout=120)
        segment = Path(tmp) / "documents" / "segments" / doc["id"] / "store" / "chunks.jsonl"
        uploaded = [json.loads(line)["text"] for line in segment.read_text().splitlines()]
    idle, busy = load.between(t_idle, t_up), load.between(t_up, t_ready)
    print(f"filing: {args.filing.name}, {doc['status']}, {doc['chunks']} chunks, "
          f"{doc['metadata'].get('pages')} pages, ready {t_ready - t_up:.1f} s after upload")
    print(f"idle:     {stats(idle)}")
    print(f"indexing: {stats(busy)}")
    if idle and busy:
        print(f"p50 ratio indexing / idle: {statistics.median(busy) / statistics.median(idle):.2f}"
              " (target <= 2)")
    same = uploaded == folder_chunks(args.filing)
    print(f"chunks as a folder index gives them: {'same' if same else 'DIFFERENT'}")
    return 0 if doc["status"] == "ready" and same else 1


if __name__ == "__main__":
    raise SystemExit(main())
