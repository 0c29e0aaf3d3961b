"""Bad input over HTTP, on the real server: every malformed request gets a 4xx that says what
to fix, and a schemathesis run over the app's own OpenAPI schema finds no 5xx and no answer
outside the schema.

One server for the module: 10 TAT-QA contexts, answers of at most 8 tokens
(max_tokens_limit 8, so generated requests stay quick) and a 64 KiB body limit.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket

import httpx
import loopback
import pytest
from live_server import dev_contexts, running_server
from prereqs import DEV, require_module

from pipeline.server.guards.access import is_open

BODY_LIMIT = 65536
# The stalled-body test waits this out. The module's other requests send their bodies at
# once over loopback (64 KiB at most: milliseconds), so 2 s is ample for them too.
READ_TIMEOUT = 2.0
DEEP = 30_000  # levels of nesting: far past the parser's recursion, within BODY_LIMIT
TOKENS_LIMIT = 8
MAX_MODEL_LEN = 2048


@pytest.fixture(scope="module")
def server(prepared_default, engines_dir, tmp_path_factory):
    # The 10 contexts of test_access.py too: whichever module runs first builds the index.
    shared = tmp_path_factory.getbasetemp() / "index-dev10"
    with running_server(dev_contexts(10), engines_dir, tmp_path_factory.mktemp("input"),
                        index=str(shared),
                        max_tokens=4, max_tokens_limit=TOKENS_LIMIT,
                        max_body_bytes=BODY_LIMIT, request_read_timeout=READ_TIMEOUT) as base:
        yield base


def message_of(r: httpx.Response) -> str:
    """The message, checking the route's error shape: OpenAI's on /v1, FastAPI's elsewhere."""
    body = r.json()
    if r.request.url.path.startswith("/v1/"):
        assert set(body) == {"error"} and body["error"]["code"] == r.status_code, body
        return body["error"]["message"]
    assert set(body) == {"detail"} and isinstance(body["detail"], str), body
    return body["detail"]


JSON = {"content-type": "application/json"}
CHAT = {"messages": [{"role": "user", "content": "What is revenue?"}]}


