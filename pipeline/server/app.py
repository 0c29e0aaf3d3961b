"""`create_app`: the FastAPI app wired from its parts: guards, error handlers, routers, lifespan.

The routes live in `routes/` (one router per family), the refusals in `guards/`, the
error shapes in `errors.py`; this file only puts them together.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
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
from pipeline.server.guards.readiness import ReadinessMiddleware
from pipeline.server.guards.request_limits import RequestLimits
from pipeline.server.guards.shutdown import ShutdownMiddleware
from pipeline.server.mirror import Mirror
from pipeline.server.observability.access_log import AccessLog
from pipeline.server.observability.audit import AuditLog
from pipeline.server.observability.audit_trail import content_hashes
from pipeline.server.observability.metrics import Metrics, MirrorCollector
from pipeline.server.observability.tracing import Tracing
from pipeline.server.routes import ask, documents, openai, ops, tokenize
from pipeline.settings import Settings

logger = logging.getLogger("finrag")
# An upload body holds its file and the multipart framing around it (boundaries, part
# headers, the collection field): max_upload_bytes is the file's limit, this the rest.
MULTIPART_OVERHEAD = 64 << 10


def create_app(settings: Settings, pipeline: RAGPipeline | None = None,
               build: Callable[[Settings], RAGPipeline] = RAGPipeline.from_settings) -> FastAPI:
    """The app. It listens at once; the pipeline (built here unless one is given, which on a
    first run means building engines/) is loaded and warmed up in the background, while
    /health answers "starting" and other routes 503 (guards/readiness.py)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if app.state.mirror is not None:
            app.state.mirror.start()
        starting = asyncio.create_task(_start(app, settings, pipeline, build),
                                       name="finrag-start")
        yield
        starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        if app.state.mirror is not None:
            await app.state.mirror.stop()
        if app.state.tracing is not None:
            app.state.tracing.shutdown()
        if app.state.audit is not None:
            app.state.audit.close()
        if pipeline is None and app.state.pipeline is not None:
            app.state.pipeline.shutdown()

    app = FastAPI(title="finrag", version="0.1.0", lifespan=lifespan)
    app.state.pipeline, app.state.ready, app.state.start_error = None, False, None
    app.state.on_start_failed = None  # the CLI stops the server through it
    app.state.admission = Admission(settings.max_queued_requests, settings.max_queued_tokens)
    app.state.audit = (AuditLog(settings.audit_log, settings.audit_log_max_bytes,
                                settings.audit_log_backups) if settings.audit_log else None)
    app.state.tracing = (Tracing(settings.otlp_traces_endpoint)
                         if settings.otlp_traces_endpoint else None)
    app.state.mirror = (Mirror(settings.mirror_url, settings.mirror_queue_size)
                        if settings.mirror_url else None)
    # Innermost first: tickets released after the response, bodies checked before routes,
    # nothing served before the pipeline is ready, then the API key and CORS
    # (access.install_security), HEAD run as GET, a 503 for what a shutdown cuts, and the
    # access log outermost, so every answer has an id.
    app.add_middleware(AdmissionMiddleware, admission=app.state.admission)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes,
                       read_timeout=settings.request_read_timeout,
                       streamed={documents.UPLOAD_PATH: settings.max_upload_bytes
                                 + MULTIPART_OVERHEAD})
    app.add_middleware(ReadinessMiddleware, state=app.state)
    install_security(app, settings)
    app.add_middleware(HeadAsGetMiddleware)
    app.add_middleware(ShutdownMiddleware)
    app.add_middleware(AccessLog, state=app.state)
    install_log_redaction()
    install_error_handlers(app)
    app.include_router(ask.router)
    app.include_router(ops.router)
    app.include_router(documents.router)  # before openai's catch-all for unknown /v1 routes
    app.include_router(openai.router)
    app.include_router(tokenize.router)
    app.include_router(ops.page_router)
    _limit_schema(app, settings)
    return app


async def _start(app: FastAPI, settings: Settings, given: RAGPipeline | None,
                 build: Callable[[Settings], RAGPipeline]) -> None:
    try:
        pipe = given or await asyncio.to_thread(build, settings)
        app.state.pipeline = pipe
        if app.state.audit is not None:
            app.state.audit_hashes = await asyncio.to_thread(content_hashes, pipe)
        if settings.warmup:
            await pipe.warmup()
        # Metrics start after the warm-up, so its request is not counted.
        pipe.metrics = Metrics(pipe.engine, pipe.model_name)
        pipe.batcher.on_batch = lambda n, _s: pipe.metrics.batch_size.observe(n)
        pipe.engine.on_finished = pipe.metrics.observe_request
        pipe.metrics.registry.register(AdmissionCollector(app.state.admission))
        if app.state.mirror is not None:
            pipe.metrics.registry.register(MirrorCollector(app.state.mirror))
        app.state.ready = True
        logger.info("finrag: ready (%s)", pipe.model_name)
    except Exception as exc:  # noqa: BLE001 - reported by /health and, under the CLI, on exit
        app.state.start_error = exc
        logger.error("finrag: start-up failed: %s", exc)
        if app.state.on_start_failed is not None:
            app.state.on_start_failed()


def _limit_schema(app: FastAPI, settings: Settings) -> None:
    """/openapi.json with the running model's bounds and, with an API key, its scheme."""
    build = app.openapi
    done = False

    def openapi() -> dict[str, Any]:
        nonlocal done
        schema = build()
        if not done and getattr(app.state, "pipeline", None) is not None:
            RequestLimits.of(app).patch_schema(schema)
            if settings.key_collections():
                document_security(schema)
            done = True
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
