"""The engine's step loop in a background thread, with `async for` streaming."""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.engine.engine_stats import EngineStats
from llm_engine.engine.errors import (
    EngineDeadError,
    InvalidRequestError,
    RequestFailedError,
    StepFailedError,
)
from llm_engine.engine.llm_engine import LLMEngine, PromptType
from llm_engine.outputs import RequestOutput
from llm_engine.sampling_params import SamplingParams
from llm_engine.structured_output import StructuredOutputsParams

logger = logging.getLogger(__name__)


class AsyncLLMEngine:
    """Runs `LLMEngine.step` in a thread of its own, so the event loop never waits on it.

    Only the loop thread touches the engine: adds and aborts from coroutines are queued
    and applied before the next step. Each request gets an asyncio queue that the loop
    thread feeds through `call_soon_threadsafe`.

    A step that raises fails its own requests (`RequestFailedError` in their `async for`)
    and the loop goes on; `max_consecutive_failures` failed steps in a row mean a fault
    that will not pass (a broken device), and the loop stops. Once it has stopped, for
    that or any other reason, every waiting and new request gets `EngineDeadError`.
    """

    def __init__(self, engine: LLMEngine, max_consecutive_failures: int = 3) -> None:
        self.engine = engine
        self.max_consecutive_failures = max_consecutive_failures
        self._failures = 0
        self._commands: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._streams: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._wakeup = threading.Event()
        self._stopped = False
        self._ids = itertools.count()
        self.last_step_time = time.monotonic()
        self.error: BaseException | None = None
        # Called on the loop thread with each finished request's last output (the server's
        # per-request metrics); it must be quick and must not raise.
        self.on_finished: Callable[[RequestOutput], None] | None = None
        self._thread = threading.Thread(target=self._run, name="llm-engine-loop", daemon=True)
        self._thread.start()

    @classmethod
    def from_engine_args(cls, **kwargs: Any) -> AsyncLLMEngine:
        return cls(LLMEngine(EngineConfig(**kwargs)))

    # What callers need from the engine, so that none reaches through `.engine`.
    @property
    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    @property
    def max_model_len(self) -> int:
        return self.engine.max_model_len

    @property
    def model_config(self) -> ModelConfig:
        return self.engine.model_config

    @property
    def model_dir(self) -> Path:
        """The prepared model's folder (its files identify the weights that answered)."""
        return self.engine.model_dir

    def get_stats(self) -> EngineStats:
        """A snapshot of the engine's counters (read from the loop thread's state)."""
        return self.engine.get_stats()

    def has_unfinished_requests(self) -> bool:
        return self.engine.has_unfinished_requests()

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive() and self.error is None and not self._stopped

    def dead_error(self) -> EngineDeadError:
        """Why no request can be served (the exception to raise when `is_running` is false)."""
        if self.error is not None:
            return EngineDeadError(f"the engine loop died ({type(self.error).__name__}: "
                                   f"{self.error}); restart the server")
        return EngineDeadError("the engine loop is not running (shut down)")

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
        rid = request_id or f"req-{next(self._ids)}"
        stream: asyncio.Queue = asyncio.Queue()
        entry = (asyncio.get_running_loop(), stream)
        # setdefault: two event loops may race for one id; only the first stream is kept.
        if self._streams.setdefault(rid, entry) is not entry:
            # The request already streaming under this id goes on untouched.
            raise InvalidRequestError(f"request id {rid!r} is already in use; give each request "
                                      "its own id")
        finished = False
        try:
            # Checked once the stream is registered: a loop that dies from now on sends it
            # its farewell, one that died before is seen here.
            if not self.is_running:
                raise self.dead_error()
            params = sampling_params or SamplingParams()
            # Compiled here, off the loop thread and within its bounds: a slow grammar
            # delays only its own request.
            grammar = None if params.structured_outputs is None else \
                await self.engine.grammars.compile(params.structured_outputs)
            self._send("add", (rid, prompt, params, time.monotonic(), grammar))
            while True:
                item = await stream.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if item.finished:
                    finished = True
                    return
        finally:
            # Not ours any more if the loop thread dropped it (our event loop had closed) and
            # a new request took the id since: that one must not be aborted.
            if self._streams.get(rid) is entry:
                del self._streams[rid]
                if not finished:
                    self._send("abort", rid)

    async def check_structured_outputs(self, params: StructuredOutputsParams) -> None:
        """Compile `params`' grammar now, off the event loop; InvalidRequestError when it
        cannot be. A caller refuses a bad schema before doing other work for the request,
        and the request that uses it finds the grammar in the cache."""
        await self.engine.grammars.compile(params)

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
        if target is None:
            return
        loop, stream = target
        try:
            loop.call_soon_threadsafe(stream.put_nowait, item)
        except RuntimeError:
            if not loop.is_closed():
                raise
            # The client's event loop closed under its stream: nobody can read it any more.
            # Drop that stream and its request (freeing its blocks); the loop goes on.
            logger.warning("request %s: its event loop is closed; aborting it", rid)
            if self._streams.get(rid) is target:
                del self._streams[rid]
            self.engine.abort(rid)

    def _apply_commands(self) -> None:
        while True:
            try:
                op, arg = self._commands.get_nowait()
            except queue.Empty:
                return
            if op == "abort":
                self.engine.abort(arg)
                continue
            rid, prompt, params, arrival, grammar = arg
            try:
                self.engine.add_request(rid, prompt, params, arrival, grammar)
            except InvalidRequestError as exc:
                self._deliver(rid, exc)
            except Exception as exc:  # e.g. the tokenizer: this request's fault, not the loop's
                logger.exception("adding request %s failed", rid)
                self.engine.abort(rid)
                self._deliver(rid, RequestFailedError(
                    f"the engine could not accept this request ({type(exc).__name__}: {exc})"))

    def _step(self) -> None:
        try:
            outputs = self.engine.step()
        except StepFailedError as exc:
            self._failures += 1
            logger.error("%s (%d in a row)", exc, self._failures, exc_info=exc.cause)
            for rid in exc.request_ids:
                self._deliver(rid, RequestFailedError(
                    f"the engine failed while running this request "
                    f"({type(exc.cause).__name__}: {exc.cause}); other requests are "
                    "unaffected, retry it"))
            if self._failures >= self.max_consecutive_failures:
                raise RuntimeError(f"{self._failures} engine steps failed in a row, the "
                                   f"last with {type(exc.cause).__name__}: {exc.cause}") from exc
            return
        self._failures = 0
        for out in outputs:
            self._deliver(out.request_id, out)
            if out.finished and self.on_finished is not None:
                self.on_finished(out)

    def _run(self) -> None:
        try:
            while not self._stopped:
                self._apply_commands()
                if not self.engine.has_unfinished_requests():
                    self.last_step_time = time.monotonic()
                    self._wakeup.wait(timeout=0.5)
                    self._wakeup.clear()
                    continue
                self._step()
                self.last_step_time = time.monotonic()
        except BaseException as exc:  # the loop must report any death to its waiters
            logger.exception("engine loop died")
            self.error = exc
        # Set before the farewell, so a stream registered after it sees is_running false.
        for rid in list(self._streams):
            self._deliver(rid, self.dead_error())
