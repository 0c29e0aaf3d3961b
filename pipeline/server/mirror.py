"""Traffic mirroring: a copy of each /ask request goes to `mirror_url`, fire-and-forget, as
TGI's users do for shadow testing. The copy waits in a bounded queue sent by one task, so a
slow or dead mirror never delays an answer: when the queue is full the copy is dropped and
counted. Only the body and the request id are sent, never the caller's credentials.
"""

from __future__ import annotations

import asyncio
import logging

import httpx

logger = logging.getLogger(__name__)


class Mirror:
    def __init__(self, url: str, queue_size: int, timeout_s: float = 10.0) -> None:
        self.url, self.queue_size, self.timeout_s = url, queue_size, timeout_s
        self.counts = {"sent": 0, "failed": 0, "dropped": 0}
        self._queue: asyncio.Queue[tuple[bytes, str]] | None = None
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Start the sender on the running event loop."""
        self._queue = asyncio.Queue(self.queue_size)
        self._task = asyncio.create_task(self._send_all(), name="finrag-mirror")

    def submit(self, body: bytes, request_id: str) -> None:
        if self._queue is None:
            return
        try:
            self._queue.put_nowait((body, request_id))
        except asyncio.QueueFull:
            self.counts["dropped"] += 1

    async def _send_all(self) -> None:
        assert self._queue is not None
        async with httpx.AsyncClient(timeout=self.timeout_s) as client:
            while True:
                body, rid = await self._queue.get()
                try:
                    await client.post(self.url, content=body, headers={
                        "content-type": "application/json", "x-request-id": rid,
                        "x-finrag-mirror": "1"})
                    self.counts["sent"] += 1
                except httpx.HTTPError as exc:
                    self.counts["failed"] += 1
                    logger.debug("mirror %s: %s", self.url, exc)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
