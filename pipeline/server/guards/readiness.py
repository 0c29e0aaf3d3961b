"""Until the pipeline is built and warmed up, routes answer 503 with Retry-After instead of
reaching a pipeline that is not there; /health, /ready and the page answer at once (a
first run can spend minutes building engines/, and probes must see the process alive)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from pipeline.server.errors import error_response

ALWAYS_OPEN = {"/health", "/ready", "/ping", "/", "/docs", "/openapi.json"}
RETRY_AFTER_S = 5


class ReadinessMiddleware:
    def __init__(self, app: ASGIApp, state: object) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (scope["type"] != "http" or getattr(self.state, "ready", False)
                or path in ALWAYS_OPEN or path.startswith("/static/")):
            await self.app(scope, receive, send)
            return
        failed = getattr(self.state, "start_error", None)
        message = (f"finrag failed to start: {failed}" if failed is not None else
                   "finrag is starting (loading, or on a first run building, its models and "
                   "index); retry shortly, /ready turns 200 when it serves")
        await error_response(scope, 503, message, {"Retry-After": str(RETRY_AFTER_S)})(
            scope, receive, send)
