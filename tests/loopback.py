"""httpx's request functions (get, post, ..., stream) for requests to the tests' loopback
servers.

Each call is what httpx.get / httpx.post make of it, a client of its own (a connection of
its own, no cookies kept between calls), save one thing: the TLS context. httpx builds one
for every client it makes, loading certifi's CA bundle (about 20 ms of CPU), which an
http:// request never uses; here one context, built once, serves every call. The server
modules make over 1,300 such calls a run, most of them polls (/ready while a server starts,
a document's status while it indexes, a record written after its response): about 70 s of
CPU on 2 cores, taken from the server they wait for, which runs in the same process (GIL)
or beside it.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx

TLS = ssl.create_default_context()


def request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, url, verify=TLS, **kwargs)


def get(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(url, verify=TLS, **kwargs)


def head(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.head(url, verify=TLS, **kwargs)


def options(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.options(url, verify=TLS, **kwargs)


def post(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(url, verify=TLS, **kwargs)


def delete(url: str, **kwargs: Any) -> httpx.Response:
    return httpx.delete(url, verify=TLS, **kwargs)


def stream(method: str, url: str, **kwargs: Any):
    """httpx.stream: a context manager yielding the response, its body not yet read."""
    return httpx.stream(method, url, verify=TLS, **kwargs)
