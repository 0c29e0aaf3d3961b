"""Access: an optional API key (`Authorization: Bearer`) and a CORS allow-list.

With `api_key` or `api_keys` set, every route answers 401 without a key, except /health (for load
balancers and orchestrators) and the web page's static files (`/`, `/static/*`: no data,
and the page itself asks for the key and sends it on /ask). /docs and /openapi.json are
protected too. Keys are compared in constant time and never logged or echoed: uvicorn's
access log holds the request line only, with credential query parameters (?api_key=...)
redacted, and the settings keep them as SecretStr.

Tenants: a key of `api_keys` reads and writes only its collections. The middleware puts
them in the request's state (`collections`, None for a key of `api_key`: every one), and
every route that reads documents limits itself to them (`caller_collections`).

CORS: no headers at all unless `cors_origins` lists the front end's origins; then exactly
those origins may call with GET/POST and the Authorization and Content-Type headers.
"""

from __future__ import annotations

import hmac
import logging
import re

from fastapi import FastAPI, Request
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from pipeline.server.errors import error_response
from pipeline.server.observability.audit import key_id
from pipeline.settings import Settings

OPEN_PATHS = {"/health", "/ready", "/ping", "/"}
OPEN_PREFIXES = ("/static/",)


def is_open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)


def caller_collections(request: Request) -> frozenset[str] | None:
    """The collections the request's key may see; None: every one (no keys, or a key of
    `api_key`)."""
    return getattr(request.state, "collections", None)


class ApiKeyMiddleware:
    def __init__(self, app: ASGIApp, keys: dict[bytes, frozenset[str] | None]) -> None:
        self.app, self.keys = app, keys

    def authorized(self, scope: Scope) -> bool:
        header = next((v for k, v in scope["headers"] if k.lower() == b"authorization"), b"")
        scheme, _, token = header.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        token = token.strip()
        # Every key is compared, so the time does not tell which one nearly matched.
        matches = [key for key in self.keys if hmac.compare_digest(token, key)]
        if matches:
            state = scope.setdefault("state", {})
            # Who asked, for the audit log: a hash of the key, never the key.
            state["key_id"] = key_id(token)
            state["collections"] = self.keys[matches[0]]
        return bool(matches)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] == "OPTIONS" or is_open(scope["path"])
                or self.authorized(scope)):
            await self.app(scope, receive, send)
            return
        response = error_response(scope, 401, "missing or wrong API key: send the header "
                                  "Authorization: Bearer <key>",
                                  {"WWW-Authenticate": 'Bearer realm="finrag"'})
        await response(scope, receive, send)


# Query parameters that carry credentials (the key sent as ?api_key=..., tokens, passwords).
_SECRET_PARAM = re.compile(
    r"(?i)([?&](?:api[_-]?key|key|access[_-]?token|token|auth|authorization|password|"
    r"passwd|secret|client[_-]?secret|sig|signature)=)[^&#\s]*")
REDACTED = "[redacted]"


def redact_query(text: str) -> str:
    """`text` with the values of credential query parameters replaced by [redacted]."""
    return _SECRET_PARAM.sub(lambda m: m.group(1) + REDACTED, text)


class RedactCredentialsFilter(logging.Filter):
    """On uvicorn's access log: a key sent in the query string is never written out."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_query(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact_query(record.msg)
        return True


def install_log_redaction() -> None:
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactCredentialsFilter) for f in access.filters):
        access.addFilter(RedactCredentialsFilter())


def install_security(app: FastAPI, settings: Settings) -> None:
    """Add the API key check, then CORS outside it (preflights carry no Authorization)."""
    keys = settings.key_collections()
    if keys:
        app.add_middleware(ApiKeyMiddleware, keys=keys)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])


def document_security(schema: dict) -> None:
    """Declare the bearer scheme on every operation that needs it."""
    schema.setdefault("components", {})["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "the server's api_key"}}
    for path, operations in schema.get("paths", {}).items():
        if not is_open(path):
            for operation in operations.values():
                operation["security"] = [{"bearer": []}]
