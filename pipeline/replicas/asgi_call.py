"""One forwarded HTTP request run through an in-process ASGI app, its answer as a stream.

The replica's FastAPI app (pipeline.server.app) is the single-process server's own app, so
every route, guard and error shape is the same behind Ray Serve. The first item yielded is
the head (status, headers and the body so far); it comes when the body is complete or
when the app starts streaming (a second body message), so an answer that is not streamed
arrives whole in one item, and an ingress whose replica dies before that item can retry
it elsewhere: nothing was sent to the client yet. Later items are body pieces.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message


@dataclass
class Forwarded:
    """What the ingress forwards of an HTTP request (picklable)."""

    method: str
    path: str
    query: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes
    client: tuple[str, int] | None = None
    scheme: str = "http"


@dataclass
class Head:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    more: bool  # body pieces follow
    replica: str = ""


def _scope(req: Forwarded) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1", "method": req.method, "scheme": req.scheme,
            "path": req.path, "raw_path": req.path.encode(), "query_string": req.query,
            "root_path": "", "headers": req.headers, "client": req.client,
            "server": ("replica", 0)}


async def call(app: ASGIApp, req: Forwarded, replica: str) -> AsyncIterator[Head | bytes]:
    """Run `req` through `app`; yield its Head, then body pieces."""
    out: asyncio.Queue[Message | None] = asyncio.Queue()
    sent_body = False
    gone = asyncio.Event()  # set when the caller stops reading: the app sees a disconnect

    async def receive() -> Message:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": req.body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        await out.put(message)

    async def run() -> None:
        try:
            await app(_scope(req), receive, send)
        finally:
            await out.put(None)

    task = asyncio.create_task(run())
    head: Head | None = None
    delivered = False
    try:
        while (message := await out.get()) is not None:
            if message["type"] == "http.response.start":
                head = Head(message["status"], list(message.get("headers", [])), b"", True,
                            replica)
            elif message["type"] == "http.response.body" and head is not None:
                piece, more = message.get("body", b""), message.get("more_body", False)
                if delivered:
                    if piece:
                        yield piece
                    continue
                head.body += piece
                if not more or head.body:
                    head.more, delivered = more, True
                    yield head
        if head is not None and not delivered:
            head.more = False
            yield head
        await task  # an exception of the app's surfaces here
    finally:
        gone.set()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
