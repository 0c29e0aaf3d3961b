"""Encoding batches at once, each on one thread of a session of its own: the uploads of a
serving process, beside the questions it answers, and `finrag index`'s corpus.

The question encoder's ONNX Runtime session runs every batch on a pool of intra-op threads
(one a core) that meet at a barrier after each operator. An upload encoded on that session
while the LLM engine's threads held the same two cores waited at those barriers for a
descheduled thread hundreds of times a batch: 2.3 chunks/s, against ~130 chunks/s for
`finrag index` (benchmarks/RESULTS.md, "Documents while serving"). A session that runs each
batch on one thread has no barrier at all, and several batches at once, one a core, encoded
faster than one batch on every core on the shared 2-core host (2,931 filing chunks in
batches of 64: 55-76 against 45-52 chunks/s at load 4-5; `finrag index`: RESULTS, "Indexing
speed"). In a server:

- `idle` batches at once while no question is answered (default: every core): an upload to
  an idle server takes the whole machine;
- `busy` batches at once while questions are answered (default 1): the questions keep the
  other cores. The server counts a question as answered while its LLM engine has requests,
  and for BUSY_HOLD_S after (the gap between a question's intent and answer steps, or
  between one client's questions, would otherwise let a batch of the upload in on every
  core).

The limit is checked before each batch starts, and the encoding threads run at a lower
scheduling priority (`nice`, default 10; Linux's nice value is a thread's own), so the
kernel gives a core to a question's thread first. Without it, one upload thread beside the
LLM engine's two on 2 cores doubled a question's p50 (the engine's threads meet at barriers
too): p50 ratio 2.26 and 1.52 at nice 0, 0.82-1.22 at nice 10 (the Netflix 10-Q ready in 25 and
39 s under one client's questions), 0.98 and 0.87 at nice 19 (ready in 56 and 51 s)
(benchmarks/upload_load.py, RESULTS "Documents while serving"). Runtimes other than ONNX
Runtime on CPU (a GPU's) keep the shared embedder, one batch at a time.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

import numpy as np

from retriever_trt.embedders.embedder import Embedder
from retriever_trt.indexing.encoding import DistinctTexts, text_lengths

# How long after the LLM engine was last seen with requests the server still counts as
# answering questions.
BUSY_HOLD_S = 1.0
# How often a batch waiting for a free core looks again whether questions are answered.
SLOT_POLL_S = 0.05
# The encoding threads' default nice value (a tenth of a nice-0 thread's CPU share where
# both want a core): 19, the lowest priority, took twice as long to index under questions
# for no lower question latency.
DEFAULT_NICE = 10
MAX_NICE = 19
# Texts a batch on a one-thread CPU session. A batch of a few filing chunks (~130 tokens)
# keeps its activations (the 12 heads' attention scores, the 1536-wide feed-forward layer)
# in the core's L2 cache, where a batch of 64 (61 MB of attention scores a layer) streamed
# them through memory: the INT8 encoder did 89 chunks a CPU second in batches of 8 against
# 62 in batches of 64 (4: 100-112, 16: 78). Dynamic INT8 scales activations per batch, so
# the batch moves the vectors a little: with batches of 4 the filings' cell recall@5 fell
# 0.013-0.014 (over the 0.01 allowed), with 8 it stayed within 0.006 (RESULTS, issue 49).
ONE_CORE_BATCH = 8

Busy = Callable[[], bool]
# Encodes one batch: texts, or token ids on a session that takes them.
Batcher = Callable[[list[Any]], np.ndarray]


def all_cores() -> int:
    return os.cpu_count() or 1


@dataclass(frozen=True)
class EncodeThreads:
    """Batches of uploads encoded at once (each on one core), while no question is answered
    (`idle`) and while questions are (`busy`), and the encoding threads' nice value."""

    idle: int
    busy: int = 1
    nice: int = DEFAULT_NICE

    def __post_init__(self) -> None:
        if self.idle < 1 or self.busy < 1:
            raise ValueError(f"encode threads: need at least 1, got idle {self.idle}, busy "
                             f"{self.busy} (ingest_threads, ingest_threads_busy)")
        if not 0 <= self.nice <= MAX_NICE:
            raise ValueError(f"encode threads: nice must be 0 to {MAX_NICE}, got {self.nice} "
                             "(ingest_nice)")


def lower_priority(nice: int) -> None:
    """Give the calling thread (alone: on Linux a nice value is per thread) the nice value
    `nice`, or keep its own when that is lower still; a system without per-thread
    priorities keeps the process's."""
    tid = threading.get_native_id()
    try:
        if os.getpriority(os.PRIO_PROCESS, tid) < nice:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
    except (OSError, AttributeError):
        pass  # not Linux (no per-thread nice, or no setpriority): the threads run as the process


