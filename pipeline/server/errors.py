"""Error answers in the two shapes the server speaks, and their OpenAPI declarations.

Our routes answer `{"detail": "..."}` (FastAPI's shape); the OpenAI-compatible routes under
/v1 answer `{"error": {"message", "type", "code"}}` as OpenAI and vLLM do, so that OpenAI
clients raise their usual exceptions. A malformed request is 422 on our routes and 400 on
/v1 (OpenAI's code). The middlewares (API key, body limits, admission) answer through
`error_response` too, so every refusal names what to change in the same shape.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from llm_engine import EngineDeadError, InvalidRequestError, RequestFailedError

logger = logging.getLogger(__name__)

OPENAI_PREFIX = "/v1/"
_SCALARS = (int, float, bool, type(None))
# pydantic's names of union members in an error's location ("constrained-str", "list[int]").
_MEMBER = re.compile(r"[\[\-]|^(str|int|float|bool|list|dict|none|null)$")
_KINDS = {400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError",
          413: "BadRequestError", 415: "BadRequestError", 500: "InternalServerError",
          503: "ServiceUnavailableError"}


# The one table from error types to status codes (the most specific listed class wins).
# Anything not in it, nor one of the framework's errors, is a 500 with a request id.
ERROR_STATUS: dict[type[Exception], int] = {
    InvalidRequestError: 400,  # the engine or a stage refused the request as given
    RequestFailedError: 500,  # the engine failed this request; the others go on
    EngineDeadError: 503,  # the engine loop has stopped: nothing is served until a restart
}
REQUEST_ID_HEADER = "X-Request-Id"


def status_of(exc: BaseException) -> int | None:
    """The status of a typed error; None: not one the table knows (an internal error)."""
    return next((ERROR_STATUS[c] for c in type(exc).__mro__ if c in ERROR_STATUS), None)


# A client's id is kept only when it cannot forge a log line or a header.
_CLIENT_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")


def request_id(headers: Mapping[str, str]) -> str:
    """The client's X-Request-Id when it sent a sensible one (as vLLM), else a fresh one.
    The access log (observability/access_log.py) settles each request's id with this at the edge."""
    given = headers.get(REQUEST_ID_HEADER.lower(), "")
    return given if _CLIENT_ID.fullmatch(given) else uuid.uuid4().hex


def internal_message(exc: BaseException, rid: str) -> str:
    """Log an unexpected error under `rid` and say where to find it, not what it was."""
    logger.error("request %s failed", rid, exc_info=exc)
    return (f"internal error ({type(exc).__name__}), request id {rid}: the server log has "
            "the details")


