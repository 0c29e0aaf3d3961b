"""Corpus encoding: each distinct text once, in batches of like length, while reading goes on.

- Distinct texts: a text that occurs twice (a filing's boilerplate repeated on one page, the
  same note in two filings of one title) is encoded once and its vector copied.
- Length-sorted batches: sorted by the encoder's tokens, a batch is padded little to its
  longest text, which makes corpus encoding several times faster than in file order.
- `StreamingEncoder` encodes in a thread while the caller still reads the corpus: texts
  gather into windows, each sorted and encoded as soon as it is full, so the encoder (ONNX
  Runtime and the tokenizer release the GIL) runs while the next filings are parsed.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retriever_trt.embedder import Embedder

DEFAULT_BATCH = 64
# Distinct texts a window gathers before it is sorted and encoded: a 10-K's chunks of 120
# tokens span ~20-140 tokens, and a few thousand sorted fill each batch of 64 with texts of
# nearly one length; a window is still small beside a shelf, so encoding starts early.
WINDOW_TEXTS = 4096
# How long `add` may run ahead of the encoder, in windows: bounds the texts held waiting.
QUEUED_WINDOWS = 4


def text_lengths(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """Each text's length in the embedder's tokens when it exposes its tokenizer, else in
    characters. Sorted by characters, a 10-K's batches of 64 were padded to 1.21 times
    their tokens, sorted by tokens to 1.07 (tokenizing them costs ~1% of encoding them)."""
    tokenizer = getattr(embedder, "tokenizer", None)
    if hasattr(tokenizer, "encode_batch"):
        return [len(e.ids) for e in tokenizer.encode_batch(list(texts))]
    return [len(t) for t in texts]


class DistinctTexts:
    """The distinct texts seen so far, in order of first sight, and each text's row
    among them (`rows`), so distinct vectors scatter back to every text."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.rows: list[int] = []

    def add(self, texts: Sequence[str]) -> list[str]:
        """Record `texts`; return the ones not seen before, in order."""
        new: list[str] = []
        for text in texts:
            count = len(self.first)
            row = self.first.setdefault(text, count)
            if row == count:
                new.append(text)
            self.rows.append(row)
        return new

    def scatter(self, vectors: np.ndarray) -> np.ndarray:
        """Every added text's vector, from the distinct texts' `vectors`."""
        return vectors[np.asarray(self.rows, dtype=np.int64)]


def encode_sorted(embedder: Embedder, texts: Sequence[str], batch_size: int,
                  on_batch: Callable[[int], None] | None = None) -> np.ndarray:
    """`texts` encoded in batches sorted by length; `on_batch(n)` after each batch of n."""
    order = np.argsort(text_lengths(embedder, texts), kind="stable")
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    for start in range(0, len(texts), batch_size):
        rows = order[start : start + batch_size]
        out[rows] = embedder.encode([texts[i] for i in rows])
        if on_batch is not None:
            on_batch(len(rows))
    return out


def encode_corpus(
    embedder: Embedder, texts: Sequence[str], batch_size: int = DEFAULT_BATCH,
    progress: bool = True, on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Every text's vector, each distinct text encoded once in length-sorted batches.
    `on_batch(done)` hears after each batch how far encoding is, in texts of `texts`."""
    seen = DistinctTexts()
    distinct = seen.add(texts)
    done = 0
    with tqdm(total=len(distinct), desc="encoding", unit="chunk", disable=not progress) as bar:
        def step(n: int) -> None:
            nonlocal done
            done += n
            bar.update(n)
            if on_batch is not None:
                on_batch(round(len(texts) * done / len(distinct)))

        vectors = encode_sorted(embedder, distinct, batch_size, step)
    return seen.scatter(vectors)


class StreamingEncoder:
    """Encodes texts in a thread as they are handed over (`add`); `finish` waits for the
    last window and returns every added text's vector in the order added. Use it as a
    context manager: leaving the block stops the thread, also when reading failed."""

    def __init__(self, embedder: Embedder, batch_size: int = DEFAULT_BATCH,
                 window: int = WINDOW_TEXTS, progress: bool = True) -> None:
        # Imported here: parallel_encoder imports this module.
        from retriever_trt.parallel_encoder import EncodeThreads, ParallelEncoder, all_cores

        if batch_size < 1 or window < 1:
            raise ValueError(f"batch_size and window must be >= 1, got {batch_size}, {window}")
        self.embedder, self.batch_size, self.window = embedder, batch_size, window
        # A window's batches encode at once, one a core, at the process's own priority.
        cores = all_cores()
        self.encoder = ParallelEncoder(embedder, EncodeThreads(cores, cores, nice=0))
        self.seen = DistinctTexts()
        self.texts = 0
        self._pending: list[str] = []
        self._parts: list[np.ndarray] = []
        self._queue: queue.Queue[list[str] | None] = queue.Queue(QUEUED_WINDOWS)
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._bar = tqdm(total=0, desc="encoding", unit="chunk", disable=not progress,
                         position=1)
        self._thread = threading.Thread(target=self._run, name="finrag-encoder", daemon=True)
        self._thread.start()

    def add(self, texts: Sequence[str]) -> None:
        """Queue `texts` (the chunks of one document, in order) for encoding."""
        self._raise_error()
        self.texts += len(texts)
        new = self.seen.add(texts)
        self._pending += new
        self._bar.total += len(new)
        self._bar.set_postfix(duplicates=self.texts - len(self.seen.first), refresh=False)
        while len(self._pending) >= self.window:
            self._queue.put(self._pending[: self.window])
            self._pending = self._pending[self.window :]

    def finish(self) -> np.ndarray:
        """Every added text's vector, (texts, dim), once the encoder has caught up."""
        if self._pending:
            self._queue.put(self._pending)
            self._pending = []
        self._queue.put(None)
        self._thread.join()
        self._bar.close()
        self.encoder.close()
        self._raise_error()
        vectors = (np.concatenate(self._parts) if self._parts
                   else np.empty((0, self.embedder.dim), dtype=np.float32))
        return self.seen.scatter(vectors)

    def _run(self) -> None:
        while (window := self._queue.get()) is not None:
            if self._stop.is_set() or self._error is not None:
                continue  # drain what is queued, so that `add` never blocks on a full queue
            try:
                self._parts.append(self._encode(window))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                self._error = exc

    def _encode(self, window: list[str]) -> np.ndarray:
        shown = 0

        def advance(done: int) -> None:
            nonlocal shown
            self._bar.update(done - shown)
            shown = done

        return self.encoder.encode(window, self.batch_size, advance)

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def __enter__(self) -> StreamingEncoder:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Any:
        if self._thread.is_alive():
            self._stop.set()
            self._queue.put(None)
            self._thread.join()
            self._bar.close()
        self.encoder.close()
        return None
