"""The catalog: which uploaded documents exist, and in which state, kept durable on disk.

One JSON file, `catalog.json`, is the single source of truth for the documents of a live
index (`documents/` beside or inside `--index DIR`). It is rewritten whole on every change:
read the latest copy, change it, write a temporary file, fsync, rename over the old one.
A rename is atomic, so a reader (another replica) or a restart after SIGKILL sees the
catalog before a change or after it, never half. Writers in several processes (the
replicas of one machine share the folder) serialise on an exclusive `flock` of
`catalog.lock`, so no update is lost between read and rename.

What that gives (docs/documents_api.md):
- a document is `ready` only once its segment folder is complete (segments.py), so a ready
  document survives any kill;
- a delete removes the entry first, then the files, so a kill in between leaves garbage
  that the next start removes, never a deleted document that comes back;
- an upload is recorded `indexing` with its bytes already stored, so a kill during
  indexing leaves it `indexing` and the next start indexes it again, invisible until then.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any

CATALOG_FILE = "catalog.json"
LOCK_FILE = "catalog.lock"
FORMAT = 1


class DocumentStatus(str, Enum):
    INDEXING = "indexing"
    READY = "ready"
    FAILED = "failed"


@dataclass
class DocumentRecord:
    """One uploaded document as the documents API shows it (`metadata`: company, form,
    fiscal year, period end, pages; `chunks` once indexed)."""

    id: str
    name: str
    collection: str
    sha256: str
    bytes: int
    status: DocumentStatus = DocumentStatus.INDEXING
    created: float = field(default_factory=time.time)
    error: str | None = None
    title: str = ""
    chunks: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "status": self.status.value}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> DocumentRecord:
        known = {f.name for f in fields(cls)}
        record = cls(**{k: v for k, v in raw.items() if k in known})
        record.status = DocumentStatus(record.status)
        return record


class CatalogError(RuntimeError):
    """The catalog file cannot be read: the message names it."""


class Catalog:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / CATALOG_FILE
        self._stamp: tuple[int, int] | None = None
        self._records: dict[str, DocumentRecord] = {}

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.folder / LOCK_FILE, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_mtime_ns, st.st_ino

    def changed(self) -> bool:
        """Whether the file differs from the copy last read (another process wrote it)."""
        return self._stat() != self._stamp

    def records(self) -> dict[str, DocumentRecord]:
        """Every document, as the file holds it now (read again only when it changed)."""
        if self.changed():
            self._read()
        return dict(self._records)

    def _read(self) -> None:
        stamp = self._stat()
        if stamp is None:
            self._records, self._stamp = {}, None
            return
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            records = {r["id"]: DocumentRecord.from_dict(r) for r in raw["documents"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CatalogError(f"{self.path}: unreadable catalog ({exc}); restore it from a "
                               "backup, or move the folder away to start empty") from None
        self._records, self._stamp = records, stamp

    def update(self, change: Callable[[dict[str, DocumentRecord]], Any]) -> Any:
        """Apply `change` to the latest records and write them back atomically (when it
        changed any); returns what `change` returns."""
        with self._locked():
            self._read()
            # `change` edits copies: a reader of the cached records must not see a change
            # before it is on disk (nor one whose write failed).
            records = {k: replace(r, metadata=dict(r.metadata)) for k, r in self._records.items()}
            result = change(records)
            if records == self._records:  # nothing changed (a delete of an unknown id, a
                return result              # duplicate upload): no write, no replica re-reads
            tmp = self.path.with_name(f".{CATALOG_FILE}.{os.getpid()}.tmp")
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"format": FORMAT,
                           "documents": [r.to_dict() for r in records.values()]}, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            _fsync_dir(self.folder)
            self._read()
        return result


def _fsync_dir(folder: Path) -> None:
    # The rename itself is durable only once the folder's entry is on disk.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
