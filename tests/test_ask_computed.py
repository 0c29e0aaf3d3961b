"""/ask on the real server computes numbers from the retrieved table and cites its cells."""

from __future__ import annotations

import json

import loopback
import pytest

# Context 0 of TAT-QA dev: sales by contract type (in millions), 2019 / 2018 / 2017.
QUESTION = "What is the change in Other in 2019 from 2018?"


@pytest.fixture(scope="module")
def server(ask_server) -> str:
    return ask_server[0]


def check_computed(body: dict) -> None:
    assert body["short_answer"] == "-12.6" and body["scale"] == "million"
    assert body["answer_type"] == "arithmetic"
    assert body["derivation"] == "44.1 - 56.7 = -12.6"
    assert "-12.6" in body["answer"] and body["derivation"] in body["answer"]
    sources = {s["id"]: s for s in body["sources"]}
    assert len(body["citations"]) == 2
    for cite in body["citations"]:
        rows = sources[cite["source_id"]]["table"]["rows"]
        assert rows[cite["row_index"]][cite["column_index"]] == cite["value"]
        assert cite["row"] == "Other"
    # cited in operand order: the earlier period, then the later
    assert [c["value"] for c in body["citations"]] == ["56.7", "44.1"]
    assert [c["column"].split()[-1] for c in body["citations"]] == ["2018", "2019"]


def test_ask_returns_the_computed_answer_with_its_derivation(server) -> None:
    r = loopback.post(f"{server}/ask", json={"question": QUESTION}, timeout=300)
    assert r.status_code == 200, r.text
    body = r.json()
    check_computed(body)
    assert body["usage"]["completion_tokens"] == 0  # stated, not generated


def test_stream_final_event_carries_the_same_fields(server) -> None:
    events = []
    with loopback.stream("POST", f"{server}/ask", timeout=300,
                         json={"question": QUESTION, "stream": True}) as r:
        assert r.status_code == 200
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1]["type"] == "final" and events[0]["type"] == "token"
    final = events[-1]
    final["answer"] = "".join(e["text"] for e in events[:-1])
    check_computed(final)


def test_no_operand_means_no_number(server) -> None:
    r = loopback.post(f"{server}/ask", timeout=300, json={
        "question": "What was the percentage change in zebra crossings licences from 2018 to 2019?"})
    body = r.json()
    assert r.status_code == 200
    assert body["short_answer"] is None and body["derivation"] is None and not body["citations"]
    assert "could not find" in body["answer"]


def test_a_question_about_the_text_gets_an_extract_with_its_sentence(server) -> None:
    # Context 0's paragraph: "On a cost-plus type contract, we are paid our allowable incurred
    # costs plus a profit ..."; no table row is about it.
    r = loopback.post(f"{server}/ask", timeout=300,
                      json={"question": "What is the company paid on a cost-plus type contract?"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer_type"] == "span" and body["derivation"] is None
    assert "allowable incurred costs plus a profit" in body["short_answer"]
    [cite] = body["citations"]
    assert set(cite) == {"source_id", "quote"} and body["short_answer"] in cite["quote"]
    sources = {s["id"]: s for s in body["sources"]}
    assert " ".join(cite["quote"].split()[:8]) in " ".join(sources[cite["source_id"]]["text"].split())
    assert cite["quote"].rstrip(".") in body["answer"]
    assert body["usage"]["completion_tokens"] == 0  # quoted, not generated
