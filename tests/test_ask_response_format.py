"""/ask with response_format, through the real server on loopback: json_object gives the
typed answer object built from the computed fields, json_schema has the answer generated
under the caller's schema (validated with jsonschema), streamed as text with the object in
the final event; a schema that cannot be compiled is refused before any stage runs."""

from __future__ import annotations

import json

import httpx
import loopback
import pytest
from prereqs import DEV, require_module

from pipeline.server.api_models import AskObject

# Context 0 of TAT-QA dev (as in test_ask_computed): computed -12.6 million from two cells.
# The server: conftest.py's ask_server.
QUESTION = "What is the change in Other in 2019 from 2018?"
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["change", "unit"],
          "properties": {"change": {"type": "number"},
                         "unit": {"enum": ["thousand", "million", "billion", "percent"]}}}


@pytest.fixture(scope="module")
def server(ask_server):
    return ask_server


def ask(server, **body) -> httpx.Response:
    return loopback.post(f"{server[0]}/ask", json={"question": QUESTION, **body}, timeout=600)


def events(server, **body) -> list[dict]:
    with loopback.stream("POST", f"{server[0]}/ask", timeout=600,
                         json={"question": QUESTION, "stream": True, **body}) as r:
        assert r.status_code == 200
        return [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]


def json_schema(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}


def test_json_object_is_the_typed_answer(server) -> None:
    jsonschema = require_module("jsonschema", DEV)
    r = ask(server, response_format={"type": "json_object"})
    assert r.status_code == 200, r.text
    obj = r.json()
    jsonschema.validate(obj, AskObject.model_json_schema())
    assert set(obj) == {"value", "scale", "answer_type", "derivation", "citations", "answer"}
    assert obj["value"] == -12.6 and isinstance(obj["value"], float)  # a number, not text
    assert obj["scale"] == "million" and obj["answer_type"] == "arithmetic"
    assert obj["derivation"] == "44.1 - 56.7 = -12.6"
    assert [c["value"] for c in obj["citations"]] == ["56.7", "44.1"]
    # The same fields as the default answer, typed.
    full = ask(server).json()
    assert obj["answer"] == full["answer"] and obj["citations"] == full["citations"]
    # Nothing computed: value null, the prose still answers.
    none = ask(server, question="What was the percentage change in zebra crossings licences "
                                "from 2018 to 2019?", response_format={"type": "json_object"})
    jsonschema.validate(none.json(), AskObject.model_json_schema())
    assert none.json()["value"] is None and none.json()["answer"]


def test_json_object_stream_ends_with_the_object(server) -> None:
    got = events(server, response_format={"type": "json_object"})
    assert [e["type"] for e in got[:-1]] == ["token"] * (len(got) - 1)
    assert got[-1]["type"] == "final"
    obj = got[-1]["object"]
    assert obj["value"] == -12.6 and obj["answer"] == "".join(e["text"] for e in got[:-1])


def test_json_schema_answer_is_generated_under_the_schema(server) -> None:
    jsonschema = require_module("jsonschema", DEV)
    r = ask(server, response_format=json_schema(SCHEMA))
    assert r.status_code == 200, r.text
    # Generated under the grammar (the computed prose, which is no JSON, is skipped).
    jsonschema.validate(r.json(), SCHEMA)
    # A list of objects: repeated keys are structure, not a loop to cut.
    rows = {"type": "array", "minItems": 2, "maxItems": 3, "items": SCHEMA}
    r = ask(server, response_format=json_schema(rows), max_tokens=120)
    assert r.status_code == 200, r.text
    jsonschema.validate(r.json(), rows)


def test_json_schema_streams_the_json_text(server) -> None:
    jsonschema = require_module("jsonschema", DEV)
    got = events(server, response_format=json_schema(SCHEMA))
    text = "".join(e["text"] for e in got if e["type"] == "token")
    assert got[-1]["type"] == "final"
    assert json.loads(text) == got[-1]["object"]
    jsonschema.validate(got[-1]["object"], SCHEMA)


def test_bad_schema_is_refused_before_any_stage(server) -> None:
    engine = server[1].state.pipeline.engine
    before = engine.get_stats().prefix_cache_queries
    r = ask(server, response_format=json_schema({"type": "strin"}))
    assert r.status_code == 400
    assert r.json()["detail"] == ("response_format.json_schema.schema: cannot be compiled "
                                  '(Unsupported type "strin")')
    assert engine.get_stats().prefix_cache_queries == before  # no intent, no generation
    r = ask(server, response_format={"type": "json_schema"})
    assert r.status_code == 422 and "response_format.json_schema: required" in r.text


def test_json_cut_at_max_tokens_says_so(server) -> None:
    long = {"type": "object", "required": ["summary"], "additionalProperties": False,
            "properties": {"summary": {"type": "string", "minLength": 200}}}
    r = ask(server, response_format=json_schema(long), max_tokens=4)
    assert r.status_code == 400
    assert "reached max_tokens (4) before its JSON document was complete" in r.json()["detail"]
