"""Compiling grammars off the engine thread, bounded in time, in size and in what is kept.

A grammar can take a minute to compile (`{"pattern": "[\\u0000-\\uffff]{1,12000}"}`) and
megabytes to hold. Compiled on the engine's loop thread, one such request stalled every
other request; cached without a bound, distinct schemas grew the process by gigabytes.
So every grammar, for /v1/* and /ask alike, is compiled here:

- in a small pool of worker threads (xgrammar releases the GIL while it compiles, so
  neither the event loop nor the engine thread waits on it);
- within `compile_timeout_s`: past it the request is refused (InvalidRequestError, a 400
  naming the field), and the same constraint is refused at once from then on. A thread
  cannot be stopped, so the compile runs on to its end and its result is dropped;
- refused when its text is over `max_spec_bytes`, or when it compiles to over
  `max_grammar_bytes`;
- cached by the constraint's key in an LRU bounded by `cache_entries` and `cache_bytes`.
  Identical constraints asked for at once share one compile.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from llm_engine.engine.errors import InvalidRequestError
from llm_engine.structured_output import StructuredOutputManager, StructuredOutputsParams

MIB = 1 << 20


@dataclass(frozen=True)
class GrammarLimits:
    """Bounds on compiling and keeping grammars."""

    compile_timeout_s: float = 10.0
    max_spec_bytes: int = 256 << 10
    max_grammar_bytes: int = 64 * MIB
    cache_entries: int = 64
    cache_bytes: int = 128 * MIB
    workers: int = 2
    # Constraints that timed out, remembered (keys only) so a retry is refused at once.
    slow_entries: int = 1024

    def __post_init__(self) -> None:
        for name in ("max_spec_bytes", "max_grammar_bytes", "cache_entries", "cache_bytes",
                     "workers", "slow_entries"):
            if getattr(self, name) < 1:
                raise ValueError(f"GrammarLimits.{name}: at least 1, got {getattr(self, name)}")
        if not self.compile_timeout_s > 0:
            raise ValueError(f"GrammarLimits.compile_timeout_s: above 0, got "
                             f"{self.compile_timeout_s}")


class _Lru:
    """Compiled grammars by key, dropping the least recently used past either bound."""

    def __init__(self, entries: int, max_bytes: int) -> None:
        self.entries, self.max_bytes = entries, max_bytes
        self.items: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self.bytes = 0

    def get(self, key: str) -> Any:
        hit = self.items.get(key)
        if hit is None:
            return None
        self.items.move_to_end(key)
        return hit[0]

    def put(self, key: str, value: Any, size: int) -> None:
        if key in self.items or size > self.max_bytes:
            return
        self.items[key] = (value, size)
        self.bytes += size
        while len(self.items) > self.entries or self.bytes > self.max_bytes:
            _, (_, dropped) = self.items.popitem(last=False)
            self.bytes -= dropped


class GrammarService:
    """The one place grammars are compiled and kept (see the module's docstring)."""

    def __init__(self, manager: Callable[[], StructuredOutputManager],
                 limits: GrammarLimits | None = None) -> None:
        self._manager = manager  # made at the first use: its tokenizer tables take a moment
        self.limits = limits or GrammarLimits()
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="grammar")
        self._lock = threading.Lock()
        self._cache = _Lru(self.limits.cache_entries, self.limits.cache_bytes)
        self._running: dict[str, Future] = {}
        self._slow: OrderedDict[str, None] = OrderedDict()

    @property
    def cached(self) -> tuple[int, int]:
        """(grammars, bytes) held in the cache."""
        with self._lock:
            return len(self._cache.items), self._cache.bytes

    async def compile(self, params: StructuredOutputsParams) -> Any:
        """The compiled grammar, from the cache or a worker; InvalidRequestError when it
        cannot be compiled, or not within the limits."""
        key = self._admit(params)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            future = self._running.get(key)
            if future is None:
                future = self._pool.submit(self._compile, key, params)
                self._running[key] = future
        timeout = self.limits.compile_timeout_s
        waiting = asyncio.wrap_future(future)
        # Its error is read below, or, past the time bound, by nobody: not "never retrieved".
        waiting.add_done_callback(lambda f: f.cancelled() or f.exception())
        # asyncio.wait, not wait_for: a timeout must not cancel a compile others share.
        done, _ = await asyncio.wait({waiting}, timeout=timeout)
        if not done:
            with self._lock:
                self._slow[key] = None
                while len(self._slow) > self.limits.slow_entries:
                    self._slow.popitem(last=False)
            raise self._too_slow(params)
        return waiting.result()

    def compile_now(self, params: StructuredOutputsParams) -> Any:
        """As `compile`, on the caller's thread and without the time bound (the offline
        `LLM`, whose caller waits for its own requests anyway)."""
        key = self._admit(params)
        with self._lock:
            hit = self._cache.get(key)
        return hit if hit is not None else self._compile(key, params)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _admit(self, params: StructuredOutputsParams) -> str:
        key = params.key()
        if len(key.encode()) > self.limits.max_spec_bytes:
            raise InvalidRequestError(
                f"structured_outputs.{params.kind()}: {len(key.encode())} bytes; at most "
                f"{self.limits.max_spec_bytes} bytes are compiled")
        with self._lock:
            if key in self._slow:
                raise self._too_slow(params)
        return key

    def _too_slow(self, params: StructuredOutputsParams) -> InvalidRequestError:
        return InvalidRequestError(
            f"structured_outputs.{params.kind()}: not compiled within "
            f"{self.limits.compile_timeout_s:g} s (the grammar is too complex, e.g. a large "
            "repetition count); simplify it")

    def _compile(self, key: str, params: StructuredOutputsParams) -> Any:
        try:
            compiled = self._manager().compile(params)
            size = int(compiled.memory_size_bytes)
            if size > self.limits.max_grammar_bytes:
                raise InvalidRequestError(
                    f"structured_outputs.{params.kind()}: compiles to {size / MIB:.0f} MiB; "
                    f"at most {self.limits.max_grammar_bytes / MIB:.0f} MiB are kept; simplify it")
            with self._lock:
                if key not in self._slow:  # a late result of a refused compile is dropped
                    self._cache.put(key, compiled, size)
            return compiled
        finally:
            with self._lock:
                self._running.pop(key, None)
