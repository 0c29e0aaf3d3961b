"""The real server (uvicorn in a thread, real engine and retriever) over HTTP.

One server for the module: a 40-context TAT-QA index, short answers (max_tokens 8).
"""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import loopback
import pytest
from live_server import dev_contexts, running_server

N_CONTEXTS = 40


@pytest.fixture(scope="module")
def dev() -> list[dict]:
    return dev_contexts(N_CONTEXTS)


@pytest.fixture(scope="module")
def server(dev, prepared_default, engines_dir, tmp_path_factory):
    with running_server(dev, engines_dir, tmp_path_factory.mktemp("server"),
                        max_tokens=8) as base:
        yield base


def _words(text: str) -> set[str]:
    """Words of 4+ letters and numbers, lowercased: what a passage and its source share."""
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}|\d[\d,.]*\d", text)}


def test_ask_answers_dev_questions_from_their_own_context(server, dev) -> None:
    picks = [dev[i] for i in range(0, N_CONTEXTS, 5)]  # 8 questions, 8 contexts

    async def go():
        async with httpx.AsyncClient(base_url=server, timeout=300) as c:
            return await asyncio.gather(*[
                c.post("/ask", json={"question": ctx["questions"][0]["question"]})
                for ctx in picks])

    responses = asyncio.run(go())
    hits = 0
    for ctx, r in zip(picks, responses, strict=True):
        assert r.status_code == 200, r.text
        body = r.json()
        assert set(body["timings"]) >= {"intent_ms", "retrieve_ms", "generate_ms", "ttft_ms",
                                        "total_ms"}
        if body["intent"] != "finance_question":
            continue
        assert all({"id", "title", "text", "score"} <= set(s) for s in body["sources"])
        own = [s for s in body["sources"] if s["doc_id"] == ctx["table"]["uid"]]
        hits += bool(own)
        # A source of its own context carries that context's text (table cells or
        # paragraph words), not just its id.
        held = _words(" ".join([*(c for row in ctx["table"]["table"] for c in row),
                                *(p["text"] for p in ctx["paragraphs"])]))
        for s in own:
            assert len(_words(s["text"]) & held) >= 5, (s["text"], ctx["table"]["uid"])
        if body["short_answer"] is not None:  # computed from a table: stated, not generated
            assert body["citations"] and body["usage"]["completion_tokens"] == 0
            continue
        assert body["answer"] and body["usage"]["completion_tokens"] >= 1
        # The generation prompt starts with the intent prompt's blocks: prefix-cache hits.
        assert body["usage"]["generate_cached_tokens"] >= 16
    rate = hits / len(picks)
    print(f"/ask own-context source rate: {hits}/{len(picks)} = {rate:.2f}")
    assert rate >= 0.5  # measured 5/8 on this index (top_k 3)


