"""Cancel a handler's work when its client goes away.

Starlette's StreamingResponse stops its body (and so aborts the engine request) when the
client disconnects, but uvicorn never cancels a plain handler: an answer nobody will read
would run to its end, holding a batch slot and KV blocks. `cancel_on_disconnect` races the
work against the connection's `http.disconnect` message and cancels the work first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from fastapi import Request
from starlette.requests import ClientDisconnect

T = TypeVar("T")


async def _disconnected(request: Request) -> None:
    # The body has been read by now, so the next message is the disconnect (or, on
    # keep-alive, the one uvicorn sends once the response is complete).
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def cancel_on_disconnect(request: Request, work: Awaitable[T]) -> T:
    """`await work`, unless the client disconnects first: then cancel it (leaving an engine
    request's `async for` aborts it) and raise `ClientDisconnect`."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        watcher.cancel()
        raise
    watcher.cancel()
    if task.done():
        return task.result()
    task.cancel()
    # Let the cancellation reach the engine's abort before answering.
    await asyncio.gather(task, return_exceptions=True)
    raise ClientDisconnect()
