"""Refuse a zip-based document (.xlsx, .docx) before a library unpacks it: not a zip, or
one that would expand past a limit (a zip bomb: a few kB that inflate to gigabytes).

The sizes checked are the ones the archive declares; Python's `zipfile` (which openpyxl
and python-docx read through) never inflates a member past its declared size, so a
lying header cannot get round the check.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from retriever_trt.documents.limits import MIB, DocumentLimits
from retriever_trt.documents.model import DocumentError


def check_zip(path: Path, kind: str, limits: DocumentLimits) -> None:
    """Raise `DocumentError` unless `path` is a zip archive (`kind` names the format in
    the message, e.g. ".xlsx") whose members each unpack to at most
    `limits.max_stream_bytes`, and all of them to at most `limits.max_inflated_bytes`."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise DocumentError(path, f"not a valid {kind} file (not a zip archive: {exc})") from None
    except OSError as exc:
        raise DocumentError(path, f"cannot read ({exc.strerror or exc})") from None
    largest = max(members, key=lambda m: m.file_size, default=None)
    if largest is not None and largest.file_size > limits.max_stream_bytes:
        raise DocumentError(path, f"{kind} part {largest.filename} expands to "
                                  f"{largest.file_size / MIB:,.0f} MiB, over the "
                                  f"{limits.max_stream_bytes / MIB:,.0f} MiB limit of one "
                                  "part (document_max_stream_bytes; a zip bomb?)")
    total = sum(m.file_size for m in members)
    if total > limits.max_inflated_bytes:
        raise DocumentError(path, f"{kind} expands to {total / MIB:,.0f} MiB, over the "
                                  f"{limits.max_inflated_bytes / MIB:,.0f} MiB limit "
                                  "(document_max_inflated_bytes; a zip bomb?)")
