"""Encoding uploads in a serving process (retriever_trt/indexing/parallel_encoder.py): a one-thread ONNX
Runtime session of its own, as many batches at once as the moment allows (every core idle,
fewer while questions are answered), the same vectors as the question encoder's, and a
stop that leaves no batch running."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from retriever_trt.embedders.embedder import Embedder
from retriever_trt.embedders.loader import default_embedder
from retriever_trt.indexing.encoding import encode_corpus
from retriever_trt.indexing.parallel_encoder import EncodeThreads, ParallelEncoder, QuestionActivity

# One text's vector from a one-thread and a multi-thread session, in the same batch: the
# float sums differ in the last bits only.
SAME_VECTOR_ATOL = 1e-4
BATCH = 4
# A guard against a hang only: two batches that run at once meet within milliseconds.
MEET_TIMEOUT_S = 120
TEXTS = [f"Segment {i} revenue was ${i * 37 + 5} million in fiscal {2015 + i % 9}, "
         f"{'up' if i % 2 else 'down'} {i % 13}% from the year before." for i in range(40)]


class Recording(Embedder):
    """A real session, counting the batches that run at once and the nice values of the
    threads that ran them; with `meet`, each batch first waits at that barrier for another
    (a test that two do run at once)."""

    def __init__(self, inner: Embedder, meet: threading.Barrier | None = None) -> None:
        self.inner, self.meet = inner, meet
        self.model_id, self.precision, self.dim = inner.model_id, inner.precision, inner.dim
        self.running = self.most = self.batches = 0
        self.nice: set[int] = set()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.running += 1
            self.batches += 1
            self.most = max(self.most, self.running)
            self.nice.add(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        try:
            if self.meet is not None:
                self.meet.wait(MEET_TIMEOUT_S)
            return self.inner.encode(texts)
        finally:
            with self._lock:
                self.running -= 1


@pytest.fixture(scope="module")
def int8(engines_dir: Path) -> Embedder:
    return default_embedder(engines_dir, progress=False)


def test_vectors_are_the_question_encoders(int8):
    texts = TEXTS + TEXTS[:5]  # repeated texts are encoded once and copied
    encoder = ParallelEncoder(int8, EncodeThreads(2))
    try:
        assert encoder.session is not int8  # a session of its own
        heard: list[int] = []
        got = encoder.encode(texts, BATCH, heard.append)
    finally:
        encoder.close()
    want = encode_corpus(int8, texts, BATCH, progress=False)
    assert np.allclose(got, want, atol=SAME_VECTOR_ATOL)
    assert heard[-1] == len(texts) and heard == sorted(heard)


class CountingTokenizer:
    """The session's real tokenizer, counting the texts it tokenizes."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, 0

    def encode_batch(self, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        self.texts += len(texts)
        return self.inner.encode_batch(texts, *args, **kwargs)


def test_each_text_is_tokenized_once_for_the_sort_and_the_batch(int8, monkeypatch):
    texts = TEXTS + TEXTS[:5]
    want = encode_corpus(int8, texts, BATCH, progress=False)
    encoder = ParallelEncoder(int8, EncodeThreads(2))
    # One count over the question encoder's tokenizer and its one-thread copy's.
    counting = CountingTokenizer(int8.tokenizer)
    monkeypatch.setattr(int8, "tokenizer", counting)
    monkeypatch.setattr(encoder.session, "tokenizer", counting)
    try:
        got = encoder.encode(texts, BATCH)
    finally:
        encoder.close()
    assert counting.texts == len(TEXTS)  # the distinct texts, once each
    assert np.allclose(got, want, atol=SAME_VECTOR_ATOL)


def test_idle_encodes_batches_at_once_busy_one_at_a_time(int8):
    busy = threading.Event()
    encoder = ParallelEncoder(int8, EncodeThreads(idle=2, busy=1), busy.is_set)
    try:
        idle = Recording(encoder.session, threading.Barrier(2))
        encoder.session = idle
        encoder.encode(TEXTS, BATCH)
        assert idle.most == 2  # each batch met another: two ran at once
        busy.set()
        answering = Recording(idle.inner)
        encoder.session = answering
        encoder.encode(TEXTS, BATCH)
        assert answering.most == 1 and answering.batches == len(TEXTS) // BATCH
    finally:
        encoder.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_batches_run_at_the_lower_priority_and_the_caller_keeps_its_own(int8):
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    encoder = ParallelEncoder(int8, EncodeThreads(idle=2, nice=own + 3))
    recording = Recording(encoder.session)
    encoder.session = recording
    try:
        encoder.encode(TEXTS, BATCH)
    finally:
        encoder.close()
    assert recording.nice == {own + 3}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own


def test_a_stop_raised_by_on_batch_ends_encoding(int8):
    encoder = ParallelEncoder(int8, EncodeThreads(idle=1))
    recording = Recording(encoder.session)
    encoder.session = recording

    def stop(done: int) -> None:
        raise KeyboardInterrupt(f"stopped at {done}")

    try:
        with pytest.raises(KeyboardInterrupt, match="stopped at"):
            encoder.encode(TEXTS, BATCH, stop)
    finally:
        encoder.close()
    assert recording.running == 0 and recording.batches < len(TEXTS) // BATCH


def test_questions_count_for_the_hold_after_the_engine_empties():
    now, engine = [0.0], [True]
    answering = QuestionActivity(lambda: engine[0], hold_s=1.0, clock=lambda: now[0])
    assert answering()
    engine[0] = False
    now[0] = 0.9
    assert answering()  # between two steps of a question, or two questions
    now[0] = 1.0
    assert not answering()


def test_encode_threads_are_checked():
    with pytest.raises(ValueError, match="ingest_threads"):
        EncodeThreads(idle=0)
    with pytest.raises(ValueError, match="ingest_threads_busy"):
        EncodeThreads(idle=2, busy=0)
    with pytest.raises(ValueError, match="ingest_nice"):
        EncodeThreads(idle=2, nice=20)
