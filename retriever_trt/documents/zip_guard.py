"""Refuse a zip-based document (.xlsx, .docx) before a library unpacks it: not a zip, or
one that would expand past a limit (a zip bomb: a few kB that inflate to gigabytes).

The sizes checked are the ones the archive declares; Python's `zipfile` (which openpyxl
and python-docx read through) never inflates a member past its declared size, so a
lying header cannot get round the check.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from retriever_trt.documents.model import DocumentError

# Far above any real workbook or Word file's unpacked XML (a 10-K's exhibits as .xlsx
# unpack to a few MB), far below what would exhaust this machine's memory.
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
MIB = 1024 * 1024


def check_zip(path: Path, kind: str, max_bytes: int = MAX_UNCOMPRESSED_BYTES) -> None:
    """Raise `DocumentError` unless `path` is a zip archive (`kind` names the format in
    the message, e.g. ".xlsx") that unpacks to at most `max_bytes`."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise DocumentError(path, f"not a valid {kind} file (not a zip archive: {exc})") from None
    except OSError as exc:
        raise DocumentError(path, f"cannot read ({exc.strerror or exc})") from None
    total = sum(m.file_size for m in members)
    if total > max_bytes:
        raise DocumentError(path, f"{kind} expands to {total / MIB:,.0f} MiB, over the "
                                  f"{max_bytes / MIB:,.0f} MiB limit (a zip bomb?)")
