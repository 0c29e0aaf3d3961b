"""SIGKILL at random moments of uploads and deletes, rounds on one folder: a restart finds
every ready document, no deleted one, and nothing half-indexed.

Issue 28's target is 20 rounds: `FINRAG_KILL_ROUNDS=20 pytest tests/test_documents_kill.py`
(benchmarks/RESULTS.md has the run); CI runs DEFAULT_ROUNDS, each a process start."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kill_worker import CONFIG
from live_server import build_first_run_artifacts

from retriever_trt.embedders.loader import default_embedder
from retriever_trt.live.catalog import DocumentStatus
from retriever_trt.live.live_documents import LiveDocuments
from retriever_trt.live.segments import read_segment
from retriever_trt.search.retriever import Retriever

pytestmark = pytest.mark.slow
DEFAULT_ROUNDS = 4
ROUNDS = int(os.environ.get("FINRAG_KILL_ROUNDS", str(DEFAULT_ROUNDS)))
WORKER = Path(__file__).with_name("kill_worker.py")
REPO = WORKER.parent.parent
# When the kill lands after the worker is up: early in an upload or late in a delete
# (each upload is read by a process of its own, which takes ~1-3 s to start).
KILL_AFTER_S = (0.2, 8.0)


def run_round(folder: Path, onnx: Path, round_no: int,
              rng: random.Random) -> dict[str, set[str]]:
    env = {**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'tests'}"}
    proc = subprocess.Popen([sys.executable, str(WORKER), str(folder), str(onnx), str(round_no)],
                            stdout=subprocess.PIPE, env=env, text=True)
    # The first line says the worker is up and working; then the kill comes at random.
    first = proc.stdout.readline()
    assert first, f"the worker died before its first document (exit {proc.wait()})"
    time.sleep(rng.uniform(*KILL_AFTER_S))
    proc.send_signal(signal.SIGKILL)
    rest = proc.communicate()[0]
    seen: dict[str, set[str]] = {"ready": set(), "deleting": set(), "deleted": set()}
    for line in [first, *rest.splitlines()]:
        kind, _, doc_id = line.strip().partition(" ")
        seen[kind].add(doc_id)
    return seen


def check_restart(folder: Path, embedder, seen: dict[str, set[str]]) -> None:
    ready, deleted = seen["ready"] - seen["deleting"], seen["deleted"]
    live = LiveDocuments(Retriever.empty(embedder), embedder, folder, CONFIG)
    live.load()  # what a restart loads, before it takes up documents left indexing
    live.stop()
    records = live.catalog.records()
    held = set(live.retriever.store.info)
    lost = ready - held
    assert not lost, f"ready documents lost: {[records.get(d) for d in sorted(lost)]}"
    assert not deleted & (held | set(records)), f"deleted ones back: {deleted & held}"
    for doc_id in held:  # visible means ready, and whole
        assert records[doc_id].status is DocumentStatus.READY
        part, _ = read_segment(folder / "segments" / doc_id, embedder)
        assert len(live.retriever.store.document(doc_id)) == len(part) == records[doc_id].chunks


def test_sigkill_during_uploads_and_deletes_loses_nothing(engines_dir: Path, tmp_path: Path):
    build_first_run_artifacts(engines_dir)
    embedder = default_embedder(engines_dir)
    folder, rng = tmp_path / "documents", random.Random(28)
    seen: dict[str, set[str]] = {"ready": set(), "deleting": set(), "deleted": set()}
    for round_no in range(ROUNDS):
        for kind, ids in run_round(folder, embedder.path, round_no, rng).items():
            seen[kind] |= ids
        check_restart(folder, embedder, seen)
    assert len(seen["ready"]) >= ROUNDS and seen["deleted"]  # the rounds uploaded and deleted