@pytest.mark.parametrize("path,send,status,words", [
    # not JSON, not UTF-8, not an object
    ("/ask", {"content": b'{"question": ', "headers": JSON}, 422,
     ["invalid JSON at character 13"]),
    ("/v1/completions", {"content": b'{"prompt": "x",}', "headers": JSON}, 400,
     ["invalid JSON at character 15"]),
    ("/ask", {"content": b'{"question": "caf\xe9"}', "headers": JSON}, 422,
     ["not UTF-8", "position 17"]),
    ("/v1/chat/completions", {"content": '{"messages": []}'.encode("utf-16"),
                              "headers": JSON}, 400, ["UTF-8"]),
    ("/ask", {"content": b'["question"]', "headers": JSON}, 422, ["send a JSON object"]),
    ("/ask", {"content": b"", "headers": JSON}, 422, ["send a JSON object"]),
    ("/ask", {"content": b'{"question": "q"}', "headers": {"content-type": "text/plain"}},
     415, ["Content-Type: application/json", "text/plain"]),
    ("/v1/completions", {"content": b'{"prompt": "q"}'}, 415, ["no Content-Type"]),
    # UTF-16 / UTF-32 without a BOM: their NUL bytes are valid UTF-8, yet refused
    ("/ask", {"content": '{"question": "q"}'.encode("utf-16-le"), "headers": JSON}, 422,
     ["UTF-16 or UTF-32", "send UTF-8"]),
    ("/v1/completions", {"content": '{"prompt": "q"}'.encode("utf-32-le"), "headers": JSON},
     400, ["UTF-16 or UTF-32", "send UTF-8"]),
    ("/v1/chat/completions", {"content": '{"messages": []}'.encode("utf-16-be"),
                              "headers": JSON}, 400, ["send UTF-8"]),
    # JSON the parser cannot take: the route family's shape, naming the problem
    ("/ask", {"content": b"[" * DEEP + b"]" * DEEP, "headers": JSON}, 422,
     ["nested deeper than 64 levels"]),
    ("/v1/chat/completions", {"content": b'{"messages": ' + b"[" * DEEP + b"]" * DEEP
                              + b"}", "headers": JSON}, 400, ["nested deeper than 64"]),
    ("/ask", {"content": b'{"question": "q", "top_k": ' + b"7" * 5000 + b"}", "headers": JSON},
     422, ["integer with more than 4300 digits"]),
    ("/v1/completions", {"content": b'{"prompt": "x", "max_tokens": ' + b"9" * 5000 + b"}",
                         "headers": JSON}, 400, ["more than 4300 digits"]),
    # a lone UTF-16 surrogate, escaped in JSON, in any text field of any route
    ("/v1/chat/completions", {"content": b'{"messages": [{"role": "user", "content": '
                              b'"revenue \\ud800"}]}', "headers": JSON}, 400,
     ["messages.0.content: lone UTF-16 surrogate \\ud800"]),
    ("/v1/embeddings", {"content": b'{"input": ["ok", "\\udfff"]}', "headers": JSON}, 400,
     ["input.1: lone UTF-16 surrogate \\udfff"]),
    ("/v1/embeddings", {"content": b'{"input": "\\ud83d"}', "headers": JSON}, 400,
     ["input: lone UTF-16 surrogate"]),
    ("/v1/completions", {"content": b'{"prompt": "\\ud800x"}', "headers": JSON}, 400,
     ["prompt: lone UTF-16 surrogate"]),
    ("/ask", {"content": b'{"question": "what \\udc00?"}', "headers": JSON}, 422,
     ["question: lone UTF-16 surrogate"]),
    ("/search", {"content": b'{"query": "\\ud800"}', "headers": JSON}, 422,
     ["query: lone UTF-16 surrogate"]),
    # wrong types, unknown fields, blank text
    ("/ask", {"json": {"question": 5}}, 422, ["question: input should be a valid string"]),
    ("/ask", {"json": {"question": "q", "top_k": "many"}}, 422, ["top_k"]),
    ("/ask", {"json": {"question": "q", "temprature": 0.5}}, 422,
     ["temprature: unknown field; remove it"]),
    ("/v1/chat/completions", {"json": {**CHAT, "tools": []}}, 400,
     ["tools: unknown field, not supported"]),
    ("/ask", {"json": {"question": " \n\t "}}, 422, ["question", "whitespace"]),
    ("/search", {"json": {"query": "\u3000"}}, 422, ["query", "whitespace"]),
    ("/v1/chat/completions", {"json": {"messages": []}}, 400, ["messages"]),
    ("/v1/chat/completions", {"json": {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "x"}}]}]}}, 400, ["type", "'text'"]),
    ("/v1/completions", {"json": {"prompt": ""}}, 400, ["prompt"]),
    ("/v1/embeddings", {"json": {"input": []}}, 400, ["input"]),
    # out of range: refused, naming the field, never clamped
    ("/ask", {"json": {"question": "q", "temperature": 3}}, 422,
     ["temperature", "less than or equal to 2", "got 3"]),
    ("/ask", {"json": {"question": "q", "temperature": 1e-30}}, 422,
     ["temperature", "0 (greedy)"]),
    ("/ask", {"json": {"question": "q", "top_k": 21}}, 422, ["top_k", "20"]),
    ("/search", {"json": {"query": "q", "top_k": 101}}, 422, ["top_k", "100"]),
    ("/ask", {"json": {"question": "q", "max_tokens": TOKENS_LIMIT + 1}}, 422,
     [f"max_tokens: at most {TOKENS_LIMIT}", "max_tokens_limit"]),
    ("/ask", {"json": {"question": "q", "max_tokens": 0}}, 422, ["max_tokens", "1"]),
    ("/v1/completions", {"json": {"prompt": "x", "max_tokens": 10**12}}, 400,
     [f"max_tokens: at most {TOKENS_LIMIT}"]),
    ("/v1/chat/completions", {"json": {**CHAT, "max_completion_tokens": 9}}, 400,
     ["max_completion_tokens: at most"]),
    ("/v1/completions", {"json": {"prompt": "x", "top_p": 0}}, 400, ["top_p"]),
    ("/v1/completions", {"json": {"prompt": "x", "repetition_penalty": 1e-300}}, 400,
     ["repetition_penalty"]),
    ("/v1/completions", {"json": {"prompt": "x", "top_k": 10**6}}, 400,
     ["top_k: at most 49152", "vocabulary"]),
    ("/v1/completions", {"json": {"prompt": "x", "stop_token_ids": [49152]}}, 400,
     ["stop_token_ids: at most 49151"]),
    ("/v1/completions", {"json": {"prompt": [1, 2, 10**9]}}, 400, ["prompt: at most 49151"]),
    ("/v1/completions", {"json": {"prompt": "x", "min_tokens": 6, "max_tokens": 5}}, 400,
     ["min_tokens"]),
    ("/v1/completions", {"json": {"prompt": "x", "stop": ["a"] * 17}}, 400, ["stop"]),
    # OpenAI options this server does not implement
    ("/v1/completions", {"json": {"prompt": "x", "n": 17}}, 400, ["n"]),
    ("/v1/completions", {"json": {"prompt": "x", "n": 3, "best_of": 2}}, 400,
     ["best_of: must be at least n"]),
    ("/v1/completions", {"json": {"prompt": "x", "echo": True}}, 400, ["echo: not supported"]),
    ("/v1/completions", {"json": {"prompt": "x", "logit_bias": {"5": 1}}}, 400,
     ["logit_bias: not supported"]),
    ("/v1/completions", {"json": {"prompt": "x", "prompt_logprobs": 1, "stream": True}}, 400,
     ["prompt_logprobs: not available with stream: true"]),
    ("/v1/completions", {"json": {"prompt": "x", "prompt_logprobs": 21}}, 400,
     ["prompt_logprobs"]),
    ("/v1/chat/completions", {"json": {**CHAT, "top_logprobs": 2}}, 400,
     ["top_logprobs: needs logprobs: true"]),
    ("/v1/chat/completions", {"json": {**CHAT, "logprobs": True, "top_logprobs": 21}}, 400,
     ["top_logprobs"]),
    ("/v1/chat/completions", {"json": {**CHAT, "response_format": {"type": "json_schema"}}},
     400, ["response_format.json_schema: required"]),
    ("/v1/chat/completions", {"json": {**CHAT, "structured_outputs": {"regex": "a",
                                                                      "choice": ["b"]}}},
     400, ["exactly one of"]),
    ("/v1/chat/completions", {"json": {**CHAT, "structured_outputs": {"regex": "(a"}}},
     400, ["structured_outputs.regex: cannot be compiled"]),
    ("/v1/completions", {"json": {"prompt": "x", "stream_options": {"include_usage": True}}},
     400, ["stream_options: only with stream: true"]),
    ("/v1/embeddings", {"json": {"input": "revenue " * 400}}, 400,
     ["input[0]", "256 tokens", "split"]),
    # no such route: the same shapes
    ("/v1/nothing", {"json": {}}, 404, ["no route POST /v1/nothing"]),
    ("/health", {"json": {}}, 405, ["no route POST /health"]),
    # a model name is a name, never a path
    ("/v1/completions", {"json": {"model": "../../../../etc/passwd", "prompt": "x"}}, 404,
     ["does not exist"]),
    ("/v1/embeddings", {"json": {"model": "/etc/hostname", "input": "x"}}, 404,
     ["does not exist"]),
])
def test_bad_input_is_4xx_saying_what_to_fix(server, path, send, status, words) -> None:
    r = loopback.post(f"{server}{path}", timeout=60, **send)
    assert r.status_code == status, r.text
    text = message_of(r).lower()
    for word in words:
        assert word.lower() in text, text


