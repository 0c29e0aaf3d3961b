"""Request ids and the access log: one record per request with its id, route, status,
latency and token counts, as text or as one JSON object per line (`log_format`).

The request id is the client's `X-Request-Id` when it sends a sensible one (so a front end
can follow its own ids through our logs), else a new UUID; it replaces the request's header
(so `errors.request_id` finds it) and is echoed on every response.
Credentials never reach a log line: query parameters that carry them are redacted.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.server.errors import request_id
from pipeline.server.guards.access import redact_query
from pipeline.server.guards.connection import SERVER_STATUS

# nginx's "client closed request": the client left before any answer was sent.
CLIENT_CLOSED = 499

logger = logging.getLogger("finrag.access")

# Characters that could end a text log line or fake one (a percent-encoded CR/LF in a path
# arrives decoded): C0 and C1 controls, DEL and Unicode's line and paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# Record fields that logging.LogRecord has anyway: not copied into the JSON object.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def record_usage(scope: Scope, prompt_tokens: int, completion_tokens: int,
                 timings: dict[str, Any] | None = None) -> None:
    """Handlers report the tokens a request used (and its stage timings, in ms), for its
    access-log record and trace."""
    state = scope.setdefault("state", {})
    state["prompt_tokens"] = state.get("prompt_tokens", 0) + prompt_tokens
    state["completion_tokens"] = state.get("completion_tokens", 0) + completion_tokens
    if timings is not None:
        state["timings"] = timings


def escape_controls(text: str) -> str:
    """`text` with each control character written as an escape (\\n, \\x1b, \\u2028), so a
    logged value never breaks its line or forges another."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"
                                             if ord(m.group()) < 0x100
                                             else f"\\u{ord(m.group()):04x}"), text)


class TextFormatter(logging.Formatter):
    """`time LEVEL logger: message`, one line per record whatever its fields hold (the
    traceback of an exception, appended after it, keeps its lines)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        return escape_controls(super().formatMessage(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any `extra` fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        out.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            out["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record comes (an embedding program or a
    test may swap it), so a handler never holds a stream that was closed since."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def remove_logging() -> None:
    """Take finrag's handler off the root logger (when `finrag serve` returns in a process
    that goes on, such as a test)."""
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers if not isinstance(h, _StderrHandler)]


def configure_logging(log_format: str, level: str) -> dict[str, Any]:
    """Give the root logger finrag's handler (replacing one set before, leaving others'
    handlers alone); returns uvicorn's log_config to match it."""
    formatter: logging.Formatter = JsonFormatter() if log_format == "json" else \
        TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    formatter.converter = time.gmtime
    handler = _StderrHandler()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    remove_logging()
    root.addHandler(handler)
    logging.addLevelName(5, "TRACE")  # uvicorn's level below DEBUG
    number = logging.getLevelName(level.upper())
    root.setLevel(number)
    # uvicorn's own loggers propagate to ours; its access log is replaced by AccessLog.
    return {"version": 1, "disable_existing_loggers": False,
            "loggers": {"uvicorn": {"level": number},
                        "uvicorn.access": {"level": "WARNING", "propagate": False}}}


class AccessLog:
    """Pure ASGI middleware (streams pass through untouched): gives each HTTP request an
    id, echoes it as `X-Request-Id`, and logs one record when the response has ended."""

    def __init__(self, app: ASGIApp, state: Any = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        # `state.tracing` (the app's state) is read per request, so it can be set after start.
        self.app, self.state, self.clock = app, state, clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = [(k, v) for k, v in scope.get("headers") or [] if k != b"x-request-id"]
        rid = request_id(Headers(scope=scope))
        # Handlers read the id from the request's headers (errors.request_id), so each
        # request has one id from here on, the client's or ours.
        scope["headers"] = [*headers, (b"x-request-id", rid.encode())]
        state = scope.setdefault("state", {})
        start, start_ns = self.clock(), time.time_ns()
        status: int | None = None
        client_left = False

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                out = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message["headers"] = [*out, (b"x-request-id", rid.encode())]
            await send(message)

        async def receive_watched() -> Message:
            nonlocal client_left
            message = await receive()
            client_left = client_left or message["type"] == "http.disconnect"
            return message

        try:
            await self.app(scope, receive_watched, send_with_id)
        finally:
            if status is None:  # the app answered nothing: say why, not a 500 nobody got
                status = state.get(SERVER_STATUS) or (CLIENT_CLOSED if client_left else 500)
            query = scope.get("query_string", b"").decode("latin-1")
            path = redact_query(scope["path"] + (f"?{query}" if query else ""))
            latency_ms = round((self.clock() - start) * 1000, 1)
            client = (scope.get("client") or ("-", 0))[0]
            logger.info("%s %s %s %d %.1fms id=%s", client, scope["method"], path, status,
                        latency_ms, rid,
                        extra={"request_id": rid, "client": client, "method": scope["method"],
                               "route": path, "status": status, "latency_ms": latency_ms,
                               "prompt_tokens": state.get("prompt_tokens", 0),
                               "completion_tokens": state.get("completion_tokens", 0)})
            tracing = getattr(self.state, "tracing", None)
            if tracing is not None:
                tracing.record(f"{scope['method']} {scope['path']}", start_ns,
                                    time.time_ns(), {"finrag.request_id": rid,
                                                     "http.route": scope["path"],
                                                     "http.status_code": status},
                                    state.get("timings"))
