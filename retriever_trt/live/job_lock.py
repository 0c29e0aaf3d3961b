"""A document's job lock: the process that records or indexes an upload holds an exclusive
`flock` on `files/<id>/.indexing.lock`.

The kernel releases a lock when its holder dies, so a document left `indexing` by a killed
process is taken up by whichever process claims it next, and a starting process's clean-up
leaves alone the folder of an upload another process is recording right now.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

JOB_LOCK = ".indexing.lock"


def claim(folder: Path) -> int | None:
    """The job lock of the document whose files are in `folder` (its descriptor), or None
    while another thread or process holds it, or when the folder is gone."""
    if not folder.is_dir():
        return None
    fd = os.open(folder / JOB_LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the descriptor drops its flock


def remove_unclaimed(folder: Path) -> None:
    """Remove a document's files folder unless another process holds its job lock."""
    lock = claim(folder)
    if lock is None:
        return  # an upload another process is recording right now
    shutil.rmtree(folder, ignore_errors=True)
    release(lock)
