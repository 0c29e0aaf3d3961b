"""A cross-process exclusive lock on a file: builders of one artifact folder (model
preparation by server workers or test processes starting together) take turns, so the
second finds the first's result instead of building it again."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on `path`; yields False if `wait` is off and it is taken."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no cross-process lock; the writes under it are still atomic
        yield wait
        return
    if not path.parent.is_dir():
        yield False
        return
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
