"""`create_app`: the FastAPI app wired from its parts: guards, error handlers, routers, lifespan.

The routes live in `routes/` (one router per family), the refusals in `guards/`, the
error shapes in `errors.py`; this file only puts them together.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from pipeline.rag import RAGPipeline
from pipeline.server.errors import install_error_handlers
from pipeline.server.guards.access import (
    document_security,
    install_log_redaction,
    install_security,
)
from pipeline.server.guards.admission import Admission, AdmissionCollector, AdmissionMiddleware
from pipeline.server.guards.body_limit import BodyLimitMiddleware
from pipeline.server.guards.head import HeadAsGetMiddleware
from pipeline.server.guards.request_limits import RequestLimits
from pipeline.server.metrics import Metrics
from pipeline.server.routes import ask, openai, ops
from pipeline.settings import Settings


def create_app(settings: Settings, pipeline: RAGPipeline | None = None) -> FastAPI:
    """The app; it builds the pipeline (and warms it up) at start unless one is given."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
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
    # then the API key and CORS (access.install_security), HEAD run as GET outermost.
    app.add_middleware(AdmissionMiddleware, admission=app.state.admission)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes,
                       read_timeout=settings.request_read_timeout)
    install_security(app, settings)
    app.add_middleware(HeadAsGetMiddleware)
    install_log_redaction()
    install_error_handlers(app)
    app.include_router(ask.router)
    app.include_router(ops.router)
    app.include_router(openai.router)
    app.include_router(ops.page_router)
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
