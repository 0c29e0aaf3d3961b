"""Error answers in the two shapes the server speaks, and their OpenAPI declarations.

Our routes answer `{"detail": "..."}` (FastAPI's shape); the OpenAI-compatible routes under
/v1 answer `{"error": {"message", "type", "code"}}` as OpenAI and vLLM do, so that OpenAI
clients raise their usual exceptions. A malformed request is 422 on our routes and 400 on
/v1 (OpenAI's code). The middlewares (API key, body limits, admission) answer through
`error_response` too, so every refusal names what to change in the same shape.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel

OPENAI_PREFIX = "/v1/"
_KINDS = {400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError",
          413: "BadRequestError", 415: "BadRequestError", 500: "InternalServerError",
          503: "ServiceUnavailableError"}


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