def test_ask_streams_tokens_then_one_final_event(server) -> None:
    events = []
    with loopback.stream("POST", f"{server}/ask", timeout=300, json={
            "question": "What was the total revenue in 2019?", "stream": True,
            "max_tokens": 4, "top_k": 2}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    assert events[-1]["type"] == "final"
    assert all(e["type"] == "token" for e in events[:-1]) and len(events) >= 2
    final = events[-1]
    assert final["intent"] == "finance_question"
    # top_k passages, and the table a computed answer cites when it was found deeper
    cited = {c["source_id"] for c in final["citations"]}
    assert len(final["sources"]) == 2 or (len(final["sources"]) == 3
                                          and final["sources"][2]["id"] in cited)
    assert final["short_answer"] is not None or final["usage"]["completion_tokens"] >= 1
    assert final["timings"]["total_ms"] > 0


CONTRACT = {"short_answer", "scale", "answer_type", "derivation", "citations"}


def test_answers_carry_the_short_answer_fields_in_json_and_the_final_event(server) -> None:
    from pipeline.server.api_models import AskAnswer, AskResult

    question = {"question": "What was the total revenue in 2019?", "max_tokens": 4}
    body = loopback.post(f"{server}/ask", json=question, timeout=300).json()
    assert CONTRACT <= set(body), body
    AskAnswer.model_validate(body)  # what /openapi.json documents
    with loopback.stream("POST", f"{server}/ask", timeout=300,
                         json={**question, "stream": True}) as r:
        final = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")][-1]
    assert final["type"] == "final" and CONTRACT <= set(final) and "answer" not in final
    AskResult.model_validate({k: v for k, v in final.items() if k != "type"})
    # Empty until a number is computed or a span found: null, "" and [] (never missing).
    if body["short_answer"] is None:
        assert body["derivation"] is None and body["citations"] == [] and body["scale"] == ""


def test_answers_stop_when_they_have_answered(server, dev) -> None:
    # A budget far over one sentence: the stop rules end these answers, not max_tokens.
    for ctx in dev[:2]:
        body = loopback.post(f"{server}/ask", timeout=300, json={
            "question": ctx["questions"][0]["question"], "max_tokens": 160}).json()
        if body["intent"] != "finance_question":
            continue
        text = body["answer"]
        assert body["finish_reason"] == "stop" and body["usage"]["completion_tokens"] < 160, body
        assert text and "\n" not in text and " | " not in text and not text.startswith("[")
        words = text.lower().split()
        grams = [tuple(words[i:i + 4]) for i in range(len(words) - 3)]
        assert len(grams) == len(set(grams)), text


def test_openapi_documents_the_answer_fields(server) -> None:
    schema = loopback.get(f"{server}/openapi.json").json()
    comps = schema["components"]["schemas"]
    assert CONTRACT | {"answer", "sources", "filing"} <= set(comps["AskAnswer"]["properties"])
    # A cell (row, column, value, indices), a sentence (quote), or a tagged fact (doc_id,
    # fact), with the page of a PDF filing.
    assert set(comps["Citation"]["properties"]) == {"source_id", "row", "column", "value",
                                                     "row_index", "column_index", "quote",
                                                     "doc_id", "fact", "page"}
    assert {"doc_id", "title", "company", "form", "fiscal_year"} <= \
        set(comps["Filing"]["properties"])
    assert "table" in comps["Source"]["properties"]
    assert comps["AskAnswer"]["properties"]["scale"]["enum"] == ["", "thousand", "million",
                                                                 "billion", "percent"]
    stream = schema["paths"]["/ask"]["post"]["responses"]["200"]["content"]["text/event-stream"]
    events = stream["schema"]["properties"]["data"]["contentSchema"]["oneOf"]
    final = next(e for e in events if e["properties"]["type"] == {"const": "final"})
    assert CONTRACT | {"sources"} <= set(final["properties"]) and "answer" not in final["properties"]
    # Every reference in the document points at a component that is there.
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(schema)))
    assert refs and refs <= set(comps), refs - set(comps)


def test_small_talk_skips_retrieval(server) -> None:
    r = loopback.post(f"{server}/ask", json={"question": "hi there, how are you?"}, timeout=120)
    body = r.json()
    assert body["intent"] == "small_talk", body["intent_scores"]
    assert body["sources"] == [] and body["timings"]["retrieve_ms"] is None
    assert body["usage"]["completion_tokens"] == 0 and body["answer"]


def test_search_returns_sources_of_the_question_context(server, dev) -> None:
    hits = 0
    for ctx in dev[:10]:
        r = loopback.post(f"{server}/search", json={"query": ctx["questions"][-1]["question"],
                                                    "top_k": 5}, timeout=60)
        assert r.status_code == 200
        sources = r.json()["sources"]
        assert len(sources) == 5
        hits += any(s["doc_id"] == ctx["table"]["uid"] for s in sources)
    print(f"/search own-context hit@5: {hits}/10")
    assert hits >= 6


