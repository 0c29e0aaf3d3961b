"""Operations on the real server: request ids, the audit log, JSON access logs, tracing
spans, vLLM's per-request metrics, traffic mirroring, and readiness while it starts."""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import loopback
import pytest
from live_server import (
    dev_contexts,
    free_port,
    listening_socket,
    metric_values,
    running_app,
    serving_in_thread,
)
from prereqs import DEV, require_module

from pipeline.cli import main
from pipeline.server.observability.access_log import JsonFormatter

REPO_ROOT = Path(__file__).resolve().parents[1]
KEY = "ops-test-key-0123456789abcdef"
N_CONTEXTS = 6


class Receiver:
    """A loopback HTTP server standing in for mirror_url: records bodies, or never answers."""

    def __init__(self, hang: bool = False) -> None:
        import http.server

        self.bodies: list[dict] = []
        self.hang = threading.Event() if hang else None
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.bodies.append({"body": json.loads(body),
                                        "headers": dict(self.headers)})
                if receiver.hang is not None:
                    receiver.hang.wait(60)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mirror"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        if self.hang is not None:
            self.hang.set()
        self.server.shutdown()


@pytest.fixture(scope="module")
def access_lines() -> Iterator[io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    access = logging.getLogger("finrag.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    yield out
    access.removeHandler(handler)


@pytest.fixture(scope="module")
def ops(prepared_default, engines_dir, tmp_path_factory, access_lines):
    require_module("opentelemetry.sdk", DEV)
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from pipeline.server.observability.tracing import Tracing

    tmp = tmp_path_factory.mktemp("ops")
    receiver = Receiver()
    audit = tmp / "audit" / "audit.jsonl"
    with running_app(dev_contexts(N_CONTEXTS), engines_dir, tmp, max_tokens=8, api_key=KEY,
                     audit_log=str(audit), mirror_url=receiver.url) as (base, app):
        exporter = InMemorySpanExporter()
        app.state.tracing = Tracing(exporter=exporter)
        yield {"base": base, "app": app, "audit": audit, "spans": exporter,
               "receiver": receiver}
    receiver.close()


def eventually(find, tries: int = 600):
    """What `find` returns once it returns something: records are written as a response
    ends, just after the client has it (no bound on speed, only on patience)."""
    for _ in range(tries):
        found = find()
        if found:
            return found
        threading.Event().wait(0.05)
    raise AssertionError("never found")


def _ask(base: str, question: str, **headers: str) -> httpx.Response:
    return loopback.post(f"{base}/ask", json={"question": question}, timeout=300,
                         headers={"Authorization": f"Bearer {KEY}", **headers})


def test_request_ids_are_echoed_and_unique(ops) -> None:
    mine = _ask(ops["base"], "What was the total revenue in 2019?", **{"X-Request-Id": "fe-42"})
    assert mine.status_code == 200 and mine.headers["x-request-id"] == "fe-42"
    made = [loopback.get(f"{ops['base']}/health").headers["x-request-id"] for _ in range(5)]
    assert len(set(made)) == 5 and all(re.fullmatch(r"[0-9a-f]{32}", r) for r in made)
    # A header that could forge log lines is replaced, not echoed.
    forged = loopback.get(f"{ops['base']}/health", headers={"X-Request-Id": "a b\tc"})
    assert forged.headers["x-request-id"] != "a b\tc"


def test_audit_log_records_each_answer_in_an_intact_chain(ops, capsys) -> None:
    r = _ask(ops["base"], "What was the change in total revenue?")
    chat = loopback.post(f"{ops['base']}/v1/chat/completions", timeout=300,
                         headers={"Authorization": f"Bearer {KEY}"},
                         json={"messages": [{"role": "user", "content": "Define EBITDA."}],
                               "max_tokens": 4})
    assert r.status_code == 200 and chat.status_code == 200
    records = [json.loads(x) for x in ops["audit"].read_text().splitlines()]
    by_id = {rec["request_id"]: rec for rec in records}
    ask = by_id[r.headers["x-request-id"]]
    assert ask["route"] == "/ask" and ask["question"] == "What was the change in total revenue?"
    assert ask["answer"] == r.json()["answer"]
    assert [s["id"] for s in ask["sources"]] == [s["id"] for s in r.json()["sources"]]
    assert ask["key_id"].startswith("key-") and KEY not in json.dumps(records)
    assert all(re.fullmatch(r"[0-9a-f]{64}", ask[k])
               for k in ("model_sha256", "index_sha256", "settings_sha256"))
    v1 = by_id[chat.headers["x-request-id"]]
    assert v1["route"] == "/v1/chat/completions"
    assert v1["prompt"] == [{"role": "user", "content": "Define EBITDA."}]
    assert v1["answer"] == chat.json()["choices"][0]["message"]["content"]
    assert main(["audit", "verify", str(ops["audit"])]) == 0
    assert "chain intact" in capsys.readouterr().out


def test_audit_verify_names_an_edited_line(ops, tmp_path: Path, capsys) -> None:
    _ask(ops["base"], "What were the total assets?")
    lines = ops["audit"].read_text().splitlines(keepends=True)
    assert len(lines) >= 2
    copy = tmp_path / "audit.jsonl"
    lines[0] = lines[0].replace('"route":"/ask"', '"route":"/ask-edited"', 1)
    copy.write_text("".join(lines))
    assert main(["audit", "verify", str(copy)]) == 1
    # The edited record itself is named (its own hash no longer matches), not the next one.
    assert f"{copy}:1:" in capsys.readouterr().err


def test_access_log_is_json_with_ids_tokens_and_no_credentials(ops, access_lines) -> None:
    r = _ask(ops["base"], "What was the revenue in 2018?")
    health_id = loopback.get(f"{ops['base']}/health?api_key={KEY}&x=1").headers["x-request-id"]

    def find():
        records = [json.loads(x) for x in access_lines.getvalue().splitlines()]
        ids = {x["request_id"] for x in records}
        return records if {r.headers["x-request-id"], health_id} <= ids else None

    records = eventually(find)
    ask = next(x for x in records if x["request_id"] == r.headers["x-request-id"])
    assert ask["route"] == "/ask" and ask["status"] == 200 and ask["latency_ms"] > 0
    assert ask["prompt_tokens"] == r.json()["usage"]["prompt_tokens"] > 0
    assert ask["completion_tokens"] == r.json()["usage"]["completion_tokens"]
    assert KEY not in access_lines.getvalue()
    health = [x for x in records if x["route"].startswith("/health?")]
    assert health and "api_key=[redacted]" in health[-1]["route"]


def test_each_ask_gets_a_span_with_its_stages(ops) -> None:
    # A question for the model's prose (reasons are not computed from tables), so the
    # generate stage runs the engine and has a queue span.
    r = _ask(ops["base"], "Why did the total revenue change in 2019?")
    assert r.json()["usage"]["completion_tokens"] > 0, r.json()
    rid = r.headers["x-request-id"]
    def find():
        spans = ops["spans"].get_finished_spans()
        return [s for s in spans if s.attributes.get("finrag.request_id") == rid
                and s.parent is None]

    root = eventually(find)[0]
    spans = ops["spans"].get_finished_spans()
    children = [s for s in spans if s.parent is not None
                and s.parent.span_id == root.context.span_id]
    assert [s.name for s in children] == ["intent", "retrieve", "generate"]
    assert all(root.start_time <= c.start_time <= c.end_time <= root.end_time for c in children)
    queue = [s for s in spans if s.name == "engine_queue"
             and s.parent.span_id == children[-1].context.span_id]
    assert len(queue) == 1


def test_metrics_have_vllm_request_timelines_without_the_warm_up(ops) -> None:
    def scrape() -> str:
        return loopback.get(f"{ops['base']}/metrics",
                            headers={"Authorization": f"Bearer {KEY}"}).text

    def count(text: str, name: str) -> float:
        return sum(metric_values(text, name))

    before = scrape()
    _ask(ops["base"], "What was the net income in 2019?")
    after = scrape()
    # One /ask after the scrape: e2e counts it once; the warm-up before start was never counted.
    assert count(after, "vllm:e2e_request_latency_seconds_count") - \
        count(before, "vllm:e2e_request_latency_seconds_count") == 1
    for name in ("vllm:request_queue_time_seconds_count", "vllm:request_prefill_time_seconds_count",
                 "vllm:request_success_total", "vllm:request_prompt_tokens_count"):
        assert count(after, name) > count(before, name), name
    assert count(after, "vllm:request_success_total") == \
        count(after, "vllm:request_queue_time_seconds_count")
    assert "process_resident_memory_bytes" in after


def test_requests_are_mirrored_without_credentials(ops) -> None:
    question = "What was the gross margin in 2019?"
    r = _ask(ops["base"], question)
    got = eventually(lambda: [b for b in ops["receiver"].bodies
                              if b["body"].get("question") == question])
    headers = {k.lower(): v for k, v in got[0]["headers"].items()}
    assert headers["x-request-id"] == r.headers["x-request-id"]
    assert "authorization" not in headers and KEY not in json.dumps(got)


@pytest.mark.slow  # a server of its own
def test_a_hanging_mirror_never_holds_answers(prepared_default, engines_dir, tmp_path) -> None:
    receiver = Receiver(hang=True)
    try:
        with running_app(dev_contexts(N_CONTEXTS), engines_dir, tmp_path, max_tokens=4,
                         mirror_url=receiver.url, mirror_queue_size=1) as (base, app):
            codes = [loopback.post(f"{base}/ask", json={"question": f"Revenue in 201{i}?"},
                                   timeout=300).status_code for i in range(4)]
            assert codes == [200] * 4
            # One copy is held by the hanging mirror, one waits; the others were dropped.
            assert app.state.mirror.counts["dropped"] >= 2
    finally:
        receiver.close()


@pytest.mark.slow  # a server of its own
def test_health_says_starting_and_routes_503_until_ready(prepared_default, engines_dir,
                                                          tmp_path) -> None:
    from pipeline.rag import RAGPipeline
    from pipeline.server.app import create_app
    from pipeline.settings_sources import load_settings

    sock = listening_socket()
    corpus = tmp_path / "c.json"
    corpus.write_text(json.dumps(dev_contexts(2)))
    settings = load_settings(None, {"corpus": str(corpus), "index": str(tmp_path / "idx"),
                                    "engines_dir": str(engines_dir),
                                    "port": sock.getsockname()[1],
                                    "kv_cache_memory": 128 << 20, "max_tokens": 4}, environ={})
    gate = threading.Event()

    def build(s):  # the first-run build, held until the test has looked
        gate.wait(120)
        return RAGPipeline.from_settings(s)

    app = create_app(settings, build=build)
    with serving_in_thread(app, sock) as served:
        base = served.base
        try:
            for _ in range(600):
                try:
                    health = loopback.get(f"{base}/health", timeout=5)
                    break
                except httpx.TransportError:
                    threading.Event().wait(0.1)
            assert health.status_code == 200 and health.json()["status"] == "starting"
            assert loopback.get(f"{base}/ready").status_code == 503
            early = loopback.post(f"{base}/ask", json={"question": "Revenue?"})
            assert early.status_code == 503 and "starting" in early.json()["detail"]
            assert early.headers["retry-after"] == "5"
            gate.set()
            for _ in range(2400):
                if loopback.get(f"{base}/ready", timeout=5).status_code == 200:
                    break
                threading.Event().wait(0.1)
            assert loopback.post(f"{base}/ask", json={"question": "Revenue?"},
                                 timeout=300).status_code == 200
            assert loopback.get(f"{base}/health").json()["status"] == "ok"
        finally:
            gate.set()  # a build still held would outlive the test


@pytest.mark.slow  # a server of its own
def test_killing_the_server_mid_write_never_breaks_the_audit_chain(prepared_default,
                                                                    engines_dir, tmp_path) -> None:
    """`finrag serve` killed (SIGKILL) while answers are being recorded; the next start
    cuts off any torn line, and the chain verifies before and after new records."""
    import os
    import signal
    import subprocess
    import sys

    corpus = tmp_path / "c.json"
    corpus.write_text(json.dumps(dev_contexts(3)))
    audit = tmp_path / "audit.jsonl"
    env = {**os.environ, "FINRAG_ENGINES_DIR": str(engines_dir)}
    config = tmp_path / "settings.yaml"
    config.write_text(f"max_tokens: 4\nkv_cache_memory: {128 << 20}\n")

    def start() -> tuple[subprocess.Popen, str]:
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", "serve", "--port", str(port),
             "--corpus", str(corpus), "--index", str(tmp_path / "idx"), "--audit-log",
             str(audit), "--config", str(config)],
            env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        eventually(lambda: _ready(base, proc), tries=12000)
        return proc, base

    proc, base = start()
    questions = [f"What was the revenue in {2015 + i}?" for i in range(12)]

    def post(q: str) -> None:
        try:
            loopback.post(f"{base}/ask", json={"question": q}, timeout=300)
        except httpx.HTTPError:
            pass  # killed mid-answer

    threads = [threading.Thread(target=post, args=(q,)) for q in questions]
    for t in threads:
        t.start()
    eventually(lambda: audit.is_file() and audit.stat().st_size > 0, tries=12000)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for t in threads:
        t.join()
    written = len(audit.read_bytes().splitlines())
    # The next start, with the same settings, in this process: the kill needed a process of
    # its own, the start after it does not (it opens the audit log as `finrag serve` does,
    # through create_app, without the 5-6 s of a second interpreter importing the stack).
    (tmp_path / "next").mkdir()
    with running_app(dev_contexts(3), engines_dir, tmp_path / "next", corpus=str(corpus),
                     index=str(tmp_path / "idx"), audit_log=str(audit), max_tokens=4,
                     kv_cache_memory=128 << 20) as (next_base, _app):
        assert loopback.post(f"{next_base}/ask", json={"question": "Total revenue?"},
                             timeout=300).status_code == 200
    assert main(["audit", "verify", str(audit)]) == 0
    assert len(audit.read_bytes().splitlines()) >= written >= 1


def _ready(base: str, proc) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"finrag serve exited with {proc.returncode}")
    try:
        return loopback.get(f"{base}/ready", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
