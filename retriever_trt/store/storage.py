"""Atomic directory saves and manifests shared by the vector index and the document store.

A save writes every file into a temporary folder beside the target and then swaps it in
with `os.replace`, so a save killed half-way never leaves a half-written index: the
previous one stays in place. POSIX cannot rename a folder onto a non-empty folder, so the
swap is two renames (old -> backup, new -> target); a kill between them leaves the
previous folder complete under its backup name, and `resolve_dir` puts it back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
STALE_TMP_S = 3600


class IndexFileError(RuntimeError):
    """A saved index or store is missing, corrupt or built for something else."""


# The parts of a saved Retriever: rebuilding either one means rebuilding the whole folder.
RETRIEVER_PARTS = ("index", "store")


def rebuild_hint(directory: Path, corpus: str | None = None) -> str:
    """The `finrag index` line that rebuilds `directory`, or the saved Retriever it is part
    of, with the corpus and embedder its manifest recorded when they are readable."""
    directory = Path(directory)
    root = directory
    if directory.name in RETRIEVER_PARTS and all(
            (directory.parent / part).is_dir() for part in RETRIEVER_PARTS):
        root = directory.parent
    try:
        recorded = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        recorded = {}
    recorded = recorded if isinstance(recorded, dict) else {}
    corpus = corpus or recorded.get("corpus")
    embedder = f" --embedder {recorded['embedder']}" if recorded.get("embedder") else ""
    return f"rebuild it with: finrag index --corpus {corpus or 'PATH'} --out {root}{embedder}"


def has_saved_dir(target: str | Path) -> bool:
    """True when `target` (or the backup a save killed between its renames left) holds
    something to load: a folder that is not empty."""
    target = Path(target)
    if target.is_dir():
        return any(target.iterdir())
    return target.exists() or bool(_backup_dirs(target))


def _backup_dirs(target: Path) -> list[Path]:
    return sorted(target.parent.glob(f".{target.name}.old-*"))


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    """Yield an empty temporary folder; on success it replaces `target` atomically."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        _fsync_tree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    backup = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
    if target.exists():
        os.replace(target, backup)
    os.replace(tmp, target)
    shutil.rmtree(backup, ignore_errors=True)
    # Temporaries of saves killed long ago are garbage; recent ones may be another
    # process's save in progress.
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        if time.time() - stale.stat().st_mtime > STALE_TMP_S:
            shutil.rmtree(stale, ignore_errors=True)


def _fsync_tree(folder: Path) -> None:
    # Without fsync a power cut after the rename could expose empty files.
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())


def resolve_dir(target: str | Path, corpus: str | None = None) -> Path:
    """The saved folder, restoring the previous one if a save died between its renames."""
    target = Path(target)
    if not target.exists():
        backups = _backup_dirs(target)
        if not backups:
            raise IndexFileError(f"{target}: no saved index here; {rebuild_hint(target, corpus)}")
        os.replace(backups[-1], target)
    return target


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(folder: Path, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Write manifest.json listing every file in `folder` with its checksum."""
    files = {
        str(p.relative_to(folder)): file_sha256(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }
    manifest = {
        "format": FORMAT_VERSION,
        "kind": kind,
        **fields,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "files": files,
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def read_manifest(folder: Path, kind: str, verify: bool = True) -> dict[str, Any]:
    """Read and check manifest.json: right kind, every listed file present and intact."""
    path = folder / MANIFEST
    corpus = None
    try:
        manifest = json.loads(path.read_text())
        corpus = manifest.get("corpus")
    except FileNotFoundError:
        raise IndexFileError(f"{path}: manifest missing; {rebuild_hint(folder)}") from None
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
        raise IndexFileError(f"{path}: corrupt manifest ({exc}); {rebuild_hint(folder)}") from None
    if not isinstance(manifest, dict) or manifest.get("kind") != kind:
        found = manifest.get("kind") if isinstance(manifest, dict) else type(manifest).__name__
        raise IndexFileError(f"{path}: expected a {kind} manifest, found {found!r}; "
                             f"{rebuild_hint(folder, corpus)}")
    if manifest.get("format") != FORMAT_VERSION:
        raise IndexFileError(
            f"{path}: format {manifest.get('format')} is not {FORMAT_VERSION}; "
            f"{rebuild_hint(folder, corpus)}"
        )
    if verify:
        for name, digest in manifest.get("files", {}).items():
            file = folder / name
            if not file.is_file():
                raise IndexFileError(f"{file}: missing; {rebuild_hint(folder, corpus)}")
            if file_sha256(file) != digest:
                raise IndexFileError(
                    f"{file}: corrupt (checksum differs from the manifest); "
                    f"{rebuild_hint(folder, corpus)}"
                )
    return manifest
