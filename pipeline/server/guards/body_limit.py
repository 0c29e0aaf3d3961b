"""Request bodies: at most `max_body_bytes`, JSON, UTF-8, checked before any route sees them.

A pure ASGI middleware: it counts the bytes as they arrive, whatever Content-Length says
(a chunked body has none, and a client may lie), stops reading at the limit and answers
413; then it checks the media type (415) and the encoding (UTF-8, else 422 or 400 on /v1)
and hands the route the buffered body. Messages after the body (the client's disconnect)
still reach the app, so streaming answers keep noticing a client that went away.
"""

from __future__ import annotations

from email.message import Message
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from pipeline.server.errors import error_response, invalid_status

_BODY_METHODS = {"POST", "PUT", "PATCH"}


def is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    msg = Message()
    msg["content-type"] = content_type
    sub = msg.get_content_subtype()
    return msg.get_content_maintype() == "application" and (sub == "json" or sub.endswith("+json"))


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app, self.limit = app, max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            await self._too_large(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # nobody left to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
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
        return None

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = (f"request body over {self.limit} bytes (the server's max_body_bytes "
                   "setting); send a smaller request")
        # The client may still be sending: close the connection rather than read the rest.
        await error_response(scope, 413, message, {"Connection": "close"})(scope, receive, send)