class RequestRejected(Exception):
    """A request refused with a message; `status` None: the route's malformed-input code."""

    def __init__(self, message: str, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message, self.status, self.headers = message, status, headers


def is_openai(path: str) -> bool:
    return path.startswith(OPENAI_PREFIX)


def invalid_status(path: str) -> int:
    """The status of a malformed request on this route."""
    return 400 if is_openai(path) else 422


def error_body(path: str, status: int, message: str) -> dict[str, Any]:
    if is_openai(path):
        return {"error": {"message": message, "type": _KINDS.get(status, "APIError"),
                          "code": status}}
    return {"detail": message}


def count_error(app: Any, status: int) -> None:
    pipe = getattr(app.state, "pipeline", None)
    if pipe is not None and pipe.metrics is not None:
        pipe.metrics.http_errors.labels(str(status)).inc()


def error_response(scope: dict[str, Any], status: int, message: str,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    """The error answer for this request's route, counted in finrag:request_errors."""
    app = scope.get("app")
    if app is not None:
        count_error(app, status)
    return JSONResponse(error_body(scope["path"], status, message), status_code=status,
                        headers=headers)


# A body with 60,000 unknown keys must not get a 60,000-item answer.
MAX_LISTED_FIELDS = 20


def error_message(exc: RequestValidationError, path: str) -> str:
    """One line naming each bad field and what to change (union members merged)."""
    found: dict[str, list[str]] = {}
    more = 0
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"][1:] if not _MEMBER.search(str(p))) or "body"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "json_invalid":
            where = "body"
            msg = (f"invalid JSON at character {err['loc'][-1]} "
                   f"({err.get('ctx', {}).get('error', 'decode error')}); send a JSON object")
        elif err["type"] == "extra_forbidden":
            msg = ("unknown field, not supported by this server; remove it" if is_openai(path)
                   else "unknown field; remove it")
        elif err["type"] in ("model_attributes_type", "dict_type") or (
                err["type"] == "missing" and where == "body"):
            msg = ("send a JSON object (Content-Type: application/json) with the fields "
                   "documented at /docs")
        elif isinstance(err.get("input"), _SCALARS) and err["type"] != "missing":
            msg += f" (got {err['input']!r})"
        if where not in found and len(found) == MAX_LISTED_FIELDS:
            more += 1
            continue
        if msg not in found.setdefault(where, []):
            found[where].append(msg)
    listed = "; ".join(f"{where}: {' or '.join(msgs)}" for where, msgs in found.items())
    return listed + (f"; and {more} more problems not listed" if more else "")


def install_error_handlers(app: FastAPI) -> None:
    """Every exception a route raises becomes an answer in the route's error shape: the
    framework's own (validation, HTTP, disconnect), ours (`RequestRejected`), the typed
    errors of ERROR_STATUS, and anything else a 500 carrying a request id."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        path = request.url.path
        return error_response(request.scope, invalid_status(path), error_message(exc, path))

    @app.exception_handler(RequestRejected)
    async def _rejected(request: Request, exc: RequestRejected) -> JSONResponse:
        status = exc.status or invalid_status(request.url.path)
        return error_response(request.scope, status, exc.message, exc.headers)

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        message = str(exc.detail)
        if exc.status_code in (404, 405) and message in ("Not Found", "Method Not Allowed"):
            message = f"no route {request.method} {request.url.path}; the routes are at /docs"
        return error_response(request.scope, exc.status_code, message, exc.headers)

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(request: Request, exc: ClientDisconnect) -> Response:
        # Nobody reads this; 499 (nginx's "client closed request") tells the access log.
        count_error(request.app, 499)
        return Response(status_code=499)

    async def _typed(request: Request, exc: Exception) -> JSONResponse:
        status = status_of(exc)
        if status is None:
            rid = request_id(request.headers)
            return error_response(request.scope, 500, internal_message(exc, rid),
                                  {REQUEST_ID_HEADER: rid})
        return error_response(request.scope, status, str(exc))

    for error_type in (*ERROR_STATUS, Exception):
        app.add_exception_handler(error_type, _typed)


# -- OpenAPI declarations ---------------------------------------------------------------
class ErrorDetail(BaseModel):
    detail: str


class OpenAIErrorInfo(BaseModel):
    message: str
    type: str
    code: int


class OpenAIError(BaseModel):
    error: OpenAIErrorInfo


def _declare(model: type[BaseModel], codes: dict[int, str]) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {}
    for code, why in codes.items():
        out[code] = {"model": model, "description": why}
        if code == 503:
            out[code]["headers"] = {"Retry-After": {
                "description": "seconds to wait before retrying", "schema": {"type": "integer"}}}
    return out


_COMMON = {401: "missing or wrong API key (only where the server has one)",
           413: "request body over max_body_bytes",
           415: "the body is not sent as application/json",
           503: "too many requests in flight (admission bound); retry after Retry-After"}
# The POST routes of our own and of /v1; GET routes only meet 401.
OUR_ERRORS = _declare(ErrorDetail, {**_COMMON, 422: "malformed request: the message names "
                                                    "the field and what to change",
                                     400: "a request the engine cannot serve; the message "
                                          "says why"})
OPENAI_ERRORS = _declare(OpenAIError, {**_COMMON, 400: "malformed request: the message names "
                                                      "the field and what to change",
                                       404: "no such model"})
GET_ERRORS = _declare(ErrorDetail, {401: _COMMON[401]})
OPENAI_GET_ERRORS = _declare(OpenAIError, {401: _COMMON[401]})
# The documents API (routes/documents.py).
_NO_DOCUMENT = "no such document among the caller's collections"
DOCUMENT_ERRORS = _declare(OpenAIError, {401: _COMMON[401], 404: _NO_DOCUMENT,
                                         400: "a malformed request: the message says what"})
UPLOAD_ERRORS = _declare(OpenAIError, {
    **_COMMON, 400: "no file, an empty file or a bad collection name: the message says which",
    403: "the key may not write to that collection", 404: "this server takes no uploads",
    409: "the same file is being uploaded to the collection at this moment",
    413: "a file over max_upload_bytes", 415: "not multipart/form-data, or a file type no "
    "loader reads", 429: "too many documents being indexed; retry after Retry-After"})
