"""A client that sends a POST on a raw socket and drops the connection mid-answer, by FIN or
by RST: what the soak (benchmarks/soak.py) and the server's fault tests
(tests/test_server_faults.py) do to the server."""

from __future__ import annotations

import asyncio
import json
import random
import time

READ_BYTES = 65536
# How a server-sent event starts: the answer's events are counted by it.
EVENT = b"data: "


async def post(port: int, path: str, body: dict, host: str
               ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to 127.0.0.1:`port` with the JSON request sent; OSError when it cannot be
    opened or written (the connection then closed)."""
    data = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        await writer.drain()
    except OSError:
        writer.transport.abort()
        raise
    return reader, writer


async def read_until(reader: asyncio.StreamReader, deadline: float,
                     events: int | None) -> bytes:
    """What the server sent until `events` server-sent events have come (None: until the
    deadline whatever comes), `deadline` (time.monotonic) passes or the server closes."""
    raw = b""
    while events is None or raw.count(EVENT) < events:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            got = await asyncio.wait_for(reader.read(READ_BYTES), left)
        except asyncio.TimeoutError:
            break
        if not got:
            break
        raw += got
    return raw


def drop(writer: asyncio.StreamWriter, rng: random.Random) -> None:
    """Closes the connection by RST (abort) or by FIN (close), one or the other at random."""
    if rng.random() < 0.5:
        writer.transport.abort()
    else:
        writer.close()
