"""HTML, SEC inline-XBRL filings first: paragraphs and tables in reading order, the tagged
facts (`ixbrl.py`) and the cover's metadata.

lxml reads an inline-XBRL filing (well-formed XHTML) as XML in ~0.2 s for a 4 MB 10-K;
other HTML goes through lxml's forgiving HTML parser. Page numbers follow the filing's
page breaks (`page-break-after`/`break-before` styles), so a source can say "p. 41".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from retriever_trt.documents.filing.metadata import infer_metadata
from retriever_trt.documents.html import ixbrl
from retriever_trt.documents.html.html_tables import local_name, table_block
from retriever_trt.documents.model import (
    Block,
    Document,
    DocumentError,
    DocumentMetadata,
    Form,
    Paragraph,
    TableBlock,
)

_BLOCK_TAGS = {"div", "p", "table", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6",
               "section", "article", "center", "blockquote", "body", "header", "footer"}
_SKIP_TAGS = {"script", "style", "head", "title", "header"}
_PAGE_BREAK = re.compile(r"page-break-(?:after|before)\s*:\s*always|break-(?:after|before)\s*:\s*page",
                         re.I)
_HIDDEN = re.compile(r"display\s*:\s*none", re.I)
# A caption is the short text just above a table: its title and "(In millions ...)".
CAPTION_LINES = 3
CAPTION_MAX_CHARS = 200


def parse(path: Path) -> Any:
    """The document's root element: XML when the file is XHTML (inline XBRL), else HTML."""
    data = path.read_bytes()
    try:
        # an XML declaration must open the file: a copy with a blank line before it is
        # still XHTML (read as HTML its inline XBRL facts would be lost)
        return etree.fromstring(data.lstrip(), etree.XMLParser(huge_tree=True, resolve_entities=False,
                                                      no_network=True))
    except etree.XMLSyntaxError:
        pass
    try:
        return lxml_html.document_fromstring(data)
    except (etree.ParserError, ValueError) as exc:
        raise DocumentError(path, f"not readable as HTML ({exc})") from None


class _Walker:
    """Collects blocks in reading order: a table is one block; text between tables is cut
    into paragraphs at block elements."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.page = 1
        self._text: list[str] = []

    def flush(self) -> None:
        text = " ".join("".join(self._text).split())
        if text:
            self.blocks.append(Paragraph(text, self.page))
        self._text = []

    def caption(self) -> str:
        """The short paragraphs right above the table (after the previous table)."""
        lines: list[str] = []
        for block in reversed(self.blocks):
            if not isinstance(block, Paragraph) or len(lines) == CAPTION_LINES or \
                    len(block.text) > CAPTION_MAX_CHARS:
                break
            lines.insert(0, block.text)
        return " ".join(lines)

    def walk(self, el: Any) -> None:
        tag = local_name(el.tag)
        if tag in _SKIP_TAGS or tag == "" or _HIDDEN.search(el.get("style", "")):
            self._tail(el)
            return
        if tag == "table":
            self.flush()
            block = table_block(el, self.caption(), self.page)
            if block is not None:
                self.blocks.append(block)
            self._tail(el)
            return
        is_block = tag in _BLOCK_TAGS
        if tag == "br":
            self._text.append(" ")
        if is_block:
            self.flush()
        if el.text:
            self._text.append(el.text)
        for child in el:
            self.walk(child)
        if is_block:
            self.flush()
        if _PAGE_BREAK.search(el.get("style", "")):
            self.page += 1
        self._tail(el)

    def _tail(self, el: Any) -> None:
        if el.tail:
            self._text.append(el.tail)


def _title(root: Any, path: Path) -> str:
    for el in root.iter():
        if local_name(el.tag) == "title" and (el.text or "").strip():
            return " ".join(el.text.split())
    return path.stem


def _metadata(root: Any, blocks: list[Block], path: Path) -> DocumentMetadata:
    """The dei facts' metadata; what they leave out (an HTML filing without inline XBRL, or
    with few dei tags) is read from the cover text and the file name."""
    meta = ixbrl.metadata_from_cover(ixbrl.cover_facts(root))
    if meta.company and meta.fiscal_year is not None and meta.form is not Form.OTHER:
        return meta
    text = "\n".join(b.text for b in blocks if isinstance(b, Paragraph))
    read = infer_metadata(text, path.name)
    for name in ("company", "ticker", "fiscal_year", "fiscal_period", "period_end"):
        if not getattr(meta, name):
            setattr(meta, name, getattr(read, name))
    if meta.form is Form.OTHER:
        meta.form = read.form
    return meta


def load(path: Path, doc_id: str) -> Document:
    root = parse(path)
    body = next((el for el in root.iter() if local_name(el.tag) == "body"), None)
    if body is None:
        raise DocumentError(path, "HTML with no <body>")
    walker = _Walker()
    walker.walk(body)
    walker.flush()
    meta = _metadata(root, walker.blocks, path)
    meta.pages = walker.page
    facts = ixbrl.facts(root)
    if meta.period_end is None and facts:
        # No dei:DocumentPeriodEndDate: the latest period the statements report.
        meta.period_end = max(f.end for f in facts if not f.dimensions)
    doc = Document(doc_id, _title(root, path), meta, walker.blocks, facts)
    if not any(isinstance(b, (Paragraph, TableBlock)) for b in doc.blocks):
        raise DocumentError(path, "HTML with no text in its body")
    return doc
