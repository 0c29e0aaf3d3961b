"""The background step loop: streaming, concurrency, and aborts that free blocks."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from llm_engine import AsyncLLMEngine, LLMEngine, SamplingParams
from llm_engine.config import EngineConfig
from llm_engine.outputs import RequestOutput


@pytest.fixture(scope="module")
def engine(prepared_default: Path):
    eng = AsyncLLMEngine(LLMEngine(EngineConfig(model=str(prepared_default),
                                                kv_cache_memory=256 << 20, max_model_len=2048)))
    yield eng
    eng.shutdown()


def test_streams_cumulative_outputs_in_order(engine: AsyncLLMEngine) -> None:
    async def go():
        seen = []
        params = SamplingParams(temperature=0, max_tokens=12, ignore_eos=True)
        async for out in engine.generate("The balance sheet shows", params):
            seen.append(out)
        return seen

    seen = asyncio.run(go())
    lengths = [len(o.outputs[0].token_ids) for o in seen]
    assert lengths == sorted(lengths) and lengths[-1] == 12
    assert seen[-1].finished and not any(o.finished for o in seen[:-1])
    texts = [o.outputs[0].text for o in seen]
    assert all(b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))


def test_concurrent_requests_equal_one_at_a_time(engine: AsyncLLMEngine) -> None:
    prompts = [f"Question {i}: what drives operating margin?" for i in range(6)]
    params = SamplingParams(temperature=0, max_tokens=10, ignore_eos=True)

    async def one(p: str) -> list[int]:
        last = None
        async for out in engine.generate(p, params):
            last = out
        return last.outputs[0].token_ids

    async def together():
        return await asyncio.gather(*(one(p) for p in prompts))

    async def in_turn():
        return [await one(p) for p in prompts]

    assert asyncio.run(together()) == asyncio.run(in_turn())


def test_leaving_the_loop_aborts_and_frees_blocks(engine: AsyncLLMEngine) -> None:
    async def go():
        params = SamplingParams(temperature=0, max_tokens=500, ignore_eos=True)
        async for out in engine.generate("Tell me everything about bonds.", params):
            if len(out.outputs[0].token_ids) >= 3:
                break
        for _ in range(100):
            await asyncio.sleep(0.05)
            if not engine.has_unfinished_requests():
                break

    asyncio.run(go())
    stats = engine.get_stats()
    assert stats.num_running == stats.num_waiting == 0
    assert stats.num_free_blocks == stats.num_blocks


def test_bad_request_raises_in_the_caller(engine: AsyncLLMEngine) -> None:
    async def go():
        async for _ in engine.generate({"prompt_token_ids": [10**9]}, SamplingParams()):
            pass

    with pytest.raises(ValueError, match="prompt token ids"):
        asyncio.run(go())
    assert engine.is_running


def test_a_request_id_in_use_fails_only_the_second_call(engine: AsyncLLMEngine) -> None:
    params = SamplingParams(temperature=0, max_tokens=8, ignore_eos=True)

    async def go():
        first = engine.generate("The cash flow statement", params, request_id="dup")
        out = await first.__anext__()
        with pytest.raises(ValueError, match="request id 'dup' is already in use"):
            async for _ in engine.generate("Another prompt", params, request_id="dup"):
                pass
        # Still the first request's stream (checked first: without it the loop below would
        # wait forever).
        assert engine._streams.get("dup", (None,))[0] is asyncio.get_running_loop()
        rest = [o async for o in first]  # the first request goes on to its end
        return rest[-1] if rest else out

    last = asyncio.run(go())
    assert last.finished and len(last.outputs[0].token_ids) == 8
    assert last.outputs[0].finish_reason == "length"
    assert engine.is_running


def test_a_client_loop_closing_mid_stream_drops_only_its_request(engine: AsyncLLMEngine) -> None:
    """A client's event loop, in a thread of its own, closes while its request streams: the
    engine thread must not die on `call_soon_threadsafe`; the request is aborted (its blocks
    freed) and later requests are served."""
    started = threading.Event()
    held: list = []

    def client() -> None:
        loop = asyncio.new_event_loop()
        params = SamplingParams(temperature=0, max_tokens=1000, ignore_eos=True)
        stream = engine.generate("Tell me everything about bonds.", params, request_id="doomed")
        held.append(stream)  # kept alive: its finally never runs, as when a loop is torn down
        out = loop.run_until_complete(stream.__anext__())
        assert not out.finished
        loop.close()
        started.set()

    thread = threading.Thread(target=client)
    thread.start()
    thread.join()
    assert started.is_set()
    # The doomed request was running: the step after the close meets the closed loop.
    while "doomed" in engine.engine.requests and engine.error is None:
        time.sleep(0.01)
    assert engine.is_running and engine.error is None

    async def later() -> RequestOutput:
        params = SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)
        async for out in engine.generate("After that, the income statement", params):
            last = out
        return last

    assert asyncio.run(later()).outputs[0].finish_reason == "length"
    assert engine.is_running
    assert "doomed" not in engine.engine.requests and "doomed" not in engine._streams
    stats = engine.engine.get_stats()
    assert stats.num_running == stats.num_waiting == 0
    assert stats.num_free_blocks == stats.num_blocks
