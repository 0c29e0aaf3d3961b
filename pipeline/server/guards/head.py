"""HEAD answered as GET without the body (RFC 9110 §9.3.2), for load balancers' probes.

FastAPI routes declared with GET do not take HEAD (Starlette's plain routes do), so this
runs HEAD requests as GET and drops the body: same status and headers (Content-Length
included), 405 only where GET is not allowed either.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGetMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the rest of a streamed body: nothing is sent for HEAD
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
