"""The grammar service (llm_engine/grammar_service.py) against real xgrammar and the default
model's vocabulary: a compile past its time bound is a clear refusal, the cache keeps within
its entries and bytes, and schema keywords the grammar would drop are refused by name."""

from __future__ import annotations

import asyncio
import threading

import pytest
from prereqs import DEV, require_module

from llm_engine.engine.errors import InvalidRequestError
from llm_engine.grammar_service import GrammarLimits, GrammarService
from llm_engine.structured_output import StructuredOutputManager, StructuredOutputsParams

# Seconds of compiling on this machine (a 12000 repetition took 69 s): long past any bound.
SLOW = {"type": "string", "pattern": "[\\u0000-\\uffff]{1,4000}"}


@pytest.fixture(scope="module")
def manager(prepared_default) -> StructuredOutputManager:
    require_module("xgrammar", DEV)
    from llm_engine.config import ModelConfig

    config = ModelConfig.from_pretrained(prepared_default)
    return StructuredOutputManager(prepared_default, config.vocab_size, config.eos_token_ids)


def enum_schema(i: int, n: int = 200) -> StructuredOutputsParams:
    return StructuredOutputsParams(json={"enum": [f"value {i} {j}" for j in range(n)]})


def test_a_slow_grammar_is_refused_naming_its_field_and_others_compile_meanwhile(manager):
    service = GrammarService(lambda: manager, GrammarLimits(compile_timeout_s=0.5))

    async def both() -> tuple[BaseException | None, bool]:
        slow = asyncio.create_task(service.compile(StructuredOutputsParams(json=SLOW)))
        await service.compile(enum_schema(0))  # a second worker, while the slow one runs
        quick_first = not slow.done()
        try:
            await slow
        except InvalidRequestError as exc:
            return exc, quick_first
        return None, quick_first

    error, quick_first = asyncio.run(both())
    assert quick_first
    assert error is not None and "structured_outputs.json: not compiled within 0.5 s" in str(error)
    # Asked again, it is refused at once rather than compiled again.
    with pytest.raises(InvalidRequestError, match="not compiled within"):
        service.compile_now(StructuredOutputsParams(json=SLOW))
    service.shutdown()


def test_the_cache_is_bounded_in_entries_and_in_bytes(manager):
    service = GrammarService(lambda: manager, GrammarLimits(cache_entries=3))
    for i in range(6):
        service.compile_now(enum_schema(i))
    assert service.cached[0] == 3
    one = service.cached[1] // 3
    tight = GrammarService(lambda: manager, GrammarLimits(cache_bytes=int(one * 2.5)))
    for i in range(6):
        tight.compile_now(enum_schema(i))
    grammars, held = tight.cached
    assert grammars == 2 and held <= one * 2.5


def test_a_large_spec_and_a_large_grammar_are_refused(manager):
    service = GrammarService(lambda: manager, GrammarLimits(max_spec_bytes=1000))
    with pytest.raises(InvalidRequestError, match=r"structured_outputs.json: \d+ bytes; at most 1000"):
        service.compile_now(enum_schema(0))
    small = GrammarService(lambda: manager, GrammarLimits(max_grammar_bytes=1000))
    with pytest.raises(InvalidRequestError, match="structured_outputs.json: compiles to"):
        small.compile_now(enum_schema(0))


@pytest.mark.parametrize(("schema", "named"), [
    ({"not": {}}, "not: not enforced"),
    ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "allOf: an allOf of 2 schemas"),
    ({"$ref": "https://example.com/s.json"}, "$ref: 'https://example.com/s.json' is not in"),
    ({"type": "string", "pattern": "(?=a)a"}, "pattern: '(?=a)a' is not a regex"),
    ({"type": "string", "format": "bogus"}, "format: 'bogus' is not enforced"),
    ({"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}},
     "properties.a.uniqueItems: not enforced"),
    ({"type": "object", "patternProperties": {"(?<=x)": {}}}, "patternProperties: '(?<=x)'"),
])
def test_keywords_the_grammar_would_drop_are_refused_by_name(manager, schema, named):
    with pytest.raises(InvalidRequestError) as exc:
        manager.compile(StructuredOutputsParams(json=schema))
    assert str(exc.value).startswith("structured_outputs.json: ") and named in str(exc.value)


@pytest.mark.parametrize("schema", [
    {"allOf": [{"type": "string"}]},
    {"$ref": "#/$defs/a", "$defs": {"a": {"type": "integer"}}},
    {"type": "string", "format": "email", "title": "t", "description": "d"},
    {"type": "object", "properties": {"not": {"type": "integer"}}, "required": ["not"]},
    {"enum": [{"not": 1}]},
])
def test_enforced_keywords_and_annotations_still_compile(manager, schema):
    assert manager.compile(StructuredOutputsParams(json=schema)) is not None


def test_one_constraint_asked_at_once_is_compiled_once(manager):
    calls = []
    lock = threading.Lock()

    def counting() -> StructuredOutputManager:
        with lock:
            calls.append(1)
        return manager

    service = GrammarService(counting)

    async def many() -> list:
        return await asyncio.gather(*[service.compile(enum_schema(7)) for _ in range(5)])

    results = asyncio.run(many())
    assert len(calls) == 1 and all(r is results[0] for r in results)
