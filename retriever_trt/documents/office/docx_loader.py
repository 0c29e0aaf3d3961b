"""Word documents (.docx) via python-docx: paragraphs and tables in the body's order; a
table's caption is the heading above it (and a short line between the two, such as
"(in millions)"). A cell spanning several columns is written once, in its first column,
as `tables.parse_table` reads headers."""

from __future__ import annotations

from pathlib import Path

from retriever_trt.documents.filing.metadata import infer_metadata, title
from retriever_trt.documents.model import Block, Document, DocumentError, Paragraph, TableBlock

# A paragraph this short, right above a table, is part of its caption ("(in millions)").
MAX_CAPTION_LINE = 200
# Paragraphs read for the cover's metadata.
METADATA_PARAGRAPHS = 200


def load(path: Path, doc_id: str) -> Document:
    import docx  # python-docx, imported only when a Word file is read
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError) as exc:
        raise DocumentError(path, f"not a readable .docx document ({type(exc).__name__}: {exc})") \
            from None
    blocks = _blocks(document)
    paragraphs = [b.text for b in blocks if isinstance(b, Paragraph)][:METADATA_PARAGRAPHS]
    meta = infer_metadata("\n".join(paragraphs), path.name)
    doc_title = (document.core_properties.title or "").strip()
    return Document(doc_id, doc_title or title(meta, path.stem), meta, blocks)


def _blocks(document: object) -> list[Block]:
    from docx.table import Table
    from docx.text.paragraph import Paragraph as DocxParagraph

    blocks: list[Block] = []
    heading, since_heading = "", ""
    for item in document.iter_inner_content():  # type: ignore[attr-defined]
        if isinstance(item, DocxParagraph):
            text = " ".join(item.text.split())
            if not text:
                continue
            blocks.append(Paragraph(text))
            if (item.style.name or "").lower().startswith(("heading", "title")):
                heading, since_heading = text, ""
            else:
                since_heading = text
        elif isinstance(item, Table):
            rows = _rows(item)
            if rows:
                short = since_heading if len(since_heading) <= MAX_CAPTION_LINE else ""
                blocks.append(TableBlock(rows, " ".join(t for t in (heading, short) if t)))
            since_heading = ""
    return blocks


def _rows(table: object) -> list[list[str]]:
    """Cell texts; python-docx repeats a merged cell in each grid column it spans, and
    only the first keeps its text."""
    rows = []
    for row in table.rows:  # type: ignore[attr-defined]
        out, prev = [], None
        for cell in row.cells:
            out.append("" if cell._tc is prev else " ".join(cell.text.split()))
            prev = cell._tc
        rows.append(out)
    width = max((len(r) for r in rows), default=0)
    return [r + [""] * (width - len(r)) for r in rows if any(r)]
