"""Operations and the page: GET /health, GET /metrics, and the web page at GET /.

The page is static finance QA HTML, CSS and JS (no build step) that talks to POST /ask with
stream: true. Its files ship in pipeline/server/static and are served with a strict
Content-Security-Policy: no inline script, no external resources.
"""

from __future__ import annotations

import time
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response

from pipeline.server.errors import GET_ERRORS

# A loop with work that has not stepped for this long is reported unhealthy.
STALL_S = 120.0
STATIC = Path(__file__).parent.parent / "static"
JS = "text/javascript; charset=utf-8"
ASSETS = {"app.js": JS, "documents.js": JS, "style.css": "text/css; charset=utf-8"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}

router = APIRouter()
page_router = APIRouter(include_in_schema=False)


@router.get("/health")
async def health(request: Request) -> Response:
    """Liveness: 200 while the process can serve or is still starting; 503 when it cannot."""
    state = request.app.state
    if state.start_error is not None:
        return JSONResponse({"status": "failed", "reason": str(state.start_error)},
                            status_code=503)
    pipe = state.pipeline
    if pipe is None or not state.ready:
        return JSONResponse({"status": "starting"})
    eng = pipe.engine
    busy = eng.has_unfinished_requests()
    stalled = busy and time.monotonic() - eng.last_step_time > STALL_S
    stats = eng.get_stats()
    # What a soak test or an operator checks for leaks: idle means 0, 0 and all free.
    engine = {"running": stats.num_running, "waiting": stats.num_waiting,
              "kv_blocks": stats.num_blocks, "kv_blocks_free": stats.num_free_blocks}
    if not eng.is_running or stalled:
        reason = "engine loop is not running" if not eng.is_running else "engine stalled"
        return JSONResponse({"status": "unhealthy", "reason": reason, "engine": engine},
                            status_code=503)
    return JSONResponse({"status": "ok", "engine": engine})


@router.get("/ready")
async def ready(request: Request) -> Response:
    """Readiness: 200 once artifacts are loaded and the warm-up is done, and while the
    engine loop runs; a load balancer sends traffic only then."""
    state = request.app.state
    if not state.ready:
        status = "failed" if state.start_error is not None else "starting"
        return JSONResponse({"status": status}, status_code=503)
    if not state.pipeline.engine.is_running:
        return JSONResponse({"status": "unhealthy", "reason": "engine loop is not running"},
                            status_code=503)
    return JSONResponse({"status": "ready"})


@router.get("/metrics", response_class=PlainTextResponse, responses=GET_ERRORS)
async def metrics(request: Request) -> Response:
    return Response(request.app.state.pipeline.metrics.render(),
                    media_type="text/plain; version=0.0.4; charset=utf-8")


@page_router.get("/")
async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8",
                        headers=HEADERS)


@page_router.get("/static/{name}")
async def asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(404, f"no static file {name!r}")
    return FileResponse(STATIC / name, media_type=ASSETS[name], headers=HEADERS)
