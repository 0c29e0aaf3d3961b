"""An upload's bytes on their way in: its file name made safe, and its bytes copied to an
`.incoming-*` file of the files folder (hashed, size-checked, fsynced) before the
document is admitted; `live_documents.py` then renames it into the document's folder.

Each incoming file is `flock`ed by the process writing it for as long as it exists, so a
process that starts removes every incoming file it can lock, whatever its age: those are
the partial uploads of a process that was killed (the kernel dropped its locks).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

INCOMING = ".incoming-"
COPY_BLOCK = 1 << 20
# The longest file name Linux file systems take, in bytes (NAME_MAX).
MAX_NAME_BYTES = 255
DEFAULT_NAME = "upload"


class UploadError(ValueError):
    """An upload refused; `status` is the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def safe_name(name: str) -> str:
    """A file name that stays inside its folder and fits the file system: no path, no NUL
    or control characters, no leading dots ("../../etc/passwd" is "passwd"), at most
    MAX_NAME_BYTES of UTF-8 with its suffix kept (the start of the stem is cut short)."""
    base = re.split(r"[/\\]", name or "")[-1]
    base = re.sub(r"[\x00-\x1f\x7f]", "", base).strip().lstrip(".") or DEFAULT_NAME
    if len(base.encode()) <= MAX_NAME_BYTES:
        return base
    stem, dot, suffix = base.rpartition(".")
    tail = f".{suffix}" if dot and len(suffix.encode()) < MAX_NAME_BYTES // 2 else ""
    head = (stem if tail else base).encode()[:MAX_NAME_BYTES - len(tail.encode())]
    return (head.decode("utf-8", "ignore").rstrip() or DEFAULT_NAME) + tail


@dataclass
class Incoming:
    """One upload's bytes in the files folder, locked by this process until `close`."""

    path: Path
    fd: int
    sha256: str = ""
    size: int = 0

    def close(self) -> None:
        """Remove the file (when it was not renamed into place) and drop its lock."""
        self.path.unlink(missing_ok=True)
        os.close(self.fd)


def receive(data: BinaryIO, folder: Path, max_bytes: int) -> Incoming:
    """Copy `data` to a new locked incoming file of `folder`; UploadError 413 past
    `max_bytes`, 400 when empty (the file is removed again)."""
    incoming = _create(folder)
    try:
        digest = hashlib.sha256()
        with open(incoming.fd, "wb", closefd=False) as out:
            while block := data.read(COPY_BLOCK):
                incoming.size += len(block)
                if incoming.size > max_bytes:
                    raise UploadError(413, f"file over the upload limit of {max_bytes} "
                                           "bytes (max_upload_bytes)")
                digest.update(block)
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if incoming.size == 0:
            raise UploadError(400, "empty file: nothing to index")
    except BaseException:
        incoming.close()
        raise
    incoming.sha256 = digest.hexdigest()
    return incoming


def _create(folder: Path) -> Incoming:
    while True:
        path = folder / f"{INCOMING}{uuid.uuid4().hex}"
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_nlink:
            return Incoming(path, fd)
        os.close(fd)  # a starting process removed it between our open and our lock


def remove_leftovers(folder: Path) -> None:
    """Remove the incoming files no live process holds (partial uploads of a killed one)."""
    for entry in folder.glob(f"{INCOMING}*"):
        try:
            fd = os.open(entry, os.O_RDONLY)
        except FileNotFoundError:
            continue  # its upload finished or failed meanwhile
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # an upload in progress
        else:
            entry.unlink(missing_ok=True)
        finally:
            os.close(fd)
