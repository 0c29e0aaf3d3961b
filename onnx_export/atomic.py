"""Atomic writes: a temp file in the target's folder, then os.replace.

A build killed midway must leave the previous artifact intact, and os.replace is only
atomic within one filesystem, hence the temp file beside the target. Its name
(`.<target>.<random>.tmp`) is never one a loader opens; the next write of the same
target deletes such leftovers once they are old enough not to be another build's.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import onnx

STALE_TMP_S = 3600


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temp path beside `target`; on success rename it over `target`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        # mkstemp creates 0600 files; artifacts should get the usual umask-derived mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _sweep_stale(target)


def _sweep_stale(target: Path) -> None:
    now = time.time()
    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):  # another process removed it first
            if now - stale.stat().st_mtime > STALE_TMP_S:
                stale.unlink()


def save_model(model: onnx.ModelProto, target: str | Path) -> Path:
    """Save an ONNX model atomically (single file: these encoders are far below 2 GB)."""
    with atomic_path(target) as tmp:
        onnx.save_model(model, str(tmp))
    return Path(target)


def write_text(target: str | Path, text: str) -> Path:
    with atomic_path(target) as tmp:
        tmp.write_text(text)
    return Path(target)


def write_bytes(target: str | Path, data: bytes) -> Path:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)
