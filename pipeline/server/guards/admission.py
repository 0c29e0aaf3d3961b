"""Admission control: a bound on the work in flight, so overload is refused at once.

A request that runs the models is admitted before anything is queued, with the tokens it
holds (prompt + max_tokens; /ask's estimate in request_limits.ask_tokens). Past
`max_queued_requests` requests or `max_queued_tokens` tokens admitted and not finished, it
is answered 503 at once with Retry-After, instead of joining a queue whose wait grows
without limit; the requests admitted keep a latency bounded by the work allowed in flight.
A request that would not fit an empty server is never refused for overload (the settings
require max_queued_tokens >= max_model_len). Counting happens on the event loop only, so
it needs no lock.

A ticket is released when its HTTP exchange ends, whether the answer was sent in full,
streamed, or cut short by the client (`AdmissionMiddleware`), so a route never has to.

Retry-After: the mean time admitted requests take (an exponential average; before any
has finished, how long the oldest in flight has been running), 1 to 60 s: within that
time the requests in flight, which run together under continuous batching, have mostly
finished.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fastapi import Request
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from starlette.types import ASGIApp, Receive, Scope, Send

from pipeline.server.errors import RequestRejected

TICKETS = "finrag.admission_tickets"
_EWMA = 0.2


@dataclass(eq=False)
class Ticket:
    tokens: int
    start: float


class Admission:
    def __init__(self, max_requests: int, max_tokens: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_requests, self.max_tokens = max_requests, max_tokens
        self.clock = clock
        self.tokens = 0
        self.rejected = 0
        self._open: set[Ticket] = set()
        self._mean_s: float | None = None

    @property
    def requests(self) -> int:
        return len(self._open)

    @property
    def retry_after(self) -> int:
        took = self._mean_s
        if took is None:  # nothing finished yet: the oldest in flight has run this long
            now = self.clock()
            took = now - min((t.start for t in self._open), default=now)
        return min(60, max(1, math.ceil(took)))

    def admit(self, tokens: int) -> Ticket:
        busy = self.requests > 0
        if busy and (self.requests + 1 > self.max_requests
                     or self.tokens + tokens > self.max_tokens):
            self.rejected += 1
            wait = self.retry_after
            raise RequestRejected(
                f"server busy: {self.requests} requests holding {self.tokens} tokens are in "
                f"flight (bounds: max_queued_requests={self.max_requests}, max_queued_tokens="
                f"{self.max_tokens}) and this one needs {tokens} tokens; retry in {wait} s",
                503, {"Retry-After": str(wait)})
        self.tokens += tokens
        ticket = Ticket(tokens, self.clock())
        self._open.add(ticket)
        return ticket

    def release(self, ticket: Ticket) -> None:
        self._open.discard(ticket)
        self.tokens -= ticket.tokens
        took = self.clock() - ticket.start
        self._mean_s = took if self._mean_s is None else (1 - _EWMA) * self._mean_s + _EWMA * took


class AdmissionCollector:
    """Prometheus view of the admission counters, read at scrape time."""

    def __init__(self, admission: Admission) -> None:
        self.admission = admission

    def describe(self) -> list:
        return []

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        a = self.admission
        yield GaugeMetricFamily("finrag:admitted_requests",
                                "Requests admitted and not finished.", value=a.requests)
        yield GaugeMetricFamily("finrag:admitted_tokens",
                                "Prompt + max_tokens tokens of the admitted requests.",
                                value=a.tokens)
        yield CounterMetricFamily("finrag:rejected_requests",
                                  "Requests refused with 503 by admission control.",
                                  value=a.rejected)


def admit(request: Request, tokens: int) -> None:
    """Admit this request (503 past the bounds); its ticket is released when it ends."""
    ticket = request.app.state.admission.admit(tokens)
    request.scope[TICKETS].append(ticket)


class AdmissionMiddleware:
    """Releases the tickets a request took once its response is over."""

    def __init__(self, app: ASGIApp, admission: Admission) -> None:
        self.app, self.admission = app, admission

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[TICKETS] = []
        try:
            await self.app(scope, receive, send)
        finally:
            for ticket in scope[TICKETS]:
                self.admission.release(ticket)
