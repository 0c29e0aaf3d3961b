"""One request cannot hurt the others, over HTTP against the real server: a schema that takes
seconds to compile does not hold up an unrelated completion; streams a shutdown cuts end with
their route family's error event; a body of thousands of unknown fields gets a bounded error."""

from __future__ import annotations

import json
import threading

import httpx
import loopback
import pytest
from live_server import dev_contexts, running_app
from prereqs import DEV, require_module

# Seconds to compile on this machine (a 12000 repetition took 69 s on the engine thread).
SLOW_SCHEMA = {"type": "string", "pattern": "[\\u0000-\\uffff]{1,3000}"}


@pytest.fixture(scope="module")
def api(api_server) -> str:
    """conftest.py's api_server, shared with test_openai_api.py: its base URL."""
    return api_server[0]


def test_a_slow_schema_does_not_hold_up_an_unrelated_completion(api) -> None:
    require_module("xgrammar", DEV)
    slow: dict = {}

    def send_slow() -> None:
        slow["r"] = loopback.post(f"{api}/v1/chat/completions", timeout=600, json={
            "messages": [{"role": "user", "content": "Say anything."}], "max_tokens": 1,
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "slow", "schema": SLOW_SCHEMA}}})

    thread = threading.Thread(target=send_slow)
    thread.start()
    thread.join(0.5)  # the slow schema reaches the server first
    quick = loopback.post(f"{api}/v1/completions", timeout=600,
                          json={"prompt": "Revenue in 2019 was", "max_tokens": 2})
    # Answered while the slow one still compiles: it did not wait behind the grammar (on
    # the engine thread it did, and the slow request, one token long, finished first).
    still_compiling = thread.is_alive()
    thread.join()
    assert quick.status_code == 200 and len(quick.json()["choices"][0]["text"]) > 0
    assert still_compiling
    assert slow["r"].status_code in (200, 400), slow["r"].text


def test_a_schema_keyword_the_grammar_drops_is_a_400_naming_it(api) -> None:
    require_module("xgrammar", DEV)
    r = loopback.post(f"{api}/v1/chat/completions", timeout=600, json={
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4,
        "structured_outputs": {"json": {"type": "object", "not": {"required": ["a"]}}}})
    assert r.status_code == 400 and "structured_outputs.json: not: not enforced" in r.text
    r = loopback.post(f"{api}/ask", timeout=600, json={
        "question": "What was the revenue in 2019?", "response_format": {
            "type": "json_schema", "json_schema": {"name": "x", "schema": {
                "type": "string", "format": "bogus"}}}})
    assert r.status_code == 400 and "response_format.json_schema.schema: format" in r.text


def test_thousands_of_unknown_fields_get_a_bounded_error(api) -> None:
    body = {"question": "What was the revenue in 2019?",
            **{f"k{i}": 1 for i in range(60_000)}}
    r = loopback.post(f"{api}/ask", content=json.dumps(body),
                      headers={"Content-Type": "application/json"}, timeout=600)
    assert r.status_code == 422
    assert r.text.count("unknown field") <= 20 and "more problems not listed" in r.text
    assert len(r.content) < 10_000


def _stream_lines(base: str, path: str, body: dict, started: threading.Event,
                  out: list[str]) -> None:
    try:
        with loopback.stream("POST", f"{base}{path}", json=body, timeout=600) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    out.append(line[6:])
                    started.set()
    except httpx.HTTPError as exc:  # a stream cut without its error event
        out.append(f"cut: {exc!r}")
    started.set()


def test_streams_a_shutdown_cuts_end_with_their_error_event(prepared_default, engines_dir,
                                                            tmp_path_factory) -> None:
    long = {"max_tokens": 1500, "min_tokens": 1500, "ignore_eos": True, "stream": True}
    routes = [("/v1/chat/completions", {"messages": [{"role": "user", "content": "Count."}],
                                        **long}),
              ("/v1/completions", {"prompt": "1, 2, 3,", **long})]
    outs: list[list[str]] = [[] for _ in routes]
    with running_app(dev_contexts(2), engines_dir, tmp_path_factory.mktemp("stop"),
                     shutdown_timeout=1) as (base, _app):
        threads = []
        for (path, body), out in zip(routes, outs, strict=True):
            started = threading.Event()
            t = threading.Thread(target=_stream_lines, args=(base, path, body, started, out))
            t.start()
            started.wait(300)
            threads.append(t)
    for t in threads:
        t.join(120)
    for (path, _), out in zip(routes, outs, strict=True):
        assert out[-1] == "[DONE]", (path, out[-3:])
        last = json.loads(out[-2])
        assert last["error"]["code"] == 503 and "shutting down" in last["error"]["message"]
