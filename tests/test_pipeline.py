"""Unit tests of the pipeline's parts that need no model: buffers, batcher, settings, prompts."""

from __future__ import annotations

import asyncio
import threading
import types

import numpy as np
import pytest

from pipeline.rag.batcher import MicroBatcher
from pipeline.rag.host_buffers import HostBufferPool, StagingEmbedder
from pipeline.settings_sources import SettingsError, load_settings


class HashEmbedder:
    """A deterministic stand-in embedder for the buffer tests (not the retriever)."""

    model_id, precision, dim = "hash", "fp32", 8

    def encode(self, texts):
        out = np.array([[hash((t, i)) % 97 + 1.0 for i in range(self.dim)] for t in texts],
                       dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_pool_leases_views_that_faiss_reads_without_copy() -> None:
    import faiss

    pool = HostBufferPool(2, max_rows=4, dim=8, pinned=False)
    staging = StagingEmbedder(HashEmbedder(), pool)
    view = staging.encode(["a", "b", "c"])
    assert view.shape == (3, 8) and view.flags.c_contiguous
    assert pool.num_free == 1
    np.testing.assert_allclose(view, HashEmbedder().encode(["a", "b", "c"]))
    # What the retriever's VectorIndex does before faiss: the same memory, no copy.
    assert np.shares_memory(np.ascontiguousarray(view, dtype=np.float32), view)
    index = faiss.IndexFlatIP(8)
    index.add(HashEmbedder().encode(["a", "b", "c", "d"]))
    _, ids = index.search(view, 1)
    assert ids[:, 0].tolist() == [0, 1, 2]
    staging.release_all()
    assert pool.num_free == 2


def test_pool_blocks_when_exhausted_and_rejects_bad_leases() -> None:
    pool = HostBufferPool(1, max_rows=2, dim=4, pinned=False)
    slot, _ = pool.acquire(2)
    with pytest.raises(TimeoutError):
        pool.acquire(1, timeout=0.05)
    threading.Timer(0.05, pool.release, [slot]).start()
    with pool.lease(1, timeout=2) as view:
        assert view.shape == (1, 4)
    with pytest.raises(ValueError):
        pool.acquire(3)
    with pytest.raises(ValueError):
        pool.release(0)


def test_pool_is_pinned_only_with_cuda() -> None:
    import torch

    pool = HostBufferPool(1, 2, 4)
    assert pool.pinned == torch.cuda.is_available()


class ManualTimers:
    """call_later for the batcher whose timers fire when the test says so."""

    def __init__(self) -> None:
        self.pending: list[types.SimpleNamespace] = []

    def __call__(self, delay: float, callback):
        timer = types.SimpleNamespace(delay=delay, callback=callback, cancelled=False)
        timer.cancel = lambda: setattr(timer, "cancelled", True)
        self.pending.append(timer)
        return timer

    def fire(self) -> float:
        timer = self.pending.pop(0)
        assert not timer.cancelled
        timer.callback()
        return timer.delay


def test_micro_batcher_groups_questions_within_the_window() -> None:
    calls: list[tuple[list[str], int]] = []
    loop_thread: list[bool] = []
    timers = ManualTimers()

    def retrieve(questions: list[str], k: int) -> list[list[str]]:
        loop_thread.append(threading.current_thread() is threading.main_thread())
        calls.append((list(questions), k))
        return [[f"{q}-{i}" for i in range(k)] for q in questions]

    async def go():
        b = MicroBatcher(retrieve, window_ms=20, max_batch=8, call_later=timers)
        first = [asyncio.create_task(b.submit(f"q{i}", 1 + i % 3)) for i in range(5)]
        for _ in range(3):  # however long the loop runs, nothing goes before the window ends
            await asyncio.sleep(0)
        assert calls == [] and len(timers.pending) == 1  # one timer for the whole batch
        assert timers.fire() == 0.02
        first = await asyncio.gather(*first)
        late = asyncio.create_task(b.submit("late", 2))
        await asyncio.sleep(0)
        assert len(calls) == 1 and len(timers.pending) == 1
        timers.fire()
        second = await late
        b.shutdown()
        return first, second

    first, second = asyncio.run(go())
    assert [len(c[0]) for c in calls] == [5, 1] and calls[0][1] == 3
    assert first[0] == ["q0-0"] and first[2] == ["q2-0", "q2-1", "q2-2"]
    assert second == ["late-0", "late-1"]
    assert loop_thread == [False, False]  # retrieval ran in the worker thread


def test_micro_batcher_splits_at_max_batch_and_reports_errors() -> None:
    sizes: list[int] = []

    def retrieve(questions, k):
        sizes.append(len(questions))
        if "boom" in questions:
            raise RuntimeError("index broke")
        return [[q] for q in questions]

    async def go():
        b = MicroBatcher(retrieve, window_ms=50, max_batch=3)
        out = await asyncio.gather(*[b.submit(str(i), 1) for i in range(7)])
        with pytest.raises(RuntimeError, match="index broke"):
            await b.submit("boom", 1)
        b.shutdown()
        return out

    assert asyncio.run(go()) == [[str(i)] for i in range(7)]
    assert sizes[:3] == [3, 3, 1]


def test_settings_precedence_and_one_line_errors(tmp_path) -> None:
    cfg = tmp_path / "finrag.yaml"
    cfg.write_text("top_k: 4\nport: 9000\nmax_tokens: 32\n")
    s = load_settings(cfg, {"max_tokens": 16}, environ={"FINRAG_PORT": "9001"})
    assert (s.top_k, s.port, s.max_tokens) == (4, 9001, 16)
    with pytest.raises(SettingsError) as e:
        load_settings(None, {"top_k": 0}, environ={})
    assert "top_k" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(SettingsError, match="unknown setting"):
        load_settings(None, {"topk": 3}, environ={})
    cfg.write_text("- a list\n")
    with pytest.raises(SettingsError, match="mapping"):
        load_settings(cfg, environ={})
    with pytest.raises(SettingsError, match="no such file"):
        load_settings(tmp_path / "missing.yaml", environ={})


def test_cli_bad_setting_is_one_line_error(capsys) -> None:
    from pipeline.cli import main

    assert main(["ask", "What was revenue?", "--top-k", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("finrag: error:") and "top_k" in err and "\n" not in err


def test_intent_and_generation_prompts_share_their_head(prepared_default) -> None:
    from llm_engine.tokenizer import Tokenizer
    from pipeline.intent_labels import DEFAULT_LABELS
    from pipeline.rag.prompts import (
        answer_tail,
        build_prompt_ids,
        intent_tail,
        option_token_ids,
        system_text,
    )

    tok = Tokenizer.from_pretrained(prepared_default)
    system = system_text("You answer finance questions.", DEFAULT_LABELS)
    q = "What was the change in revenue between 2018 and 2019?"

    class P:
        text, title = "Revenue rose to $5.2 million in 2019 from $4.1 million.", "Report"

    a = build_prompt_ids(tok, system, q, intent_tail(DEFAULT_LABELS))
    b = build_prompt_ids(tok, system, q, answer_tail([P()], "Question: {question}", 200, q))
    head = build_prompt_ids(tok, system, q, "")
    shared = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    assert shared >= len(head) - 8  # everything up to the question is common
    assert tok.decode(a[:shared]).rstrip().endswith(q)
    ids = option_token_ids(tok, 3)
    assert len(set(ids)) == 3


def test_generate_stage_refuses_a_question_that_cannot_fit(prepared_default) -> None:
    from llm_engine import InvalidRequestError
    from llm_engine.tokenizer import Tokenizer
    from pipeline.rag import GenerateStage

    tok = Tokenizer.from_pretrained(prepared_default)
    stage = GenerateStage(None, tok, "You answer finance questions.", "Answer.", 300,  # type: ignore[arg-type]
                          max_model_len=96)
    ids, n = stage.prompt_ids("What was revenue?", [], 8)
    assert n == 0 and len(ids) == len(stage.bare_prompt_ids("What was revenue?"))
    with pytest.raises(InvalidRequestError, match=r"^question: with max_tokens=8 it does not fit"):
        stage.prompt_ids("revenue " * 100, [], 8)
