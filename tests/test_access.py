"""Access and overload on the real server: API key, CORS allow-list, admission control.

One server for the module, with an API key, one allowed origin and small admission bounds
(2 requests, 2048 tokens in flight), so that a burst overflows them at once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time

import httpx
import loopback
import pytest
from live_server import dev_contexts, running_server

from pipeline.server.errors import RequestRejected
from pipeline.server.guards.admission import Admission
from pipeline.settings import Settings
from pipeline.settings_sources import SettingsError, load_settings

KEY = "finrag-test-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {KEY}"}
FRONT = "http://front.example:3000"
MAX_REQUESTS, MAX_TOKENS = 2, 2048


@pytest.fixture(scope="module")
def server(prepared_default, engines_dir, tmp_path_factory):
    # The 10 contexts of test_http_input.py too: whichever module runs first builds the index.
    shared = tmp_path_factory.getbasetemp() / "index-dev10"
    with running_server(dev_contexts(10), engines_dir, tmp_path_factory.mktemp("access"),
                        index=str(shared),
                        max_tokens=8, max_tokens_limit=1500, api_key=KEY,
                        cors_origins=[FRONT], max_queued_requests=MAX_REQUESTS,
                        max_queued_tokens=MAX_TOKENS) as base:
        yield base


# What each route's answer holds when it is served.
ANSWERED = {"/ask": '"answer"', "/search": '"sources"', "/v1/completions": '"choices"',
            "/v1/chat/completions": '"choices"', "/v1/embeddings": '"embedding"',
            "/v1/models": '"data"', "/metrics": "finrag:admitted_requests",
            "/openapi.json": '"paths"', "/docs": "swagger"}
ROUTES = [("POST", "/ask", {"question": "What was revenue?", "max_tokens": 2}),
          ("POST", "/search", {"query": "revenue"}),
          ("POST", "/v1/completions", {"prompt": "Revenue is", "max_tokens": 2}),
          ("POST", "/v1/chat/completions",
           {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}),
          ("POST", "/v1/embeddings", {"input": "revenue"}),
          ("GET", "/v1/models", None), ("GET", "/metrics", None),
          ("GET", "/openapi.json", None), ("GET", "/docs", None)]


@pytest.mark.parametrize("method,path,body", ROUTES)
def test_every_route_but_health_and_the_page_needs_the_key(server, method, path, body) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-key-0123456789abcdef"},
                    {"Authorization": f"Basic {KEY}"}, {"Authorization": KEY}):
        r = loopback.request(method, f"{server}{path}", json=body, headers=headers, timeout=60)
        assert r.status_code == 401, (headers, r.text)
        assert r.headers["www-authenticate"].startswith("Bearer")
        text = r.text
        assert "Authorization: Bearer" in text and "wrong-key" not in text and KEY not in text
        assert ("error" in r.json()) == path.startswith("/v1/")
    ok = loopback.request(method, f"{server}{path}", json=body, timeout=120,
                          headers={"Authorization": f"bearer {KEY}"})  # the scheme is caseless
    assert ok.status_code == 200, ok.text
    assert ANSWERED[path] in ok.text, ok.text[:300]  # the route's own answer, not a refusal


@pytest.mark.parametrize("path", ["/health", "/", "/static/app.js"])
def test_health_and_the_web_page_are_open(server, path) -> None:
    r = loopback.get(f"{server}{path}")
    assert r.status_code == 200, r.text
    served = {"/health": '"status":"ok"', "/": "<title>", "/static/app.js": "sessionStorage"}
    assert served[path] in r.text.replace(" ", ""), r.text[:300]


def test_openai_client_sends_the_key(server) -> None:
    import openai

    good = openai.OpenAI(base_url=f"{server}/v1", api_key=KEY, timeout=120)
    assert good.completions.create(model="default", prompt="Net income is",
                                   max_tokens=2).choices[0].text
    bad = openai.OpenAI(base_url=f"{server}/v1", api_key="not-the-key", timeout=60)
    with pytest.raises(openai.AuthenticationError):
        bad.models.list()


def test_the_key_is_never_logged_or_shown(server, caplog) -> None:
    schema = loopback.get(f"{server}/openapi.json", headers=AUTH).json()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert schema["paths"]["/ask"]["post"]["security"] == [{"bearer": []}]
    assert "security" not in schema["paths"]["/health"]["get"]
    access = logging.getLogger("uvicorn.access")
    level = access.level
    access.setLevel(logging.INFO)
    # uvicorn's access logger does not propagate to the root logger caplog listens on.
    access.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.DEBUG):
            loopback.post(f"{server}/search", json={"query": "revenue"}, headers=AUTH)
            loopback.get(f"{server}/v1/models", headers={"Authorization": f"Bearer {KEY}x"})
            # A key in the query string (not how the server takes it, but clients try).
            for query in (f"api_key={KEY}", f"x=1&token={KEY}&y=2", f"Key={KEY}"):
                loopback.get(f"{server}/v1/models?{query}", headers=AUTH)
            shown = [loopback.get(f"{server}{p}", headers=AUTH).text
                     for p in ("/openapi.json", "/metrics")]
    finally:
        access.removeHandler(caplog.handler)
        access.setLevel(level)
    # The server's records (the client's own httpx log holds the URLs it was given).
    logged = [r.getMessage() for r in caplog.records
              if not r.name.startswith(("httpx", "httpcore"))]
    assert any("/search" in m for m in logged)  # the access log did run
    # uvicorn's access log and finrag's (finrag.access, with request ids) both redact.
    for name in ("uvicorn.access", "finrag.access"):
        redacted = [r.getMessage() for r in caplog.records
                    if r.name == name and "/v1/models?" in r.getMessage()]
        assert len(redacted) == 3 and all("=[redacted]" in m for m in redacted), redacted
        assert any("x=1&token=[redacted]&y=2" in m for m in redacted)
    assert all(KEY not in text for text in logged + shown)
    settings = Settings(api_key=KEY)
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert KEY not in text and "**********" in text
    with pytest.raises(SettingsError) as err:
        load_settings(None, {"api_key": KEY, "max_tokens": 99999}, environ={})
    assert KEY not in str(err.value) and "max_tokens" in str(err.value)
    with pytest.raises(SettingsError) as err:
        load_settings(None, {}, environ={"FINRAG_API_KEY": f"{KEY}, short"})
    assert KEY not in str(err.value) and "at least 16 characters" in str(err.value)


def test_cors_allows_exactly_the_listed_origin(server) -> None:
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization,content-type"}
    r = loopback.options(f"{server}/ask", headers={"Origin": FRONT, **preflight})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == FRONT
    assert "POST" in r.headers["access-control-allow-methods"]
    assert "authorization" in r.headers["access-control-allow-headers"].lower()
    r = loopback.options(f"{server}/ask", headers={"Origin": "https://evil.example", **preflight})
    assert r.status_code == 400 and "access-control-allow-origin" not in r.headers
    for extra in ({"Access-Control-Request-Headers": "x-custom"},
                  {"Access-Control-Request-Method": "DELETE"}):
        r = loopback.options(f"{server}/ask", headers={"Origin": FRONT, **preflight, **extra})
        assert r.status_code == 400, extra
    r = loopback.post(f"{server}/search", json={"query": "revenue"},
                      headers={"Origin": FRONT, **AUTH})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == FRONT
    r = loopback.post(f"{server}/search", json={"query": "q"}, headers={"Origin": FRONT})
    assert r.status_code == 401 and r.headers["access-control-allow-origin"] == FRONT
    r = loopback.post(f"{server}/search", json={"query": "revenue"},
                      headers={"Origin": "https://evil.example", **AUTH})
    assert "access-control-allow-origin" not in r.headers


def _admitted(server: str) -> tuple[float, float]:
    text = loopback.get(f"{server}/metrics", headers=AUTH).text
    values = dict(line.rsplit(" ", 1) for line in text.splitlines()
                  if line.startswith("finrag:admitted_"))
    return float(values["finrag:admitted_requests"]), float(values["finrag:admitted_tokens"])


def _wait_idle(server: str) -> None:
    deadline = time.monotonic() + 30
    while _admitted(server) != (0.0, 0.0):
        assert time.monotonic() < deadline, _admitted(server)
        time.sleep(0.1)


def test_a_burst_past_the_bound_gets_503_at_once_and_the_admitted_complete(server) -> None:
    _wait_idle(server)

    order = itertools.count()

    async def one(client: httpx.AsyncClient, i: int) -> tuple[int, int, httpx.Response]:
        r = await client.post("/ask", json={"question": f"What was revenue in {2010 + i}?"})
        return r.status_code, next(order), r  # the rank in which the answers came back

    async def burst():
        async with httpx.AsyncClient(base_url=server, headers=AUTH, timeout=300) as c:
            return await asyncio.gather(*[one(c, i) for i in range(8)])

    results = asyncio.run(burst())
    done = [(t, r) for s, t, r in results if s == 200]
    refused = [(t, r) for s, t, r in results if s == 503]
    assert len(done) + len(refused) == 8 and len(done) >= MAX_REQUESTS and refused
    for _, r in done:
        assert r.json()["answer"]
    for _, r in refused:
        assert int(r.headers["retry-after"]) >= 1
        assert "max_queued_requests=2" in r.json()["detail"]
    # Refusals do not wait for the engine: each came back before any admitted answer
    # (order of arrival, not seconds).
    assert max(n for n, _ in refused) < min(n for n, _ in done)
    _wait_idle(server)


def test_the_token_bound_and_a_dropped_stream_release_their_share(server) -> None:
    _wait_idle(server)
    long = {"prompt": "Net income is", "max_tokens": 1500, "ignore_eos": True, "stream": True}
    with loopback.stream("POST", f"{server}/v1/completions", json=long, headers=AUTH,
                         timeout=120) as held:
        assert held.status_code == 200
        lines = held.iter_lines()  # kept: a dropped iterator would close the stream
        next(lines)  # generating: its 1500-odd tokens are held
        requests, tokens = _admitted(server)
        assert requests == 1 and tokens > 1500
        r = loopback.post(f"{server}/v1/completions", headers=AUTH, timeout=60,
                          json={"prompt": "Revenue is", "max_tokens": 600})
        assert r.status_code == 503 and r.headers["retry-after"].isdigit()
        assert "max_queued_tokens=2048" in r.json()["error"]["message"]
        r = loopback.post(f"{server}/v1/completions", headers=AUTH, timeout=120,
                          json={"prompt": "Revenue is", "max_tokens": 4})
        assert r.status_code == 200 and r.json()["choices"][0]["text"]  # a small one fits
    _wait_idle(server)  # the client left mid-stream: its share came back


def test_admission_counts_and_refuses_past_either_bound() -> None:
    adm = Admission(max_requests=2, max_tokens=100)
    big = adm.admit(500)  # an empty server takes any single request
    with pytest.raises(RequestRejected) as err:
        adm.admit(1)
    assert err.value.status == 503 and err.value.headers == {"Retry-After": "1"}
    adm.release(big)
    a, b = adm.admit(60), adm.admit(40)
    with pytest.raises(RequestRejected, match="max_queued_requests=2"):
        adm.admit(0)
    adm.release(a)
    with pytest.raises(RequestRejected, match="needs 61 tokens"):
        adm.admit(61)
    c = adm.admit(60)
    for t in (b, c):
        adm.release(t)
    assert (adm.requests, adm.tokens, adm.rejected) == (0, 0, 3)

    now = [100.0]
    fresh = Admission(max_requests=1, max_tokens=100, clock=lambda: now[0])
    first = fresh.admit(1)
    now[0] += 1.2  # nothing finished yet: Retry-After is the age of the oldest in flight
    with pytest.raises(RequestRejected) as err:
        fresh.admit(1)
    assert err.value.headers == {"Retry-After": "2"}
    fresh.release(first)  # took 1.2 s: now the mean of the finished ones counts
    second = fresh.admit(1)
    now[0] += 30.0  # however long the one in flight runs
    with pytest.raises(RequestRejected) as err:
        fresh.admit(1)
    assert err.value.headers == {"Retry-After": "2"}
    fresh.release(second)  # 30 s: the mean moves to 0.8 * 1.2 + 0.2 * 30 = 6.96
    fresh.admit(1)
    now[0] += 500
    with pytest.raises(RequestRejected) as err:
        fresh.admit(1)
    assert err.value.headers == {"Retry-After": "7"}


def test_settings_defaults_and_checks() -> None:
    s = Settings()
    assert s.max_body_bytes == 1 << 20 and s.api_key is None and s.cors_origins == []
    assert s.max_request_tokens(s.engine.max_model_len) == s.engine.max_model_len - 1
    env = load_settings(None, {}, environ={"FINRAG_CORS_ORIGINS": f"{FRONT}, https://a.b",
                                           "FINRAG_API_KEY": KEY})
    assert env.cors_origins == [FRONT, "https://a.b"] and env.key_collections() == {KEY.encode(): None}
    # Tenants' keys, as JSON in their variable; a key of api_key still sees every collection.
    tenant = "tenant-key-0123456789"
    both = load_settings(None, {}, environ={"FINRAG_API_KEY": KEY,
                                            "FINRAG_API_KEYS": f'{{"{tenant}": ["alpha"]}}'})
    assert both.key_collections() == {KEY.encode(): None, tenant.encode(): frozenset({"alpha"})}
    for bad, words in (("{not json", "api_keys: not valid JSON"),
                       ('{"short": ["alpha"]}', "16 characters"),
                       (f'{{"{tenant}": []}}', "non-empty list"),
                       (f'{{"{tenant}": ["a/b"]}}', "collection 'a/b'")):
        with pytest.raises(SettingsError, match=words) as refused:
            load_settings(None, {}, environ={"FINRAG_API_KEYS": bad})
        assert tenant not in str(refused.value)  # a key is never shown in an error
    for bad, words in (({"cors_origins": ["*"]}, "refused"),
                       ({"cors_origins": ["https://a.b/"]}, "trailing slash"),
                       ({"max_queued_tokens": 100}, "max_queued_tokens"),
                       ({"max_tokens_limit": 4}, "max_tokens")):
        with pytest.raises(SettingsError, match=words):
            load_settings(None, bad, environ={})
    assert json.loads(Settings(api_key=KEY).model_dump_json())["api_key"] == "**********"
