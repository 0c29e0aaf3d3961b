"""Headless Chromium for the web page's tests: Debian's chromium (/usr/bin/chromium) under
the Python `playwright` package (its own browser download is not used), pages that record
console errors, and screenshots kept in tmp_path and, if set, in $FINRAG_SCREENSHOT_DIR.
Without chromium or playwright the tests fail under CI=true and skip locally."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import prereqs
from prereqs import missing, require_module

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PAGE_TIMEOUT_MS = 60_000


@contextmanager
def chromium() -> Iterator[Any]:
    """A playwright Browser on Debian's chromium, closed on exit."""
    if not CHROMIUM.is_file():
        missing(f"{CHROMIUM} not found", prereqs.CHROMIUM)
    sync_api = require_module("playwright.sync_api", prereqs.DEV)
    pw = sync_api.sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
    except Exception as exc:  # noqa: BLE001 - a broken browser install is a missing prerequisite
        pw.stop()
        missing(f"chromium did not start under playwright: {exc}", prereqs.CHROMIUM)
    try:
        yield b
    finally:
        b.close()
        pw.stop()


@contextmanager
def open_page(browser: Any, url: str, before_load: Any = None) -> Iterator[Any]:
    """A desktop-sized page at `url` in a context of its own. `pg.problems` collects console
    errors (CSP violations among them) and uncaught exceptions; `before_load(pg)` runs
    before the page loads (routes, request listeners)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(PAGE_TIMEOUT_MS)
    pg.problems = []
    pg.on("console", lambda m: m.type == "error" and pg.problems.append(m.text))
    pg.on("pageerror", lambda e: pg.problems.append(str(e)))
    if before_load is not None:
        before_load(pg)
    pg.goto(url)
    try:
        yield pg
    finally:
        context.close()


def screenshot(pg: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    pg.screenshot(path=str(path), full_page=True)
    out = os.environ.get("FINRAG_SCREENSHOT_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(out) / name)
    return path


def no_4xx_problems(pg: Any) -> list[str]:
    # The browser logs every non-2xx fetch as a console error; those are expected here.
    return [p for p in pg.problems if "status of" not in p and "net::ERR" not in p]


def phone_overflow(pg: Any) -> int:
    """How many pixels the page is wider than a phone's screen (<= 0: it fits)."""
    pg.set_viewport_size({"width": 390, "height": 844})
    return pg.evaluate("document.documentElement.scrollWidth - window.innerWidth")
