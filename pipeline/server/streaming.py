"""Server-sent events: one `data:` line per event, and the message of an error mid-stream."""

from __future__ import annotations

import json
import logging
from typing import Any

from llm_engine.engine.errors import EngineDeadError, RequestFailedError

logger = logging.getLogger(__name__)


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def stream_error(exc: Exception) -> str:
    """The message of an error that ends a stream already under way."""
    if isinstance(exc, RequestFailedError | EngineDeadError | ValueError):
        return str(exc)
    logger.exception("stream failed")
    return f"internal error ({type(exc).__name__}: {exc})"
