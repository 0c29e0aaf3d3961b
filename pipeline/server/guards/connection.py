"""The HTTP protocol finrag serves with, and the notes it leaves on a request for the app.

uvicorn's h11 protocol with the header timeout (header_timeout.py), and two things only
the protocol knows, written into the request's scope state:
- `server_status`: the protocol answered the request itself (a 400 for a malformed body,
  such as bad chunked encoding), so the access log records that status, not a 500;
- `draining`: a graceful shutdown began while the request was in flight. When the
  shutdown bound passes, uvicorn cancels the request; with this note the app answers 503
  (or ends a stream with its error event) instead of letting uvicorn log a traceback and
  send a 500 (guards/shutdown.py).
"""

from __future__ import annotations

from typing import Any

from pipeline.server.guards.header_timeout import HeaderTimeoutProtocol

SERVER_STATUS = "server_status"
DRAINING = "draining"


def draining(scope: dict[str, Any]) -> bool:
    """Whether a graceful shutdown began while this request was in flight."""
    return bool(scope.get("state", {}).get(DRAINING))


class ServerProtocol(HeaderTimeoutProtocol):
    def _note(self, key: str, value: Any) -> None:
        cycle = getattr(self, "cycle", None)
        if cycle is not None and not cycle.response_complete:
            cycle.scope.setdefault("state", {})[key] = value

    def send_400_response(self, msg: str) -> None:
        self._note(SERVER_STATUS, 400)
        super().send_400_response(msg)

    def shutdown(self) -> None:
        self._note(DRAINING, True)
        super().shutdown()


def server_protocol(header_timeout: float) -> type[ServerProtocol]:
    """The protocol class to give uvicorn (`uvicorn.Config(http=...)`)."""
    return type("ServerProtocol", (ServerProtocol,), {"header_timeout": header_timeout})