class QuestionActivity:
    """Whether questions are being answered: `engine_busy()` now or within `hold_s`."""

    def __init__(self, engine_busy: Busy, hold_s: float = BUSY_HOLD_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.engine_busy, self.hold_s, self.clock = engine_busy, hold_s, clock
        self._last = float("-inf")

    def __call__(self) -> bool:
        now = self.clock()
        if self.engine_busy():
            self._last = now
        return now - self._last < self.hold_s


def one_core_copy(embedder: Embedder) -> Embedder | None:
    """A session of its own on one thread for an ONNX Runtime embedder on CPU; None for
    other runtimes."""
    from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder

    if not isinstance(embedder, OnnxRuntimeEmbedder) \
            or embedder.session.get_providers() != ["CPUExecutionProvider"]:
        return None
    return OnnxRuntimeEmbedder(embedder.path, profile=embedder.profile,
                               overflow=embedder.overflow, intra_op_threads=1,
                               disabled_optimizers=embedder.disabled_optimizers)


class _Slots:
    """Batches running, bounded by the threads the moment allows."""

    def __init__(self, threads: EncodeThreads, busy: Busy | None) -> None:
        self.threads, self.busy = threads, busy
        self.running = 0
        self._cond = threading.Condition()

    def limit(self) -> int:
        return self.threads.busy if self.busy is not None and self.busy() else self.threads.idle

    def acquire(self) -> None:
        with self._cond:
            while self.running >= self.limit():
                self._cond.wait(SLOT_POLL_S)
            self.running += 1

    def release(self) -> None:
        with self._cond:
            self.running -= 1
            self._cond.notify()


class ParallelEncoder:
    """Encodes texts (`encode`) on a one-thread session, up to `threads` batches at once in
    all, fewer while `busy()` says questions are answered."""

    def __init__(self, embedder: Embedder, threads: EncodeThreads,
                 busy: Busy | None = None) -> None:
        self.embedder = embedder
        copy = one_core_copy(embedder)
        self.session: Embedder = copy or embedder
        self.threads = threads if copy is not None else EncodeThreads(1, 1, threads.nice)
        self._slots = _Slots(self.threads, busy)
        self._pool = ThreadPoolExecutor(max(self.threads.idle, self.threads.busy),
                                        thread_name_prefix="finrag-encode",
                                        initializer=lower_priority,
                                        initargs=(self.threads.nice,))

    def preferred_batch(self, default: int) -> int:
        """The batch size to encode with: ONE_CORE_BATCH on one-thread CPU sessions,
        `default` for other runtimes (a GPU wants large batches)."""
        return ONE_CORE_BATCH if self.session is not self.embedder else default

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def encode(self, texts: Sequence[str], batch_size: int,
               on_batch: Callable[[int], None] | None = None) -> np.ndarray:
        """Every text's vector, each distinct text encoded once in length-sorted batches.
        `on_batch(done)` hears in this thread, after each batch, how far encoding is in
        texts of `texts`; what it raises stops the encoding (the batches running finish)."""
        seen = DistinctTexts()
        distinct = seen.add(texts)
        inputs, lengths, run = self._prepare(distinct)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(distinct), self.embedder.dim), dtype=np.float32)
        pending: set[Future[int]] = set()
        done = 0

        def collect(block: bool) -> None:
            nonlocal done, pending
            finished, pending = wait(pending, timeout=None if block else 0,
                                     return_when=FIRST_COMPLETED)
            for future in finished:
                done += future.result()
                if on_batch is not None:
                    on_batch(round(len(texts) * done / len(distinct)))

        try:
            for start in range(0, len(distinct), batch_size):
                rows = order[start : start + batch_size]
                self._slots.acquire()
                try:
                    future = self._pool.submit(self._run, run, inputs, rows, out)
                except BaseException:
                    self._slots.release()
                    raise
                # Released once the batch is done, so the next batch starts only after
                # on_batch could hear of the last one that ended (and stop it).
                future.add_done_callback(lambda _: self._slots.release())
                pending.add(future)
                collect(block=False)
            while pending:
                collect(block=True)
        finally:
            wait(pending)  # never leave a batch writing into `out` after we return
        return seen.scatter(out)

    def _prepare(self, texts: list[str]) -> tuple[Sequence[Any], list[int], Batcher]:
        """(what a batch is cut from, each text's length, what encodes a batch). A session
        that takes token ids (a one-thread ONNX Runtime copy) gets each text tokenized once,
        for the length sort and the batch: tokenizing twice cost ~2% of encoding."""
        tokenize = getattr(self.session, "token_ids", None)
        if tokenize is None:
            return texts, text_lengths(self.embedder, texts), self.session.encode
        ids = tokenize(texts)
        return ids, [len(i) for i in ids], self.session.encode_ids  # type: ignore[attr-defined]

    @staticmethod
    def _run(run: Batcher, inputs: Sequence[Any], rows: np.ndarray,
             out: np.ndarray) -> int:
        out[rows] = run([inputs[i] for i in rows])
        return len(rows)
