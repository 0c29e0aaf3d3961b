"""A request still in flight when the graceful-shutdown bound passes: a 503, not a 500.

uvicorn cancels such requests; uncaught, the cancellation reaches uvicorn, which logs
"Exception in ASGI application" with a traceback and answers 500 (a half-sent body), or
cuts a stream mid-way. Requests the protocol marked as draining (connection.py) get a 503
with `Connection: close` when nothing was answered yet; a stream ends with its route
family's error event (the routes catch the cancellation themselves), and nothing is logged
as an error.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.server.errors import error_response
from pipeline.server.guards.connection import draining

SHUTTING_DOWN = ("the server is shutting down and cut this request; send it again (to "
                 "another replica, or once the server is back)")


class ShutdownMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = ended = False

        async def watch(message: Message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                ended = True
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except asyncio.CancelledError:
            if not draining(scope):
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # handled: the answer below is this request's last word
            if not started:
                await error_response(scope, 503, SHUTTING_DOWN, {"Connection": "close"})(
                    scope, receive, send)
            elif not ended:  # a stream whose error event went out: end its body cleanly
                await send({"type": "http.response.body", "body": b"", "more_body": False})
