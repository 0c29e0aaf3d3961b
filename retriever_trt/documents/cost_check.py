"""A file's cost checked from its structure before its loader reads it: a PDF's page tree
and streams (`pdf_guard.py`), an Office file's zip parts (`zip_guard.py`), against the
document's `DocumentLimits`."""

from __future__ import annotations

from pathlib import Path

from retriever_trt.documents.limits import DocumentLimits
from retriever_trt.documents.office.zip_guard import check_zip
from retriever_trt.documents.pdf.pdf_guard import check_pdf


def check_cost(path: Path, limits: DocumentLimits) -> None:
    """Refuse (`DocumentError`) a file whose structure asks for more than `limits` allow,
    before its loader reads it."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        check_pdf(path, limits)
    elif suffix in (".docx", ".xlsx"):
        check_zip(path, suffix, limits)
