"""PDF: paragraphs and tables, each with its 1-based page number, via PDFium (pypdfium2).

Text comes from PDFium's text layer with character positions (`pdf_layout.py`); tables
are found only where lines of amounts line up (`pdf_tables.py`), so prose pages cost no
table work. A table that runs onto the next page without a header of its own gets the
header and caption of the part before it; a table at the top of a page with no title
above it takes the title lines that ended the page before (a statement's title printed
at the foot of the page before its table, ahead of a scale note over it). Metadata comes from the cover page
(`metadata.py`; its other fields, incorporation, address, exchange, from the positions of
its text: `cover_page.py`). A scanned PDF (no text layer) is refused: OCR is out of scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium

from retriever_trt.documents.filing.auditor_report import read_auditor
from retriever_trt.documents.filing.cover_page import printed_metadata
from retriever_trt.documents.filing.metadata import labelled_fiscal_year, title
from retriever_trt.documents.model import (
    Block,
    CoverEntry,
    CoverField,
    Document,
    DocumentError,
    Paragraph,
    TableBlock,
)
from retriever_trt.documents.pdf.pdf_layout import Line, page_lines
from retriever_trt.documents.pdf.pdf_statements import statement_kind
from retriever_trt.documents.pdf.pdf_tables import (
    FoundTable,
    find_tables,
    line_pitch,
    page_footer,
    running_line,
    same_columns,
)

# Pages whose text metadata is read from: the cover, and a 10-Q's statements, whose
# "six/nine months ended" headers give its quarter.
METADATA_PAGES = 15
# A vertical gap wider than this many times the page's usual line spacing starts a
# new paragraph.
PARAGRAPH_GAP = 1.35
_BULLETS = ("•", "●", "◦", "▪", "-")
# PDFium's error code for a document that needs a password.
_PASSWORD_ERROR = 4


@dataclass
class _Pages:
    """What carries from one page to the next: the last table (for its continuation) and
    the title lines that ended the page."""

    blocks: list[Block] = field(default_factory=list)
    last_table: FoundTable | None = None
    last_caption: str = ""
    tail_caption: str = ""


def load(path: Path, doc_id: str) -> Document:
    pdf = _open(path)
    try:
        n_pages = len(pdf)
        if n_pages == 0:
            raise DocumentError(path, "PDF with no pages")
        state = _Pages()
        cover_pages: list[list[Line]] = []
        any_text = False
        auditor: dict[CoverField, CoverEntry] = {}
        for i in range(n_pages):
            lines = _page_lines(pdf, i, path)
            any_text = any_text or bool(lines)
            auditor = auditor or read_auditor(lines, i + 1)
            if i < METADATA_PAGES:
                cover_pages.append(lines)
            _read_page(lines, i + 1, state)
    finally:
        pdf.close()
    if not any_text:
        raise DocumentError(path, f"no text layer in its {n_pages} page(s): a scanned PDF? "
                                  "OCR it first (e.g. ocrmypdf)")
    meta = printed_metadata(cover_pages, path.name)
    meta.pages = n_pages
    meta.cover = {**auditor, **meta.cover}
    # the cover gives the year's end; the statements' column labels name the year
    meta.fiscal_year = labelled_fiscal_year(
        meta, [b.rows for b in state.blocks if isinstance(b, TableBlock)])
    return Document(doc_id, title(meta, path.stem), meta, state.blocks)


def _page_lines(pdf: pdfium.PdfDocument, index: int, path: Path) -> list[Line]:
    try:
        page = pdf[index]
    except pdfium.PdfiumError as exc:
        raise DocumentError(path, f"page {index + 1} is unreadable ({exc})") from None
    try:
        return page_lines(page)
    finally:
        page.close()


def _open(path: Path) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == _PASSWORD_ERROR:
            raise DocumentError(path, "encrypted PDF (needs a password); "
                                      "save an unencrypted copy") from None
        raise DocumentError(path, f"not a readable PDF ({exc})") from None


def _read_page(lines: list[Line], page: int, state: _Pages) -> None:
    if page_footer(lines):
        lines = lines[:-1]
    carried = state.last_table.columns if state.last_table is not None else ()
    found = find_tables(lines, carried)
    taken = 0
    for t in found.tables:
        _paragraphs(lines[taken:t.start], page, state.blocks)
        at_top = all(running_line(line.text) for line in lines[:t.start])
        state.blocks.append(_table_block(t, page, state, at_top))
        taken = t.end
    _paragraphs(lines[taken:], page, state.blocks)
    state.tail_caption = found.tail_caption


def _table_block(t: FoundTable, page: int, state: _Pages, at_top: bool) -> TableBlock:
    rows, caption, levels = t.rows, t.caption, list(t.levels)
    prev = state.last_table
    if at_top and t.n_header == 0 and prev is not None and len(prev.columns) == len(t.columns) \
            and same_columns(t.columns, prev.columns):
        rows = prev.rows[:prev.n_header] + rows
        levels = list(prev.levels[:prev.n_header]) + levels
        caption = caption or state.last_caption
    elif at_top and not caption:
        caption = state.tail_caption
    elif at_top and statement_kind(caption) is None and statement_kind(state.tail_caption):
        # A statement's title ended the page before, its scale note tops this one
        # ("Consolidated Statements of Financial Position" / "(Dollars in millions)").
        caption = f"{state.tail_caption} {caption}"
    if not caption and state.blocks and isinstance(state.blocks[-1], TableBlock):
        caption = state.blocks[-1].caption  # the same statement's next period, stacked
    state.last_table, state.last_caption = t, caption
    return TableBlock(rows, caption, page, levels=levels)


def _paragraphs(lines: list[Line], page: int, out: list[Block]) -> None:
    """Lines joined into paragraphs at wide vertical gaps and bullets."""
    lines = [line for line in lines if not running_line(line.text)]
    if not lines:
        return
    pitch = line_pitch(lines)
    current: list[str] = []
    for k, line in enumerate(lines):
        breaks = k > 0 and (lines[k - 1].y - line.y > PARAGRAPH_GAP * pitch
                            or line.text.startswith(_BULLETS))
        if breaks and current:
            out.append(Paragraph(_join(current), page))
            current = []
        current.append(line.text)
    if current:
        out.append(Paragraph(_join(current), page))


def _join(texts: list[str]) -> str:
    """Lines of a paragraph as one text; a word broken at a hyphen is joined again."""
    out = texts[0]
    for text in texts[1:]:
        out = out + text if out.endswith("-") and not out.endswith(" -") else f"{out} {text}"
    return out
