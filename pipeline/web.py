"""The web page: GET / serves a static finance QA page (HTML, CSS, JS; no build step).

The page talks to POST /ask with stream: true. Its files ship in pipeline/static and are
served with a strict Content-Security-Policy: no inline script, no external resources.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

STATIC = Path(__file__).parent / "static"
ASSETS = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html; charset=utf-8",
                        headers=HEADERS)


@router.get("/static/{name}")
async def asset(name: str) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(404, f"no static file {name!r}")
    return FileResponse(STATIC / name, media_type=ASSETS[name], headers=HEADERS)
