"""Server-sent events: one `data:` line per event, and the message of an error mid-stream."""

from __future__ import annotations

import json
from typing import Any

from pipeline.server.errors import internal_message, status_of


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def stream_error(exc: Exception, rid: str) -> str:
    """The message of an error that ends a stream already under way: a typed error's own,
    else the request id the server log has it under (the status line is gone)."""
    if status_of(exc) is not None:
        return str(exc)
    return internal_message(exc, rid)
