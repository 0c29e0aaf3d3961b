"""The engine's step loop in a background thread, with `async for` streaming."""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from llm_engine.config import EngineConfig
from llm_engine.engine.llm_engine import LLMEngine, PromptType
from llm_engine.outputs import RequestOutput
from llm_engine.sampling_params import SamplingParams

logger = logging.getLogger(__name__)


class EngineDeadError(RuntimeError):
    """The step loop has stopped; no request can be served."""


class AsyncLLMEngine:
    """Runs `LLMEngine.step` in a thread of its own, so the event loop never waits on it.

    Only the loop thread touches the engine: adds and aborts from coroutines are queued
    and applied before the next step. Each request gets an asyncio queue that the loop
    thread feeds through `call_soon_threadsafe`.
    """

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self._commands: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._streams: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._wakeup = threading.Event()
        self._stopped = False
        self._ids = itertools.count()
        self.last_step_time = time.monotonic()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="llm-engine-loop", daemon=True)
        self._thread.start()

    @classmethod
    def from_engine_args(cls, **kwargs: Any) -> AsyncLLMEngine:
        return cls(LLMEngine(EngineConfig(**kwargs)))

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive() and self.error is None

    async def generate(
        self,
        prompt: PromptType,
        sampling_params: SamplingParams | None = None,
        request_id: str | None = None,
    ) -> AsyncIterator[RequestOutput]:
        """Yield the request's cumulative output after every step that moves it.

        Leaving the loop early (the client went away) aborts the request, which frees its
        KV blocks before the next step.
        """
        if not self.is_running:
            raise EngineDeadError("the engine loop is not running")
        rid = request_id or f"req-{next(self._ids)}"
        stream: asyncio.Queue = asyncio.Queue()
        self._streams[rid] = (asyncio.get_running_loop(), stream)
        self._send("add", (rid, prompt, sampling_params or SamplingParams(), time.monotonic()))
        finished = False
        try:
            while True:
                item = await stream.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if item.finished:
                    finished = True
                    return
        finally:
            self._streams.pop(rid, None)
            if not finished:
                self._send("abort", rid)

    async def abort(self, request_id: str) -> None:
        self._send("abort", request_id)

    def shutdown(self) -> None:
        self._stopped = True
        self._wakeup.set()
        self._thread.join(timeout=10)
        self.engine.shutdown()

    def _send(self, op: str, arg: Any) -> None:
        self._commands.put((op, arg))
        self._wakeup.set()

    def _deliver(self, rid: str, item: RequestOutput | BaseException) -> None:
        target = self._streams.get(rid)
        if target is not None:
            loop, stream = target
            loop.call_soon_threadsafe(stream.put_nowait, item)

    def _apply_commands(self) -> None:
        while True:
            try:
                op, arg = self._commands.get_nowait()
            except queue.Empty:
                return
            if op == "abort":
                self.engine.abort(arg)
                continue
            rid, prompt, params, arrival = arg
            try:
                self.engine.add_request(rid, prompt, params, arrival)
            except ValueError as exc:
                self._deliver(rid, exc)

    def _run(self) -> None:
        try:
            while not self._stopped:
                self._apply_commands()
                if not self.engine.has_unfinished_requests():
                    self.last_step_time = time.monotonic()
                    self._wakeup.wait(timeout=0.5)
                    self._wakeup.clear()
                    continue
                for out in self.engine.step():
                    self._deliver(out.request_id, out)
                self.last_step_time = time.monotonic()
        except BaseException as exc:  # the loop must report any death to its waiters
            logger.exception("engine loop died")
            self.error = exc
            for rid in list(self._streams):
                self._deliver(rid, EngineDeadError(f"engine loop died: {exc!r}"))
