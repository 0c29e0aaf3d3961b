"""The real server (uvicorn in a thread, real engine and retriever) for tests over HTTP."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from paths import TATQA


def dev_contexts(n: int) -> list[dict]:
    """The first `n` (at most 60) TAT-QA dev contexts, from the shared copy or the demo corpus."""
    return json.loads(TATQA.read_text())[:n]


def metric_values(text: str, name: str, **labels: str) -> list[float]:
    """The values of the samples named `name` in a /metrics text whose labels include
    `labels` (an empty list where there is none)."""
    from prometheus_client.parser import text_string_to_metric_families

    return [s.value for family in text_string_to_metric_families(text) for s in family.samples
            if s.name == name and labels.items() <= s.labels.items()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    import uvicorn

    from pipeline.server.app import create_app
    from pipeline.server.guards.connection import server_protocol
    from pipeline.settings import load_settings

    corpus = tmp / "tatqa.json"
    corpus.write_text(json.dumps(contexts))
    values = {"corpus": str(corpus), "index": str(tmp / "index"),
              "engines_dir": str(engines_dir), "top_k": 3, "max_passage_chars": 300,
              "kv_cache_memory": 256 << 20, "port": free_port(), **overrides}
    settings = load_settings(None, values, environ={})
    app = create_app(settings)
    # The protocol and shutdown bound `finrag serve` runs with (pipeline/cli.py).
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1",
                                           port=settings.port, log_level="warning",
                                           http=server_protocol(settings.header_read_timeout),
                                           timeout_graceful_shutdown=settings.shutdown_timeout))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{settings.port}"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if not thread.is_alive() or app.state.start_error is not None:
            pytest.fail(f"the server failed to start: {app.state.start_error}")
        try:
            if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    else:
        pytest.fail("the server was not ready within 240 s")
    try:
        yield base, app
    finally:
        server.should_exit = True
        thread.join(timeout=30)
