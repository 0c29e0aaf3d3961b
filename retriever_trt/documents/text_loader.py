"""Plain text and Markdown: one paragraph a blank-line-separated block; a Markdown file's
first `# heading` is its title."""

from __future__ import annotations

import re
from pathlib import Path

from retriever_trt.documents.model import Document, DocumentError, Paragraph


def load(path: Path, doc_id: str) -> Document:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(path, f"not UTF-8 text ({exc})") from None
    heading = re.search(r"^#\s+(.+)$", text, re.M) if path.suffix.lower() == ".md" else None
    title = heading.group(1).strip() if heading else path.stem
    return Document(doc_id, title, blocks=[Paragraph(text)] if text.strip() else [])
