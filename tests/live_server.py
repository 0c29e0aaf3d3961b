"""The real server (uvicorn in a thread, real engine and retriever) for tests over HTTP."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import loopback
import pytest
from paths import TATQA

# How long a server may take from its start to /ready, its first-run artifacts already
# built (build_first_run_artifacts): loading the model, building or loading the index, the
# warm-up answer. A hang guard, not a speed bound: on 2 cores shared with a dozen other
# jobs a start with 40 contexts took 177 s (33 s of CPU with 10 contexts, 58 s with 40).
START_GUARD_S = 600
# The settings an index depends on besides its corpus: servers that agree on all of them
# share one index a session (a start then loads it instead of encoding the corpus).
INDEX_SETTINGS = ("embedder", "chunk_tokens", "retrieval_mode")
INDEX_KEY_CHARS = 16
# /ready is polled this often while a server starts: a start takes 4-10 s, and the poll
# interval a start ends in is waited out in full (0.5 s cost each start 0.25 s on average;
# polls are a cheap request each, so 10 a second take next to nothing from the start).
POLL_S = 0.1
THREAD_JOIN_S = 30
KV_CACHE_BYTES = 256 << 20
_built: set[Path] = set()
# In `engines_dir`: written once build_first_run_artifacts has built there, and its lock.
FIRST_RUN_STAMP = ".first-run-artifacts-built"
FIRST_RUN_LOCK = ".first-run-artifacts.lock"


def dev_contexts(n: int) -> list[dict]:
    """The first `n` (at most 60) TAT-QA dev contexts, from the bundled demo corpus."""
    return json.loads(TATQA.read_text())[:n]


def metric_values(text: str, name: str, **labels: str) -> list[float]:
    """The values of the samples named `name` in a /metrics text whose labels include
    `labels` (an empty list where there is none)."""
    from prometheus_client.parser import text_string_to_metric_families

    return [s.value for family in text_string_to_metric_families(text) for s in family.samples
            if s.name == name and labels.items() <= s.labels.items()]


def free_port() -> int:
    """A port free now, for a child process that must be told its port before it binds
    (`finrag serve --port`). Another process may take it in between; servers in this
    process take a `listening_socket()` instead, which holds its port throughout."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening_socket() -> socket.socket:
    """A loopback socket bound to a port the kernel chose, held open until a server takes
    it: no other process can take the port between choosing it and serving on it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@dataclass
class Served:
    """An app served in this process: its base URL and the thread uvicorn runs in."""

    base: str
    thread: threading.Thread


@contextmanager
def serving_in_thread(app: Any, sock: socket.socket, **config: Any) -> Iterator[Served]:
    """`app` served by uvicorn in a daemon thread on `sock` (a `listening_socket()`),
    at once: the caller waits for the readiness it needs. The server stops on exit.
    `config` goes to uvicorn.Config (e.g. http=...)."""
    import uvicorn

    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", **config))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{port}", thread)
    finally:
        server.should_exit = True
        thread.join(timeout=THREAD_JOIN_S)
        sock.close()


@contextmanager
def running_server(contexts: list[dict], engines_dir: Path, tmp: Path,
                   **overrides: Any) -> Iterator[str]:
    """Index `contexts`, start the app on a free loopback port, yield its base URL."""
    with running_app(contexts, engines_dir, tmp, **overrides) as (base, _app):
        yield base


@contextmanager
def running_app(contexts: list[dict], engines_dir: Path, tmp: Path,
                **overrides: Any) -> Iterator[tuple[str, Any]]:
    """As `running_server`, yielding (base URL, the app), for tests that reach into the
    engine behind the HTTP API (app.state.pipeline.engine)."""
    from pipeline.server.app import create_app
    from pipeline.server.guards.connection import server_protocol
    from pipeline.settings_sources import load_settings

    build_first_run_artifacts(engines_dir)
    corpus = tmp / "tatqa.json"
    corpus.write_text(json.dumps(contexts))
    sock = listening_socket()
    # Each server keeps its own uploads: servers that share an index share no documents.
    values = {"corpus": str(corpus), "index": str(shared_index(contexts, tmp.parent, overrides)),
              "documents_dir": str(tmp / "uploads"),
              "engines_dir": str(engines_dir), "top_k": 3, "max_passage_chars": 300,
              "kv_cache_memory": KV_CACHE_BYTES, "port": sock.getsockname()[1],
              "strict_rules": True, **overrides}
    settings = load_settings(None, values, environ={})
    app = create_app(settings)
    # The protocol and shutdown bound `finrag serve` runs with (pipeline/cli.py).
    with serving_in_thread(app, sock, http=server_protocol(settings.header_read_timeout),
                           timeout_graceful_shutdown=settings.shutdown_timeout) as served:
        wait_ready(served, app)
        yield served.base, app


def shared_index(contexts: list[dict], folder: Path, overrides: dict[str, Any]) -> Path:
    """The session's index folder for `contexts` under these settings (INDEX_SETTINGS), in
    `folder`: built by the first server that asks, loaded by the others."""
    key = json.dumps([contexts, {k: overrides.get(k) for k in INDEX_SETTINGS}], sort_keys=True)
    return folder / f"index-{hashlib.sha256(key.encode()).hexdigest()[:INDEX_KEY_CHARS]}"


def wait_ready(served: Served, app: Any) -> None:
    """Wait until /ready answers 200; fail at once when the start fails, and after
    START_GUARD_S when it hangs (the first-run artifacts are built before, not in it)."""
    deadline = time.monotonic() + START_GUARD_S
    while time.monotonic() < deadline:
        if not served.thread.is_alive() or app.state.start_error is not None:
            pytest.fail(f"the server failed to start: {app.state.start_error}")
        try:
            if loopback.get(f"{served.base}/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(POLL_S)
    pytest.fail(f"the server was not ready within {START_GUARD_S} s")


def build_first_run_artifacts(engines_dir: Path) -> None:
    """What a server's first start on a fresh machine builds besides its index, built once
    per `engines_dir` before any start is timed: the default encoder's ONNX export and the
    engine's CPU kernels (compiled by one short generation with the server's engine
    settings; its int8 calibration is cached beside the model). The prepared model comes
    from the `prepared_default` fixture every server fixture takes.

    Once per folder, not once a process: pytest-xdist's workers share `engines_dir`, and a
    stamp written after the build (under a lock, which a second worker waits on) tells the
    others there is nothing left to build, where each of them used to start an engine of
    its own only to load what the first had built (about 3 s of CPU)."""
    if engines_dir in _built:
        return
    from llm_engine.utils.file_lock import file_lock

    with file_lock(engines_dir / FIRST_RUN_LOCK):
        if not (engines_dir / FIRST_RUN_STAMP).is_file():
            _build_first_run_artifacts(engines_dir)
            (engines_dir / FIRST_RUN_STAMP).touch()
    _built.add(engines_dir)


def _build_first_run_artifacts(engines_dir: Path) -> None:
    from llm_engine import LLMEngine, SamplingParams
    from pipeline.settings_sources import load_settings
    from retriever_trt.embedders.loader import default_embedder

    default_embedder(engines_dir, progress=False)
    settings = load_settings(None, {"engines_dir": str(engines_dir),
                                    "kv_cache_memory": KV_CACHE_BYTES}, environ={})
    engine = LLMEngine(settings.engine)
    try:
        engine.generate("What was the revenue?", SamplingParams(max_tokens=2))
    finally:
        engine.shutdown()
