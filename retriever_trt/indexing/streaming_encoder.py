"""`StreamingEncoder`: a corpus encoded in a thread while the caller still reads it. Texts
gather into windows, each sorted by length and encoded as soon as it is full (its batches
side by side, one a core: `parallel_encoder.py`), so the encoder (ONNX Runtime and the
tokenizer release the GIL) runs while the next filings are parsed; each distinct text once
(`encoding.DistinctTexts`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from retriever_trt.embedders.embedder import Embedder
from retriever_trt.indexing.encoding import DEFAULT_BATCH, DistinctTexts
from retriever_trt.indexing.parallel_encoder import EncodeThreads, ParallelEncoder, all_cores

# Distinct texts a window gathers before it is sorted and encoded: a 10-K's chunks of 120
# tokens span ~20-140 tokens, and a few thousand sorted fill each batch of 64 with texts of
# nearly one length; a window is still small beside a shelf, so encoding starts early.
WINDOW_TEXTS = 4096
# How long `add` may run ahead of the encoder, in windows: bounds the texts held waiting.
QUEUED_WINDOWS = 4


class StreamingEncoder:
    """Encodes texts in a thread as they are handed over (`add`); `finish` waits for the
    last window and returns every added text's vector in the order added. Use it as a
    context manager: leaving the block stops the thread, also when reading failed."""

    def __init__(self, embedder: Embedder, batch_size: int | None = None,
                 window: int = WINDOW_TEXTS, progress: bool = True) -> None:
        """`batch_size` None: the encoder's own (`ParallelEncoder.preferred_batch`)."""
        if (batch_size is not None and batch_size < 1) or window < 1:
            raise ValueError(f"batch_size and window must be >= 1, got {batch_size}, {window}")
        self.embedder, self.window = embedder, window
        # A window's batches encode at once, one a core, at the process's own priority.
        cores = all_cores()
        self.encoder = ParallelEncoder(embedder, EncodeThreads(cores, cores, nice=0))
        self.batch_size = batch_size or self.encoder.preferred_batch(DEFAULT_BATCH)
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