def test_too_long_question_or_prompt_gives_the_limit_in_tokens(server) -> None:
    # Every digit is one token: 4000 characters, 4000 tokens, within the character limit.
    r = loopback.post(f"{server}/ask", timeout=60,
                      json={"question": "1234567890" * 400, "max_tokens": 4})
    assert r.status_code == 422, r.text
    m = re.search(r"question: (\d+) tokens is too long: with max_tokens=4, this model "
                  r"\(max_model_len=2048\) takes questions of at most (\d+) tokens \((\d+) go "
                  r"to the prompt template, which holds the question (\d) times\)", message_of(r))
    assert m, message_of(r)
    n_question, limit, template, copies = map(int, m.groups())
    # The generation prompt asks the question again after the passages: it is there twice.
    assert n_question == 4000 and copies == 2
    assert limit * copies + template + 4 <= MAX_MODEL_LEN < (limit + 1) * copies + template + 4
    ok = loopback.post(f"{server}/ask", timeout=120,
                       json={"question": "1234567890" * 30, "max_tokens": 2})
    assert ok.status_code == 200, ok.text

    r = loopback.post(f"{server}/v1/completions", timeout=60,
                      json={"prompt": [7] * MAX_MODEL_LEN, "max_tokens": 1})
    assert r.status_code == 400
    assert "prompt: 2048 tokens is too long; this model takes at most 2047" in message_of(r)
    r = loopback.post(f"{server}/v1/completions", timeout=60,
                      json={"prompt": [7] * 2045, "max_tokens": 8})
    assert r.status_code == 400
    assert "2053 were requested (2045 in the prompt, 8 in max_tokens): lower max_tokens to " \
           "at most 3" in message_of(r)


