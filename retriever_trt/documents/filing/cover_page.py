"""The cover fields of a printed SEC filing (a PDF: no tags), read off its cover page.

Every SEC form's cover sets a value over a parenthesized caption, in columns:

    California                                        94-2404110
    (State or other jurisdiction                      (I.R.S. Employer Identification No.)
    of incorporation or organization)
    Cupertino, California                             95014
    (Address of principal executive offices)          (Zip Code)

and the securities table puts the exchange under "Name of each exchange on which
registered"; a former name stands over "(Former name, former address ...)"; a 10-K's
"For the fiscal year ended September 28, 2024" line gives the
fiscal year's end ("September 28"), and the symbols under "Trading Symbol(s)" every
security's symbol. A field's value is the text nearest its caption, above it (below it for
the table's header), in a segment that overlaps the caption horizontally: the column is
what tells "California" from "94-2404110" on one line. "Commission File Number:
001-36743" and "Registrant's telephone number, including area code (732) 524-0400" may
also carry their value on the caption's own line. Needs positioned text
(`pdf_layout.Line`).

One caption for a column of values: "(Exact Name of Registrant as Specified in Its Charter"
over "Address of Principal Executive Offices" and "Registrant's Telephone Number ...)"
under the name, the street, the city and the telephone stacked in that order (Broadcom's
covers, the state, file number and tax id in columns beside them): the registrant's name is
the top of the stack (`stacked_name`), which the text alone cannot tell from the address.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from retriever_trt.documents.filing.metadata import infer_metadata
from retriever_trt.documents.filing.registrant import co_registrants, is_name, short_name
from retriever_trt.documents.model import CoverEntry, CoverField, DocumentMetadata
from retriever_trt.documents.pdf.pdf_layout import Line, Segment

# The cover is the first page; a printed copy may begin with a table of contents line or
# let the cover run onto the second.
COVER_PAGES = 2
# How many lines from its caption a value may sit (a caption wrapped onto two lines, a
# value set a line higher than its neighbour's).
MAX_LINES_AWAY = 3


class Where(Enum):
    """Where a value stands from its caption."""

    ABOVE = "above"    # a caption under its value: "(State or other jurisdiction ...)"
    BELOW = "below"    # a column header over its values: "Name of each exchange ..."


@dataclass(frozen=True)
class _Caption:
    pattern: re.Pattern[str]
    where: Where
    value: re.Pattern[str]   # what the value must look like (its first group, if any)
    same_line: bool = False  # the value may follow the caption on its line


_TAX_ID = re.compile(r"\b(\d{2}-\d{7})\b")
_PHONE = re.compile(r"(\(\d{3}\)\s*\d{3}-\d{4})")
_CAPTIONS = {
    CoverField.INCORPORATION: _Caption(
        # "(State or other jurisdiction of ...)", or Ford's "(State of incorporation)"
        re.compile(r"^\(?\s*state\s+(?:or\s+other\s+jurisdiction|of\s+incorporation)", re.I),
        Where.ABOVE,
        re.compile(r"^([A-Za-z][A-Za-z .'-]*[A-Za-z.])$")),
    CoverField.TAX_ID: _Caption(
        re.compile(r"^\(?\s*i\.?\s*r\.?\s*s\.?\s*employer", re.I), Where.ABOVE, _TAX_ID),
    CoverField.EXCHANGE: _Caption(
        re.compile(r"^name\s+of\s+each\s+exchange", re.I), Where.BELOW,
        re.compile(r"^([A-Za-z][A-Za-z .&,'-]*[A-Za-z.])$")),
    CoverField.FILE_NUMBER: _Caption(
        # "(Commission File" over "Number)": the caption wrapped
        re.compile(r"^\(?\s*commission\s+file(?:\s+(?:number|no\.?)|\s*$)", re.I), Where.ABOVE,
        re.compile(r"(?:^|:\s*|\s)(\d{1,4}-\d{2,7})\b"), same_line=True),
    CoverField.PHONE: _Caption(
        re.compile(r"^\(?\s*registrant.s\s+telephone\s+number", re.I), Where.ABOVE, _PHONE,
        same_line=True),
    # "Square, Inc." over "(Former name, former address and former fiscal year, if changed
    # since last report)"; a legal word, so the telephone line above a blank is no name
    CoverField.FORMER_NAME: _Caption(
        re.compile(r"^\(?\s*former\s+name", re.I), Where.ABOVE,
        re.compile(r"^([A-Za-z0-9][\w .,&'’-]*\b(?:inc|corp|corporation|company|co|ltd|plc|"
                   r"limited|llc|l\.?p|n\.?v)\b\.?)$", re.I)),
}
_NAME_CAPTION = re.compile(r"^\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_STACKED_CAPTION = re.compile(r"^\(?\s*(?:address\s+of\s+principal|registrant.s\s+telephone)",
                              re.I)
# The form's lines over the registrant's block: where a stacked column begins.
_FORM_LINE = re.compile(r"report\s+pursuant|transition\s+period|fiscal\s+year\s+ended|"
                        r"form\s+10-?[kq]|^\(?mark\s+one", re.I)
# How many lines over its caption a stacked column may begin: the name, the street, the
# city, the telephone, and the other columns' captions wrapped between them.
MAX_STACK_LINES = 8
# What a cover writes where it has no such security or number: no value.
_NO_VALUE = frozenset({"none", "n/a", "not applicable"})
# A column header wrapped onto the line under it ("Name of Each Exchange" over "on Which
# Registered", "... on Which" over "Registered"): the header's rest, no value.
_HEADER_REST = re.compile(r"^(?:(?:on\s+)?which\s+)?registered\b", re.I)
# The securities table's headers, which a cover may print run together in one segment
# ("Trading Symbol Name of each exchange on which registered").
_TABLE_HEADER = re.compile(r"title\s+of\s+each\s+class|trading\s+symbol|name\s+of\s+each\s+exchange",
                           re.I)
# An employer identification number a registrant without one prints ("00-0000000"): no value.
_PLACEHOLDER = re.compile(r"^[0-]+$")
# A 10-K's "For the fiscal year ended September 28, 2024": the year's last month and day.
_FISCAL_YEAR_END = re.compile(r"^\s*for\s+the\s+fiscal\s+year\s+ended\s+([A-Z][a-z]+\.?\s+\d{1,2}),?"
                              r"\s+\d{4}", re.I)
# The securities table's "Trading Symbol(s)" header (Wells Fargo prints "Trading" over
# "Symbols") and a symbol under it: "BA", "BA-PRA", "WFC.PRL", "WFC/28A", "JNJ29B".
_SYMBOLS = re.compile(r"^\s*(?:trading\s+)?symbol(?:\(s\)|s)?\s*$", re.I)
_SYMBOL = re.compile(r"^[A-Z][A-Z0-9]*(?:[.\-/][A-Z0-9]+)*$")
MAX_SYMBOL = 12
_ADDRESS = re.compile(r"^\(?\s*address\s+of\s+principal\s+executive\s+offices", re.I)
# "Cupertino, California 95014", "1 Health Drive, Eden Prairie, Minnesota 55344".
_CITY_STATE = re.compile(r"(?:^|,\s*)([A-Za-z][A-Za-z .'-]*),\s*([A-Za-z][A-Za-z .]*?)"
                         r"\.?(?:\s+\d{5}(?:-\d{4})?)?$")


def printed_metadata(pages: Sequence[Sequence[Line]], file_name: str) -> DocumentMetadata:
    """A printed filing's metadata from its first pages (`pages`: the cover, and for a 10-Q
    its statements): `metadata.infer_metadata` of their text, with the cover's fields, the
    name at the top of a stacked caption's column, the first symbol of the securities table
    where the text's symbol is none of the table's ("Trading" over "Title of each class
    symbol", Visa's cover: no symbol in the text's order), the short name the filing defines
    for the registrant (`registrant.short_name`) and a combined report's other registrants
    (`registrant.co_registrants`)."""
    text = "\n".join(line.text for lines in pages for line in lines)
    meta = infer_metadata(text, file_name)
    meta.cover = read_cover(pages)
    meta.company = stacked_name(pages) or meta.company
    symbols = meta.cover.get(CoverField.SYMBOLS)
    if symbols is not None:  # the table's column, where the text alone misses or misreads it
        listed = symbols.value.split(", ")
        meta.ticker = meta.ticker if meta.ticker in listed else listed[0]
    short = short_name(text, meta.company)
    if short:
        meta.cover[CoverField.SHORT_NAME] = CoverEntry(short, page=_page_of(pages, short))
    others = co_registrants(text)
    if others:  # on the page that prints the first of them
        meta.cover[CoverField.CO_REGISTRANTS] = CoverEntry("; ".join(others),
                                                           page=_page_of(pages, others[0]))
    return meta


def _page_of(pages: Sequence[Sequence[Line]], text: str) -> int:
    """The number of the first page with a line that prints `text` (1 when none does)."""
    return next((n for n, lines in enumerate(pages, start=1)
                 if any(text in line.text for line in lines)), 1)


def stacked_name(pages: Sequence[Sequence[Line]]) -> str:
    """The name at the top of the column of values over a caption that stacks the name's,
    the address's and the telephone's ("" when the cover has no such caption)."""
    for lines in pages[:COVER_PAGES]:
        for k, line in enumerate(lines):
            for seg in line.segments:
                if _NAME_CAPTION.match(seg.text) and _stacked(lines, k, seg):
                    column = _column_above(lines, k, seg)
                    return column[-1] if column and is_name(column[-1]) else ""
    return ""


def _stacked(lines: Sequence[Line], k: int, caption: Segment) -> bool:
    """Whether the caption goes on, in its column under it, with another field's."""
    return any(_STACKED_CAPTION.match(s.text) for s in _near(lines, k, caption, Where.BELOW))


def _column_above(lines: Sequence[Line], k: int, caption: Segment) -> list[str]:
    """The texts in the caption's column on the lines above it, nearest first, up to the
    form's own lines ("TRANSITION REPORT ...", "For the fiscal year ended ...")."""
    out: list[str] = []
    for line in reversed(lines[max(0, k - MAX_STACK_LINES):k]):
        if _FORM_LINE.search(line.text):  # its "to" may stand in the column
            break
        out.extend(s.text.strip() for s in line.segments
                   if min(s.x1, caption.x1) > max(s.x0, caption.x0))
    return out


def read_cover(pages: Sequence[Sequence[Line]]) -> dict[CoverField, CoverEntry]:
    """The cover fields found on `pages` (the document's first pages, 1-based in order),
    each with the page it was read from; a field whose caption or value is not found is
    left out."""
    out: dict[CoverField, CoverEntry] = {}
    for number, page in enumerate(pages[:COVER_PAGES], start=1):
        lines = [_split_headers(line) for line in page]
        for k, line in enumerate(lines):
            year_end = _FISCAL_YEAR_END.match(line.text)
            if year_end:
                out.setdefault(CoverField.FISCAL_YEAR_END, CoverEntry(year_end.group(1),
                                                                      page=number))
            for seg in line.segments:
                symbols = _symbols(lines, k, seg) if _SYMBOLS.match(seg.text) else []
                if symbols:
                    out.setdefault(CoverField.SYMBOLS, CoverEntry(", ".join(symbols), page=number))
            for seg in line.segments:
                for f, value in _values(lines, k, seg):
                    out.setdefault(f, CoverEntry(value, page=number))
    return out


def _values(lines: Sequence[Line], k: int, seg: Segment) -> list[tuple[CoverField, str]]:
    """The fields whose caption is `seg` (on line `k`), with their values."""
    if _ADDRESS.match(seg.text):
        for near in _near(lines, k, seg, Where.ABOVE):
            m = _CITY_STATE.search(near.text)
            if m:
                return [(CoverField.CITY, m.group(1).strip()), (CoverField.STATE, m.group(2))]
        return []
    for f, caption in _CAPTIONS.items():
        found = caption.pattern.match(seg.text)
        if found is None:
            continue
        texts = [s.text for s in _near(lines, k, seg, caption.where)]
        if caption.same_line:  # what follows the caption: its segment's end, the line's rest
            after = lines[k].segments[lines[k].segments.index(seg) + 1:]
            texts.insert(0, " ".join([seg.text[found.end():], *(s.text for s in after)]))
        for text in texts:
            if caption.where is Where.BELOW and _HEADER_REST.match(text.strip()):
                continue
            m = caption.value.search(text)
            value = m.group(1).strip() if m else ""
            if value and value.lower() not in _NO_VALUE and not _PLACEHOLDER.match(value):
                return [(f, value)]
    return []


def _split_headers(line: Line) -> Line:
    """The line with each segment that runs several of the securities table's headers
    together cut at each header's start; the cut's x is where its share of the segment's
    characters ends (one font along a header line), which keeps each header over its
    column."""
    segments: list[Segment] = []
    for seg in line.segments:
        starts = [m.start() for m in _TABLE_HEADER.finditer(seg.text) if m.start() > 0]
        if not starts:
            segments.append(seg)
            continue
        width = (seg.x1 - seg.x0) / len(seg.text)
        bounds = [0, *starts, len(seg.text)]
        segments.extend(Segment(seg.text[a:b].strip(), seg.x0 + a * width, seg.x0 + b * width)
                        for a, b in zip(bounds, bounds[1:], strict=False))
    return Line(line.y, line.height, tuple(segments))


def _symbols(lines: Sequence[Line], k: int, caption: Segment) -> list[str]:
    """The symbols in the caption's column on the lines under it, in order: lines with
    nothing in the column (a class's title wrapped) are passed over, and the first text
    there that is no symbol ("Securities registered pursuant to Section 12(g)", "None")
    ends the table."""
    out: list[str] = []
    for line in lines[k + 1:]:
        texts = [s.text.strip() for s in line.segments
                 if min(s.x1, caption.x1) > max(s.x0, caption.x0)]
        if any(len(t) > MAX_SYMBOL or not _SYMBOL.match(t) or t.lower() in _NO_VALUE
               for t in texts):
            break
        out.extend(t for t in texts if t not in out)
    return out


def _near(lines: Sequence[Line], k: int, caption: Segment, where: Where) -> list[Segment]:
    """The segments overlapping the caption's column on the lines above (or below) it,
    nearest first."""
    step = -1 if where is Where.ABOVE else 1
    out = []
    for j in range(k + step, k + step * (MAX_LINES_AWAY + 1), step):
        if not 0 <= j < len(lines):
            break
        out.extend(s for s in lines[j].segments
                   if min(s.x1, caption.x1) > max(s.x0, caption.x0))
    return out
