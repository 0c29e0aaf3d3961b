"""What the access log says and what a body framed or encoded oddly gets, over a real socket:
uvicorn with finrag's protocol (guards/connection.py) and the guards `create_app` wraps
every route in (access log, shutdown, body checks) around a small echo route.

- A control character in a logged field (a percent-encoded CR/LF in the path) is escaped,
  so no request can add a line to the text log.
- A request nobody answered is logged as what happened: 499 when the client left, 400
  when the protocol refused a malformed body itself; never a 500 nobody got.
- Content-Encoding is refused (415), and so is Content-Length with Transfer-Encoding (400,
  connection closed).
- A half-sent body when the shutdown bound passes gets 503 with Connection: close, and no
  traceback is logged.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn
from live_server import free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pipeline.server.guards.body_limit import BodyLimitMiddleware
from pipeline.server.guards.connection import server_protocol
from pipeline.server.guards.shutdown import ShutdownMiddleware
from pipeline.server.observability.access_log import AccessLog, TextFormatter

HANG_GUARD_S = 60  # only keeps a broken server from hanging the test


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse(await request.json())


class Lines(logging.Handler):
    """The text log, as `finrag serve --log-format text` writes it."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self.text, self.records = "", []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.text += self.format(record) + "\n"

    def wait_for(self, words: str) -> list[str]:
        deadline = time.monotonic() + HANG_GUARD_S
        while words not in self.text:
            assert time.monotonic() < deadline, f"no log line with {words!r}:\n{self.text}"
            time.sleep(0.05)
        return self.text.splitlines()


@contextmanager
def serving(shutdown_timeout: float = 30.0) -> Iterator[tuple[int, uvicorn.Server, Lines]]:
    inner = Starlette(routes=[Route("/v1/echo", _echo, methods=["POST"])])
    app = AccessLog(ShutdownMiddleware(BodyLimitMiddleware(inner, 1000, read_timeout=600)))
    port = free_port()
    lines = Lines()
    for name in ("finrag.access", "uvicorn.error"):
        logging.getLogger(name).addHandler(lines)
    logging.getLogger("finrag.access").setLevel(logging.INFO)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="info",
                                           http=server_protocol(30),
                                           timeout_graceful_shutdown=shutdown_timeout))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_GUARD_S
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield port, server, lines
    finally:
        server.should_exit = True
        thread.join(timeout=HANG_GUARD_S)
        for name in ("finrag.access", "uvicorn.error"):
            logging.getLogger(name).removeHandler(lines)


def exchange(port: int, raw: bytes, close_after: bool = False) -> bytes:
    """Send `raw`; the whole answer (until the server closes), or b"" with close_after."""
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as sock:
        sock.sendall(raw)
        if close_after:
            return b""
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def test_a_control_character_in_the_path_cannot_forge_a_log_line() -> None:
    forged = "1999-12-31 04:30:00,000 INFO finrag.access: 10.0.0.1 POST /admin/delete-all 200"
    path = "/x%0d%0a" + forged.replace(" ", "%20") + "%1b%e2%80%a8"
    with serving() as (port, _server, lines):
        exchange(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        text = lines.wait_for("delete-all")
    assert not any(line.startswith("1999-12-31") for line in text)
    logged = next(line for line in text if "delete-all" in line)
    assert "/x\\r\\n1999-12-31" in logged and "\\x1b\\u2028" in logged


def test_a_client_that_abandons_its_body_is_logged_499() -> None:
    with serving() as (port, _server, lines):
        exchange(port, b"POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 100\r\n\r\n{\"a\":", close_after=True)
        logged = next(line for line in lines.wait_for("/v1/echo") if "/v1/echo" in line)
    assert " POST /v1/echo 499 " in logged


def test_a_malformed_chunked_body_is_logged_as_the_400_it_got() -> None:
    with serving() as (port, _server, lines):
        answer = exchange(port, b"POST /v1/echo HTTP/1.1\r\nHost: x\r\n"
                                b"Content-Type: application/json\r\nTransfer-Encoding: chunked"
                                b"\r\n\r\n2\r\n{}\r\nzz\r\n")
        logged = next(line for line in lines.wait_for("/v1/echo") if "/v1/echo" in line)
    assert answer.startswith(b"HTTP/1.1 400")
    assert " POST /v1/echo 400 " in logged


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_a_compressed_body_is_refused_415(encoding: str) -> None:
    import zlib

    body = zlib.compress(b'{"a": 1}') if encoding != "gzip" else __import__("gzip").compress(
        b'{"a": 1}')
    with serving() as (port, _server, _lines):
        answer = exchange(port, b"POST /v1/echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                          b"Content-Type: application/json\r\nContent-Encoding: "
                          + encoding.encode() + b"\r\nContent-Length: "
                          + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert answer.startswith(b"HTTP/1.1 415")
    assert f"Content-Encoding: '{encoding}' is not supported".encode() in answer


def test_content_length_with_chunked_is_refused_and_the_connection_closed() -> None:
    smuggled = b"GET /v1/echo HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b'{"a":1}'
    with serving() as (port, _server, _lines):
        answer = exchange(port, b"POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: "
                          b"application/json\r\nContent-Length: 4\r\nTransfer-Encoding: "
                          b"chunked\r\n\r\n" + f"{len(body):x}\r\n".encode() + body
                          + b"\r\n0\r\n\r\n" + smuggled)
    assert answer.startswith(b"HTTP/1.1 400")
    assert b"both Content-Length and Transfer-Encoding" in answer
    assert b"connection: close" in answer.lower()
    assert answer.count(b"HTTP/1.1 ") == 1  # the request behind it was not served


def test_a_half_sent_body_at_shutdown_gets_503_and_no_traceback() -> None:
    with serving(shutdown_timeout=0.5) as (port, server, lines), \
            socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as sock:
        sock.sendall(b"POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"a\":")
        lines.wait_for("")  # the request is in; now the shutdown
        time.sleep(0.2)
        server.should_exit = True
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        logged = lines.wait_for(" 503 ")
    assert answer.startswith(b"HTTP/1.1 503")
    assert b"connection: close" in answer.lower() and b"shutting down" in answer
    assert not [r for r in lines.records if r.exc_info], "\n".join(logged)
    assert any(" POST /v1/echo 503 " in line for line in logged)