def test_body_over_the_limit_is_413_whether_declared_or_chunked(server) -> None:
    big = b'{"question": "' + b"a" * BODY_LIMIT + b'"}'
    r = loopback.post(f"{server}/ask", content=big, headers=JSON, timeout=60)
    assert r.status_code == 413
    assert f"over {BODY_LIMIT} bytes" in message_of(r) and "max_body_bytes" in message_of(r)

    def chunks():  # no Content-Length: the middleware must count what arrives
        yield b'{"prompt": "'
        for _ in range(BODY_LIMIT // 1024 + 1):
            yield b"b" * 1024

    r = loopback.post(f"{server}/v1/completions", content=chunks(), headers=JSON, timeout=60)
    assert r.status_code == 413 and "max_body_bytes" in message_of(r)
    # One byte under the limit is read and judged on its content (here: a too long question).
    exact = b'{"question": "' + b"a" * (BODY_LIMIT - 16) + b'"}'
    assert len(exact) == BODY_LIMIT
    r = loopback.post(f"{server}/ask", content=exact, headers=JSON, timeout=60)
    assert r.status_code == 422 and "at most 4000 characters" in message_of(r)


def test_a_valid_surrogate_pair_is_text_like_any_other(server) -> None:
    r = loopback.post(f"{server}/v1/embeddings", headers=JSON, timeout=60,
                      content=b'{"input": "growth \\ud83d\\udcc8"}')
    assert r.status_code == 200, r.text
    assert len(r.json()["data"][0]["embedding"]) == 384


def test_bodies_of_twice_the_limit_get_a_clean_413_every_time(server) -> None:
    """Declared or chunked, the server reads (and drops) the rest of a body of 2x the limit
    before it answers and closes: a close on unread bytes would reset the connection, which
    can reach the client before the 413 does."""
    port = int(server.rsplit(":", 1)[1])
    body = b'{"question": "' + b"a" * (2 * BODY_LIMIT - 16) + b'"}'
    assert len(body) == 2 * BODY_LIMIT
    outcomes: dict[str, int] = {}
    for i in range(40):
        chunked = i % 2 == 1
        head = (b"POST /ask HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                + (b"Transfer-Encoding: chunked\r\n\r\n" if chunked
                   else f"Content-Length: {len(body)}\r\n\r\n".encode()))
        payload = (b"".join(f"{len(c):x}\r\n".encode() + c + b"\r\n"
                            for c in (body[j:j + 8192] for j in range(0, len(body), 8192)))
                   + b"0\r\n\r\n") if chunked else body
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            try:
                sock.sendall(head + payload)
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
                outcome = answer.split(b"\r\n", 1)[0].decode()
            except ConnectionResetError:
                outcome = "reset"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes == {"HTTP/1.1 413 Request Entity Too Large": 40}, outcomes


def test_a_stalled_body_is_answered_408_and_closed(server) -> None:
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\": ")
        answer = b""
        while chunk := sock.recv(65536):  # the server closes after its answer
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer
    message = json.loads(body)["error"]["message"]
    assert f"not received within {READ_TIMEOUT:g} s" in message
    assert "request_read_timeout" in message


