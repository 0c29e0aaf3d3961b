"""The FastAPI app: /ask, /search, OpenAI-compatible /v1 routes, /health, /metrics, the web page."""

from __future__ import annotations

import json
import logging
import time
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.requests import ClientDisconnect

from llm_engine.engine.errors import EngineDeadError, RequestFailedError
from pipeline.disconnect import cancel_on_disconnect
from pipeline.metrics import Metrics
from pipeline.rag import AskOptions, RAGPipeline, source_dict
from pipeline.settings import Settings

logger = logging.getLogger(__name__)

# A loop with work that has not stepped for this long is reported unhealthy.
STALL_S = 120.0


def _require_text(value: str, what: str) -> str:
    if not value.strip():
        raise ValueError(f"must contain a {what}, not only whitespace")
    return value


class AskRequest(BaseModel):
    """POST /ask. Unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=4000,
                          description="the question, 1 to 4000 characters")
    top_k: int | None = Field(None, ge=1, le=20, description="passages to retrieve, 1 to 20")
    max_tokens: int | None = Field(None, ge=1, le=2048, description="answer length, 1 to 2048")
    temperature: float | None = Field(None, ge=0.0, le=2.0, description="0 (greedy) to 2")
    stream: bool = False

    _not_blank = field_validator("question")(lambda value: _require_text(value, "question"))


class SearchRequest(BaseModel):
    """POST /search. Unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=4000)
    top_k: int | None = Field(None, ge=1, le=100)

    _not_blank = field_validator("query")(lambda value: _require_text(value, "query"))


def error_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"] if p != "body") or "body"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field; remove it"
        elif err["type"] in ("model_attributes_type", "dict_type", "json_invalid"):
            msg = "send a JSON object (Content-Type: application/json) with the fields " \
                  "documented at /docs"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


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
        app.state.pipeline = pipe
        if settings.warmup:
            await pipe.warmup()
        yield
        if pipeline is None:
            pipe.shutdown()

    app = FastAPI(title="finrag", version="0.1.0", lifespan=lifespan)

    def pipe_of(request: Request) -> RAGPipeline:
        return request.app.state.pipeline

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        message = error_message(exc)
        openai = request.url.path.startswith("/v1/")
        status = 400 if openai else 422
        _count_error(request, status)
        body = ({"error": {"message": message, "type": "BadRequestError", "code": status}}
                if openai else {"detail": message})
        return JSONResponse(body, status_code=status)

    @app.exception_handler(ValueError)
    async def _value_error(request: Request, exc: ValueError) -> JSONResponse:
        _count_error(request, 400)
        return JSONResponse({"error": {"message": str(exc), "type": "BadRequestError",
                                       "code": 400}, "detail": str(exc)}, status_code=400)

    def _server_error(request: Request, status: int, kind: str, message: str) -> JSONResponse:
        _count_error(request, status)
        if request.url.path.startswith("/v1/"):
            body: dict[str, Any] = {"error": {"message": message, "type": kind, "code": status}}
        else:
            body = {"detail": message}
        return JSONResponse(body, status_code=status)

    @app.exception_handler(RequestFailedError)
    async def _request_failed(request: Request, exc: RequestFailedError) -> JSONResponse:
        return _server_error(request, 500, "InternalServerError", str(exc))

    @app.exception_handler(EngineDeadError)
    async def _engine_dead(request: Request, exc: EngineDeadError) -> JSONResponse:
        return _server_error(request, 503, "ServiceUnavailableError", str(exc))

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(request: Request, exc: ClientDisconnect) -> Response:
        # Nobody reads this; 499 (nginx's "client closed request") tells the access log.
        _count_error(request, 499)
        return Response(status_code=499)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        # Starlette still logs the traceback; the client gets a message instead of text/plain.
        return _server_error(request, 500, "InternalServerError",
                             f"internal error ({type(exc).__name__}: {exc})")

    def _count_error(request: Request, status: int) -> None:
        pipe = getattr(request.app.state, "pipeline", None)
        if pipe is not None and pipe.metrics is not None:
            pipe.metrics.http_errors.labels(str(status)).inc()

    @app.post("/ask")
    async def ask(body: AskRequest, request: Request) -> Any:
        pipe = pipe_of(request)
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

    @app.post("/search")
    async def search(body: SearchRequest, request: Request) -> Any:
        pipe = pipe_of(request)
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

    @app.get("/metrics")
    async def metrics(request: Request) -> Response:
        return Response(pipe_of(request).metrics.render(),
                        media_type="text/plain; version=0.0.4; charset=utf-8")

    from pipeline.openai_routes import router
    from pipeline.web import router as web_router

    app.include_router(router)
    app.include_router(web_router)
    return app
