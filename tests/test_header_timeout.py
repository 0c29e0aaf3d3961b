"""Slowloris on headers: a connection that never finishes its request headers is closed
after header_read_timeout (uvicorn alone keeps it open); a complete request is served."""

from __future__ import annotations

import socket
import threading

from live_server import listening_socket, serving_in_thread
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from pipeline.server.guards.header_timeout import header_timeout_protocol


def _closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes the connection (EOF or reset); the 120 s socket timeout
    only keeps a broken server from hanging the test."""
    sock.settimeout(120)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_trickled_or_missing_headers_are_cut_off_and_whole_requests_served() -> None:
    app = Starlette(routes=[Route("/", lambda _r: PlainTextResponse("ok"))])
    sock = listening_socket()
    port = sock.getsockname()[1]
    with serving_in_thread(app, sock, http=header_timeout_protocol(0.5)):
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                threading.Event().wait(0.1)
        silent = socket.create_connection(("127.0.0.1", port))
        trickle = socket.create_connection(("127.0.0.1", port))
        trickle.sendall(b"GET / HTTP/1.1\r\nHost: t\r\n")  # and never the blank line
        assert _closed_by_server(silent) and _closed_by_server(trickle)
        with socket.create_connection(("127.0.0.1", port)) as whole:
            whole.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            whole.settimeout(120)
            reply = b""
            while chunk := whole.recv(1024):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b"ok")
