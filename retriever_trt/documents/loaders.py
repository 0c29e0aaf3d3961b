"""Which loader reads a file: one a format, chosen by the file's suffix.

Each loader is `load(path, doc_id) -> Document` and raises `DocumentError` naming the file
and the problem. Modules are imported on first use, so a corpus of text files never
imports a PDF library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from retriever_trt.documents.cost_check import check_cost
from retriever_trt.documents.limits import DEFAULT_LIMITS, DocumentLimits
from retriever_trt.documents.model import Document, DocumentError

Loader = Callable[[Path, str], Document]

# suffix -> module of retriever_trt.documents with a `load(path, doc_id)`
LOADER_MODULES: dict[str, str] = {
    ".txt": "text_loader",
    ".md": "text_loader",
    ".htm": "html.html_loader",
    ".html": "html.html_loader",
    ".pdf": "pdf.pdf_loader",
    ".xlsx": "office.xlsx_loader",
    ".csv": "office.csv_loader",
    ".docx": "office.docx_loader",
}
SUFFIXES = tuple(LOADER_MODULES)


def loader_for(path: Path) -> Loader:
    module = LOADER_MODULES.get(path.suffix.lower())
    if module is None:
        raise DocumentError(path, f"unsupported file type {path.suffix or '(none)'!r}; "
                                  f"supported: {', '.join(SUFFIXES)}")
    return importlib.import_module(f"retriever_trt.documents.{module}").load


def load_document(path: str | Path, doc_id: str | None = None,
                  limits: DocumentLimits = DEFAULT_LIMITS) -> Document:
    """Read one file into a `Document`; an empty file is a `DocumentError`, like any other
    file that gives no text, or one whose structure asks for more than `limits`."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DocumentError(path, f"cannot read ({exc.strerror or exc})") from None
    if size == 0:
        raise DocumentError(path, "empty file")
    check_cost(path, limits)
    doc = loader_for(path)(path, doc_id or path.name)
    if not doc.blocks:
        raise DocumentError(path, "no text found")
    return doc
