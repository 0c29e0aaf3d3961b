"""An async micro-batcher: questions that arrive within a short window share one retrieval.

The first question of a batch starts a `window_ms` timer; when it fires (or `max_batch`
questions are waiting) the batch goes to a single worker thread, which runs
`Retriever.retrieve(questions, k)` (one embedder call for the whole batch). The event loop
only ever awaits a future, so it (and the LLM engine's step thread) never waits on it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

# call_later(delay_s, callback) -> a handle with cancel(): the loop's own, or a test's.
CallLater = Callable[[float, Callable[[], None]], Any]


class MicroBatcher:
    def __init__(self, retrieve: Callable[[list[str], int], list[list[Any]]],
                 window_ms: float = 3.0, max_batch: int = 32,
                 after_batch: Callable[[], None] | None = None,
                 call_later: CallLater | None = None) -> None:
        self._retrieve = retrieve
        self._call_later = call_later
        self.window_s = window_ms / 1000.0
        self.max_batch = max_batch
        self._after_batch = after_batch
        self._pending: list[tuple[str, int, asyncio.Future]] = []
        self._timer: Any = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="retrieval")
        self.batch_sizes: list[int] = []  # last batches, for tests and metrics
        self.num_batches = 0
        self.on_batch: Callable[[int, float], None] | None = None

    async def submit(self, question: str, k: int) -> list[Any]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future = loop.create_future()
        self._pending.append((question, k, fut))
        if len(self._pending) >= self.max_batch:
            self._flush()
        elif self._timer is None:
            self._timer = (self._call_later or loop.call_later)(self.window_s, self._flush)
        return await fut

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch:]
        if self._pending:  # more than one batch arrived at once
            self._timer = asyncio.get_running_loop().call_later(0, self._flush)
        if batch:
            asyncio.get_running_loop().create_task(self._run(batch))

    def _work(self, questions: list[str], k: int) -> tuple[list[list[Any]], float]:
        start = time.perf_counter()
        try:
            return self._retrieve(questions, k), time.perf_counter() - start
        finally:
            if self._after_batch is not None:
                self._after_batch()

    async def _run(self, batch: list[tuple[str, int, asyncio.Future]]) -> None:
        questions = [q for q, _, _ in batch]
        k = max(k for _, k, _ in batch)
        loop = asyncio.get_running_loop()
        try:
            results, seconds = await loop.run_in_executor(self.executor, self._work,
                                                          questions, k)
        except Exception as exc:  # every waiter learns of the failure
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            return
        self.num_batches += 1
        self.batch_sizes = (self.batch_sizes + [len(batch)])[-1000:]
        if self.on_batch is not None:
            self.on_batch(len(batch), seconds)
        for (_, kq, fut), passages in zip(batch, results, strict=True):
            if not fut.done():
                fut.set_result(passages[:kq])

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run other retriever work (embeddings) on the same worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    def shutdown(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
