"""The FastAPI app: /ask, /search, OpenAI-compatible /v1 routes, /health, /metrics, the web page."""

from __future__ import annotations

import json
import logging
import re
import time
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from llm_engine.engine.errors import EngineDeadError, RequestFailedError
from pipeline.admission import Admission, AdmissionCollector, AdmissionMiddleware, admit
from pipeline.api_models import ASK_STREAM, AskAnswer, AskRequest, SearchAnswer, SearchRequest
from pipeline.body_limits import BodyLimitMiddleware
from pipeline.disconnect import cancel_on_disconnect
from pipeline.errors import (
    GET_ERRORS,
    OUR_ERRORS,
    RequestRejected,
    count_error,
    error_response,
    invalid_status,
    is_openai,
)
from pipeline.metrics import Metrics
from pipeline.rag import AskOptions, RAGPipeline, source_dict
from pipeline.request_limits import RequestLimits, ask_tokens
from pipeline.security import document_security, install_security
from pipeline.settings import Settings

logger = logging.getLogger(__name__)

# A loop with work that has not stepped for this long is reported unhealthy.
STALL_S = 120.0
_SCALARS = (int, float, bool, type(None))
# pydantic's names of union members in an error's location ("constrained-str", "list[int]").
_MEMBER = re.compile(r"[\[\-]|^(str|int|float|bool|list|dict|none|null)$")


def error_message(exc: RequestValidationError, path: str) -> str:
    """One line naming each bad field and what to change (union members merged)."""
    found: dict[str, list[str]] = {}
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
        if msg not in found.setdefault(where, []):
            found[where].append(msg)
    return "; ".join(f"{where}: {' or '.join(msgs)}" for where, msgs in found.items())


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data)}\n\n".encode()


def stream_error(exc: Exception) -> str:
    """The message of an error that ends a stream already under way."""
    if isinstance(exc, RequestFailedError | EngineDeadError | ValueError):
        return str(exc)
    logger.exception("stream failed")
    return f"internal error ({type(exc).__name__}: {exc})"


def create_app(settings: Settings, pipeline: RAGPipeline | None = None) -> FastAPI:
    """The app; it builds the pipeline (and warms it up) at start unless one is given."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        import asyncio

        pipe = pipeline
        if pipe is None:
            pipe = await asyncio.to_thread(RAGPipeline.from_settings, settings)
        pipe.metrics = Metrics(pipe.engine, pipe.model_name)
        pipe.batcher.on_batch = lambda n, _s: pipe.metrics.batch_size.observe(n)
        pipe.metrics.registry.register(AdmissionCollector(app.state.admission))
        app.state.pipeline = pipe
        if settings.warmup:
            await pipe.warmup()
        yield
        if pipeline is None:
            pipe.shutdown()

    app = FastAPI(title="finrag", version="0.1.0", lifespan=lifespan)
    app.state.admission = Admission(settings.max_queued_requests, settings.max_queued_tokens)
    # Innermost first: tickets released after the response, bodies checked before routes,
    # then the API key and CORS outermost (security.install_security).
    app.add_middleware(AdmissionMiddleware, admission=app.state.admission)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    install_security(app, settings)

    def pipe_of(request: Request) -> RAGPipeline:
        return request.app.state.pipeline

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

    @app.exception_handler(ValueError)
    async def _value_error(request: Request, exc: ValueError) -> JSONResponse:
        return error_response(request.scope, 400, str(exc))

    @app.exception_handler(RequestFailedError)
    async def _request_failed(request: Request, exc: RequestFailedError) -> JSONResponse:
        return error_response(request.scope, 500, str(exc))

    @app.exception_handler(EngineDeadError)
    async def _engine_dead(request: Request, exc: EngineDeadError) -> JSONResponse:
        return error_response(request.scope, 503, str(exc))

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(request: Request, exc: ClientDisconnect) -> Response:
        # Nobody reads this; 499 (nginx's "client closed request") tells the access log.
        count_error(request.app, 499)
        return Response(status_code=499)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        # Starlette still logs the traceback; the client gets a message instead of text/plain.
        return error_response(request.scope, 500,
                              f"internal error ({type(exc).__name__}: {exc})")

    @app.post("/ask", responses={200: {"model": AskAnswer, "content": ASK_STREAM}, **OUR_ERRORS})
    async def ask(body: AskRequest, request: Request) -> Any:
        pipe = pipe_of(request)
        RequestLimits.of(request.app).check(body)
        admit(request, ask_tokens(pipe, body.question, body.top_k, body.max_tokens))
        opts = AskOptions(body.top_k, body.max_tokens, body.temperature)
        if not pipe.engine.is_running:  # 503 now, rather than a 200 stream that fails
            raise pipe.engine.dead_error()
        if not body.stream:
            return (await cancel_on_disconnect(request, pipe.ask(body.question, opts))).to_dict()

        async def events():
            try:
                async for chunk in pipe.stream(body.question, opts):
                    if chunk["type"] == "token":
                        yield sse({"type": "token", "text": chunk["text"]})
                    else:
                        final = chunk["answer"].to_dict()
                        final.pop("answer")
                        yield sse({"type": "final", **final})
            except Exception as exc:  # the status line is gone: the error is the last event
                yield sse({"type": "error", "message": stream_error(exc)})

        return StreamingResponse(events(), media_type="text/event-stream")

    @app.post("/search", responses={200: {"model": SearchAnswer}, **OUR_ERRORS})
    async def search(body: SearchRequest, request: Request) -> Any:
        pipe = pipe_of(request)
        admit(request, 0)
        t0 = time.perf_counter()
        passages = await pipe.search(body.query, body.top_k)
        return {"sources": [source_dict(p) for p in passages],
                "timings": {"retrieve_ms": round((time.perf_counter() - t0) * 1000, 3)}}

    @app.get("/health")
    async def health(request: Request) -> Response:
        pipe = getattr(request.app.state, "pipeline", None)
        if pipe is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        eng = pipe.engine
        busy = eng.engine.has_unfinished_requests()
        stalled = busy and time.monotonic() - eng.last_step_time > STALL_S
        stats = eng.engine.get_stats()
        # What a soak test or an operator checks for leaks: idle means 0, 0 and all free.
        engine = {"running": stats.num_running, "waiting": stats.num_waiting,
                  "kv_blocks": stats.num_blocks, "kv_blocks_free": stats.num_free_blocks}
        if not eng.is_running or stalled:
            reason = "engine loop is not running" if not eng.is_running else "engine stalled"
            return JSONResponse({"status": "unhealthy", "reason": reason, "engine": engine},
                                status_code=503)
        return JSONResponse({"status": "ok", "engine": engine})

    @app.get("/metrics", response_class=PlainTextResponse, responses=GET_ERRORS)
    async def metrics(request: Request) -> Response:
        return Response(pipe_of(request).metrics.render(),
                        media_type="text/plain; version=0.0.4; charset=utf-8")

    from pipeline.openai_routes import router
    from pipeline.web import router as web_router

    app.include_router(router)
    app.include_router(web_router)
    _limit_schema(app, settings)
    return app


def _limit_schema(app: FastAPI, settings: Settings) -> None:
    """/openapi.json with the running model's bounds and, with an API key, its scheme."""
    build = app.openapi
    done = False

    def openapi() -> dict[str, Any]:
        nonlocal done
        schema = build()
        if not done and getattr(app.state, "pipeline", None) is not None:
            RequestLimits.of(app).patch_schema(schema)
            if settings.api_key is not None:
                document_security(schema)
            done = True
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