def test_openai_client(server) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="unused", timeout=120)
    models = [m.id for m in client.models.list().data]
    assert models[0] == "default" and len(models) == 2
    chat = client.chat.completions.create(
        model=models[0], messages=[{"role": "user", "content": "What is revenue?"}],
        max_tokens=4, temperature=0)
    assert chat.choices[0].message.content and chat.usage.completion_tokens == 4
    pieces = [c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model=models[0], messages=[{"role": "user", "content": "What is revenue?"}],
        max_tokens=4, temperature=0, stream=True) if c.choices]
    assert "".join(pieces) == chat.choices[0].message.content
    comp = client.completions.create(model=models[0], prompt="Net income is", max_tokens=3,
                                     temperature=0)
    assert comp.choices[0].text and comp.choices[0].finish_reason == "length"
    emb = client.embeddings.create(model=models[1], input=["revenue", "net income"])
    assert len(emb.data) == 2 and len(emb.data[0].embedding) == 384
    assert abs(sum(x * x for x in emb.data[0].embedding) - 1) < 1e-3


def _metrics(server: str) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for fam in text_string_to_metric_families(loopback.get(f"{server}/metrics").text):
        for s in fam.samples:
            key = s.name + json.dumps(s.labels, sort_keys=True)
            out[key] = s.value
    return out


def test_metrics_parse_and_move(server) -> None:
    before = _metrics(server)
    assert 'vllm:num_requests_running{"model_name": "default"}' in before
    assert any(k.startswith("vllm:prefix_cache_hits_total") for k in before)
    assert any(k.startswith("vllm:spec_decode_num_draft_tokens_total") for k in before)
    assert any(k.startswith("vllm:spec_decode_num_accepted_tokens_total") for k in before)
    loopback.post(f"{server}/ask", json={"question": "hello!"}, timeout=120)
    after = _metrics(server)
    e2e = 'vllm:e2e_request_latency_seconds_count{"model_name": "default"}'
    assert after[e2e] == before.get(e2e, 0) + 1
    key = 'finrag:requests_total{"intent": "small_talk"}'
    assert after[key] == before.get(key, 0) + 1
    q = 'vllm:prefix_cache_queries_total{"model_name": "default"}'
    assert after[q] > before[q]


def test_health(server) -> None:
    r = loopback.get(f"{server}/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"


@pytest.mark.parametrize("path,body,status,words", [
    ("/ask", {}, 422, "question"),
    ("/ask", {"question": ""}, 422, "question"),
    ("/ask", {"question": "  \n "}, 422, "whitespace"),
    ("/search", {"query": "   "}, 422, "whitespace"),
    ("/v1/completions", {"model": "default", "prompt": "x", "max_tokens": 100000}, 400,
     "max_tokens: at most 2047"),
    ("/ask", {"question": "q", "top_k": 0}, 422, "top_k"),
    ("/ask", {"question": "q", "temprature": 0.5}, 422, "unknown field"),
    ("/ask", "not json", 415, "Content-Type: application/json"),
    ("/search", {"query": "q", "top_k": 1000}, 422, "top_k"),
    ("/v1/chat/completions", {"model": "default", "messages": []}, 400, "messages"),
    ("/v1/completions", {"model": "default", "prompt": "x", "temperature": 5}, 400,
     "temperature"),
    ("/v1/completions", {"model": "nope", "prompt": "x"}, 404, "does not exist"),
    ("/v1/embeddings", {"input": []}, 400, "input"),
])
def test_bad_input_is_4xx_with_a_message(server, path, body, status, words) -> None:
    kw = {"content": body} if isinstance(body, str) else {"json": body}
    r = loopback.post(f"{server}{path}", timeout=60, **kw)
    assert r.status_code == status, r.text
    assert words.lower() in r.text.lower()


def test_too_long_prompt_is_400(server) -> None:
    r = loopback.post(f"{server}/v1/completions", timeout=60,
                      json={"model": "default", "prompt": "revenue " * 5000, "max_tokens": 2})
    assert r.status_code == 400 and "tokens" in r.json()["error"]["message"]
