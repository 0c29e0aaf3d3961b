"""Request bodies: at most `max_body_bytes`, JSON, UTF-8, checked before any route sees them.

A pure ASGI middleware: it counts the bytes as they arrive, whatever Content-Length says
(a chunked body has none, and a client may lie), stops reading at the limit and answers
413; then it checks the media type (415), the encoding and what the JSON holds
(`json_body`: UTF-8, bounded nesting and digits, no lone surrogates; else 422, or 400 on
/v1) and hands the route the buffered body. A body sent with both Content-Length and
Transfer-Encoding is refused (400, connection closed: request smuggling), and so is one
with a Content-Encoding (415: this server decodes none). Messages after the body (the client's
disconnect) still reach the app, so streaming answers keep noticing a client that went away.

Uploads (`streamed`: path -> byte limit, the documents API's multipart bodies) are not
buffered: their bytes pass to the route as they arrive, counted, and past the limit the
route's read fails and the answer is 413 (if nothing was answered yet).

The whole body must arrive within `read_timeout` seconds (408 otherwise): a client that
sends a few bytes now and then, or stops halfway, no longer holds a connection (and a
graceful shutdown) forever. Before a 413 the rest of a body up to DRAIN_LIMITS times the
limit is read and dropped: closing on unread bytes makes the kernel answer them with a
reset, which can reach the client before the 413 does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from email.message import Message
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as AsgiMessage

from pipeline.server.errors import error_response, invalid_status
from pipeline.server.guards.json_body import json_problem

_BODY_METHODS = {"POST", "PUT", "PATCH"}
DRAIN_LIMITS = 4  # bodies up to 4x max_body_bytes get a clean 413; larger ones may see a reset


class _ReadTimeout(Exception):
    pass


class _UploadTooLarge(Exception):
    pass


def is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    msg = Message()
    msg["content-type"] = content_type
    sub = msg.get_content_subtype()
    return msg.get_content_maintype() == "application" and (sub == "json" or sub.endswith("+json"))


def _framing_problem(headers: dict[str, str], with_body: bool) -> tuple[int, str] | None:
    """A request framed two ways (any method), or a body encoded in a way this server does
    not decode."""
    if "content-length" in headers and "transfer-encoding" in headers:
        # Two framings: a proxy in front may read the body by one and us by the other,
        # and a second request hidden in the first passes it (request smuggling).
        return 400, ("body: both Content-Length and Transfer-Encoding were sent; send "
                     "exactly one of them")
    encoding = headers.get("content-encoding", "identity").strip().lower()
    if with_body and encoding not in ("", "identity"):
        return 415, (f"Content-Encoding: {encoding[:40]!r} is not supported; send the body "
                     "uncompressed (no Content-Encoding)")
    return None


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int, read_timeout: float = 60.0,
                 clock: Callable[[], float] = time.monotonic,
                 streamed: dict[str, int] | None = None) -> None:
        self.app, self.limit, self.read_timeout, self.clock = app, max_body_bytes, read_timeout, clock
        self.streamed = streamed or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        framing = _framing_problem(headers, scope["method"] in _BODY_METHODS)
        if framing is not None:
            status, text = framing
            # Closed after the answer: what follows on this connection cannot be trusted.
            await error_response(scope, status, text, {"Connection": "close"})(
                scope, receive, send)
            return
        if scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length", "")
        deadline = self.clock() + self.read_timeout
        if scope["path"] in self.streamed:
            await self._pass_through(scope, receive, send, self.streamed[scope["path"]],
                                     declared, deadline)
            return
        chunks: list[bytes] = []
        size = 0
        try:
            if declared.isdigit() and int(declared) > self.limit:
                await self._too_large(scope, receive, send, 0, int(declared), deadline)
                return
            while True:
                message = await self._receive(receive, deadline)
                if message["type"] == "http.disconnect":
                    return  # nobody left to answer
                chunk = message.get("body", b"")
                size += len(chunk)
                more = message.get("more_body", False)
                if size > self.limit:
                    if more:
                        await self._too_large(scope, receive, send, size, None, deadline)
                    else:
                        await self._answer_too_large(scope, receive, send)
                    return
                chunks.append(chunk)
                if not more:
                    break
        except _ReadTimeout:
            await error_response(scope, 408, (
                f"request body not received within {self.read_timeout:g} s (the server's "
                "request_read_timeout setting); send the whole body at once"),
                {"Connection": "close"})(scope, receive, send)
            return
        body = b"".join(chunks)
        problem = self._problem(body, headers.get("content-type"))
        if problem is not None:
            status, text = problem
            await error_response(scope, status or invalid_status(scope["path"]), text)(
                scope, receive, send)
            return

        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    def _problem(body: bytes, content_type: str | None) -> tuple[int | None, str] | None:
        if not body:
            return None  # the route says which fields are missing
        if not is_json(content_type):
            return 415, (f"send the body as JSON with Content-Type: application/json "
                         f"(got {content_type or 'no Content-Type'})")
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, (f"body: not UTF-8 (invalid byte at position {exc.start}); send "
                          "UTF-8 encoded JSON")
        problem = json_problem(body)
        return None if problem is None else (None, problem)

    async def _pass_through(self, scope: Scope, receive: Receive, send: Send, limit: int,
                            declared: str, deadline: float) -> None:
        """Hand the body to the route as it arrives, counting it against `limit`."""
        too_large = (f"upload over {limit} bytes (the server's max_upload_bytes setting); "
                     "send a smaller file")
        if declared.isdigit() and int(declared) > limit:
            await error_response(scope, 413, too_large, {"Connection": "close"})(
                scope, receive, send)
            return
        size, done, started = 0, False, False

        async def counted() -> AsgiMessage:
            nonlocal size, done
            if done:  # after the body: the disconnect a streaming answer listens for
                return await receive()
            message = await self._receive(receive, deadline)
            size += len(message.get("body", b""))
            done = not message.get("more_body", False)
            if size > limit:
                raise _UploadTooLarge
            return message

        async def tracked(message: AsgiMessage) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except (_UploadTooLarge, _ReadTimeout) as exc:
            if started:
                return
            status, text = (413, too_large) if isinstance(exc, _UploadTooLarge) else (
                408, f"upload not received within {self.read_timeout:g} s (the server's "
                     "request_read_timeout setting)")
            await error_response(scope, status, text, {"Connection": "close"})(
                scope, receive, send)

    async def _receive(self, receive: Receive, deadline: float) -> AsgiMessage:
        left = deadline - self.clock()
        if left <= 0:
            raise _ReadTimeout
        try:
            return await asyncio.wait_for(receive(), left)
        except TimeoutError:
            raise _ReadTimeout from None

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, read: int,
                         declared: int | None, deadline: float) -> None:
        """Read and drop the rest of a body within DRAIN_LIMITS x the limit, then 413."""
        cap = DRAIN_LIMITS * self.limit
        if declared is None or declared <= cap:
            while read <= cap:
                message = await self._receive(receive, deadline)
                if message["type"] == "http.disconnect":
                    return
                read += len(message.get("body", b""))
                if not message.get("more_body", False):
                    break
        await self._answer_too_large(scope, receive, send)

    async def _answer_too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = (f"request body over {self.limit} bytes (the server's max_body_bytes "
                   "setting); send a smaller request")
        # Whatever is left unread is not read: the connection closes after this answer.
        await error_response(scope, 413, message, {"Connection": "close"})(scope, receive, send)