def test_the_body_read_timeout_counts_on_the_injected_clock() -> None:
    """A sender that drips a byte every 10 s (on the test's clock) is cut off at 30 s,
    after 3 bytes, whatever the real time."""
    from pipeline.server.guards.body_limit import BodyLimitMiddleware

    now = [0.0]
    reached: list[bytes] = []
    sent: list[dict] = []

    async def app(scope, receive, send):  # never reached: the body never completes
        reached.append((await receive())["body"])

    async def drip():
        now[0] += 10.0
        return {"type": "http.request", "body": b"{", "more_body": True}

    async def send(message):
        sent.append(message)

    guard = BodyLimitMiddleware(app, max_body_bytes=1 << 20, read_timeout=30.0,
                                clock=lambda: now[0])
    scope = {"type": "http", "method": "POST", "path": "/ask", "headers": [
        (b"content-type", b"application/json")], "app": None}
    asyncio.run(guard(scope, drip, send))
    assert reached == [] and now[0] == 30.0  # three 10 s drips read, then refused
    assert sent[0]["status"] == 408 and (b"connection", b"close") in sent[0]["headers"]
    assert "not received within 30 s" in json.loads(sent[1]["body"])["detail"]


@pytest.mark.parametrize("path", ["/health", "/", "/v1/models", "/metrics", "/openapi.json",
                                  "/static/app.js"])
def test_head_answers_as_get_without_a_body(server, path) -> None:
    get = loopback.get(f"{server}{path}", timeout=60)
    head = loopback.head(f"{server}{path}", timeout=60)
    assert get.status_code == head.status_code == 200, (head.status_code, head.text)
    assert head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]
    if path not in ("/metrics", "/health"):  # their bodies change between two requests
        assert head.headers["content-length"] == get.headers["content-length"]


def test_head_on_a_post_only_route_is_405_like_get(server) -> None:
    for method in ("GET", "HEAD"):
        r = loopback.request(method, f"{server}/ask", timeout=60)
        assert r.status_code == 405 and "POST" in r.headers["allow"], (method, r.headers)


def test_no_cors_headers_without_an_allow_list(server) -> None:
    r = loopback.options(f"{server}/ask", headers={
        "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers
    r = loopback.get(f"{server}/health", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers


def test_openapi_documents_the_running_limits(server) -> None:
    schema = loopback.get(f"{server}/openapi.json").json()
    ask = schema["components"]["schemas"]["AskRequest"]["properties"]
    assert {"type": "integer", "minimum": 1, "maximum": TOKENS_LIMIT} in [
        {k: b[k] for k in ("type", "minimum", "maximum") if k in b}
        for b in ask["max_tokens"]["anyOf"]]
    sampling = schema["components"]["schemas"]["CompletionRequest"]["properties"]
    assert sampling["top_k"]["maximum"] == 49152
    assert sampling["stop_token_ids"]["anyOf"][0]["items"]["maximum"] == 49151
    for path, ops in schema["paths"].items():
        for op in ops.values():
            codes = set(op["responses"])
            assert "401" in codes or is_open(path), path
            if "requestBody" in op:
                assert {"413", "415", "503"} <= codes and (
                    "400" if path.startswith("/v1/") else "422") in codes, path


# -- schemathesis over the app's own schema -------------------------------------------------
EXAMPLES = 8  # per operation and mode (valid, invalid data), derandomized: about 20 s in all


def test_schemathesis_finds_no_5xx_and_no_answer_outside_the_schema(server) -> None:
    schemathesis = require_module("schemathesis", DEV)
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        negative_data_rejection,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_headers_conformance, response_schema_conformance,
              negative_data_rejection]
    schema = schemathesis.openapi.from_url(f"{server}/openapi.json")
    statuses: dict[str, list[int]] = {}
    expected = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        # Invalid data needs something to break: routes without a body or parameters have none.
        modes = list(schemathesis.GenerationMode) if len(operation.body) else [
            schemathesis.GenerationMode.POSITIVE]
        expected += len(modes)
        for mode in modes:
            seen = statuses.setdefault(f"{operation.label} {mode.value}", [])

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case) -> None:
                seen.append(case.call_and_validate(checks=checks, timeout=120).status_code)  # noqa: B023

            run()
    total = sum(len(v) for v in statuses.values())
    print(f"schemathesis: {len(statuses)} operation/mode pairs, {total} examples, statuses "
          f"{sorted({c for v in statuses.values() for c in v})}, 0 failures")
    # Every operation ran: 7 with a body (both modes), the GET routes and POST /ping.
    assert len(statuses) == expected >= 7 * 2 + 6 and all(statuses.values()), statuses
    assert any(200 <= c < 300 for v in statuses.values() for c in v)
