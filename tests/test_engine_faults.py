"""A model step that raises, on the real engine: only that step's requests fail, every
block comes back, and the engine (sync and async) serves the next requests exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_engine import AsyncLLMEngine, LLMEngine, SamplingParams
from llm_engine.config import EngineConfig
from llm_engine.engine.errors import EngineDeadError, RequestFailedError, StepFailedError

GREEDY = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True)


@pytest.fixture(scope="module")
def engine(prepared_default: Path) -> Iterator[LLMEngine]:
    yield LLMEngine(EngineConfig(model=str(prepared_default), kv_cache_memory=64 << 20,
                                 max_model_len=1024))


def break_model(engine: LLMEngine, times: int) -> list[int]:
    """The next `times` model steps raise; returns the list counting the failures."""
    runner, calls = engine.executor.driver, []
    execute = runner.execute

    def faulty(sched):
        if len(calls) < times:
            calls.append(len(sched.seqs))
            raise RuntimeError("injected fault")
        return execute(sched)

    runner.execute = faulty
    return calls


def all_free(engine: LLMEngine) -> bool:
    s = engine.get_stats()
    return s.num_running == s.num_waiting == 0 and s.num_free_blocks == s.num_blocks


def test_failed_step_ends_its_requests_and_the_engine_goes_on(engine: LLMEngine) -> None:
    alone = engine.generate(["Cash flow from operations", "Net revenue rose"], GREEDY)
    engine.add_request("a", "Cash flow from operations", GREEDY)
    engine.add_request("b", "Dividends per share", GREEDY)
    engine.step()  # both prefilled and running
    break_model(engine, 1)
    try:
        with pytest.raises(StepFailedError, match="injected fault") as info:
            engine.step()
        assert sorted(info.value.request_ids) == ["a", "b"]
        assert all_free(engine) and not engine.requests
        engine.abort("a")  # a late abort of a failed request is harmless
        again = engine.generate(["Cash flow from operations", "Net revenue rose"], GREEDY)
    finally:
        del engine.executor.driver.execute
    assert [o.outputs[0].token_ids for o in again] == [o.outputs[0].token_ids for o in alone]


def test_async_engine_fails_the_step_requests_then_dies_of_a_lasting_fault(
        engine: LLMEngine) -> None:
    async_engine = AsyncLLMEngine(engine, max_consecutive_failures=2)

    async def run(prompt: str) -> list[int] | BaseException:
        try:
            last = None
            async for out in async_engine.generate(prompt, GREEDY):
                last = out
            return last.outputs[0].token_ids
        except (RequestFailedError, EngineDeadError) as exc:
            return exc

    try:
        expected = asyncio.run(run("Operating margin"))
        calls = break_model(engine, 1)
        failed, ok = asyncio.run(run("Operating margin")), asyncio.run(run("Operating margin"))
        assert isinstance(failed, RequestFailedError) and calls == [1]
        assert ok == expected and async_engine.is_running
        break_model(engine, 10**9)  # a broken device: every step fails
        first, second = asyncio.run(run("Revenue")), asyncio.run(run("Revenue"))
        assert isinstance(first, RequestFailedError) and isinstance(second, RequestFailedError)
        late = asyncio.run(run("Revenue"))  # the second failure in a row stopped the loop
        assert isinstance(late, EngineDeadError) and not async_engine.is_running
        assert "2 engine steps failed in a row" in str(late) and "restart" in str(late)
        assert all_free(engine)
    finally:
        async_engine.shutdown()
        del engine.executor.driver.execute
