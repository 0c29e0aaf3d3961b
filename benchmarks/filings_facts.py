"""Inline-XBRL facts of one SEC filing, parsed with lxml on their own (the oracle for
benchmarks/filings_gold.py: it shares no code with finrag's ingestion).

A numeric fact is an `ix:nonFraction` element: its concept (`name`), `contextRef` (an
`xbrli:context`: an instant or a start/end period, and any dimensions), `unitRef`,
`scale` (the power of ten the shown digits are in), `sign="-"` (the fact is negative
whatever the shown text), `format` (how the shown text reads as a number) and
`decimals`. A text fact is an `ix:nonNumeric` element (the `dei:` cover facts).

Each fact keeps its element, so that the table cell that shows it can be checked: the
row (`<tr>`), the row's label (its first non-empty cell), the cell's text, and the
scale the table states in its caption ("in millions", "in thousands").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import cache
from pathlib import Path

from lxml import etree

IX = "http://www.xbrl.org/2013/inlineXBRL"
XBRLI = "http://www.xbrl.org/2003/instance"
XBRLDI = "http://xbrl.org/2006/xbrldi"
XHTML = "http://www.w3.org/1999/xhtml"
XSI_NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
NS = {"ix": IX, "xbrli": XBRLI, "xbrldi": XBRLDI}

# Formats whose shown text is digits with "," grouping and "." decimals.
DOT_DECIMAL = {"ixt:num-dot-decimal", "ixt:numdotdecimal"}
FIXED_ZERO = "ixt:fixed-zero"  # shown as "—" or "-": the value is 0
# How far before a table its caption ("(In millions, except per share data)") may stand.
CAPTION_CHARS = 2000
SCALE_WORDS = {"thousands": 3, "millions": 6, "billions": 9}
# A table's heading may say just "Millions, Except Per Share Amounts"; text before it must
# say "in millions" (a bare "millions" there is as likely prose: "millions of members").
_HEAD_SCALE_RE = re.compile(r"\b(thousands|millions|billions)\b", re.IGNORECASE)
_SCALE_RE = re.compile(r"\bin (thousands|millions|billions)\b", re.IGNORECASE)
HEAD_CHARS = 500  # how much of a table's own text is its heading
CAPTION_CLUSTER = 120  # scale words this close together belong to one caption
_NUMBER_RE = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")


class FactError(ValueError):
    """A filing's fact that cannot be read (a format this parser does not know)."""


@dataclass(frozen=True)
class Context:
    id: str
    start: date | None      # None for an instant
    end: date               # the instant itself for an instant
    dims: tuple[tuple[str, str], ...] = ()

    @property
    def days(self) -> int:
        return 0 if self.start is None else (self.end - self.start).days + 1


@dataclass(frozen=True)
class Fact:
    concept: str
    context: Context
    value: Decimal | None   # the signed value in the unit (dollars, shares); None: unreadable
    unit: str               # the unit's measure(s), e.g. "iso4217:USD", "iso4217:USD/xbrli:shares"
    scale: int
    decimals: str
    shown: str              # the text as shown inside the element
    element: etree._Element = field(compare=False, repr=False)


@dataclass(frozen=True)
class TextFact:
    concept: str
    context: Context
    shown: str              # the visible text
    format: str | None
    element: etree._Element = field(compare=False, repr=False)


@dataclass(frozen=True)
class Cell:
    """A fact as a table shows it: the row's label and the cell's text."""

    label: str
    text: str
    caption_scale: int | None  # the scale the table's caption states, if it states one

    def render(self) -> str:
        return f"{self.label} | {self.text}"


@dataclass
class Filing:
    path: Path
    contexts: dict[str, Context]
    facts: list[Fact]
    texts: list[TextFact]

    def numeric(self, concept: str) -> list[Fact]:
        return [f for f in self.facts if f.concept == concept]

    def text(self, concept: str, dims: bool = False) -> list[TextFact]:
        return [t for t in self.texts if t.concept == concept and bool(t.context.dims) == dims]

    def dei(self, concept: str) -> str:
        """The shown text of a `dei:` fact without dimensions ("" when absent)."""
        found = self.text(f"dei:{concept}")
        return found[0].shown if found else ""


def _text(el: etree._Element, sep: str = "") -> str:
    return " ".join(sep.join(el.itertext()).split())


def _date(text: str) -> date:
    return date.fromisoformat(text.strip())


def _contexts(root: etree._Element) -> dict[str, Context]:
    out = {}
    for c in root.iterfind(".//xbrli:context", NS):
        instant = c.find("xbrli:period/xbrli:instant", NS)
        if instant is not None:
            start, end = None, _date(instant.text)
        else:
            start = _date(c.find("xbrli:period/xbrli:startDate", NS).text)
            end = _date(c.find("xbrli:period/xbrli:endDate", NS).text)
        dims = tuple(sorted((m.get("dimension"), (m.text or _text(m)).strip())
                            for m in c.iterfind(".//xbrldi:explicitMember", NS)))
        dims += tuple(sorted((m.get("dimension"), _text(m))
                             for m in c.iterfind(".//xbrldi:typedMember", NS)))
        out[c.get("id")] = Context(c.get("id"), start, end, dims)
    return out


def _units(root: etree._Element) -> dict[str, str]:
    out = {}
    for u in root.iterfind(".//xbrli:unit", NS):
        measures = [m.text.strip() for m in u.iterfind(".//xbrli:measure", NS)]
        out[u.get("id")] = "/".join(measures)
    return out


def number_value(shown: str, fmt: str | None, scale: int, negative: bool) -> Decimal | None:
    """The value of a nonFraction's shown text under its format, scale and sign."""
    if fmt == FIXED_ZERO:
        return Decimal(0)
    if fmt is None or fmt in DOT_DECIMAL:
        digits = shown.replace(",", "").replace(" ", "")
        if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", digits):
            raise FactError(f"shown text {shown!r} does not read as a number under {fmt}")
        value = Decimal(digits).scaleb(scale)
        return -value if negative else value
    return None  # number words ("none", "two"): never an operand here


def _numeric(el: etree._Element, contexts: dict[str, Context], units: dict[str, str]) -> Fact:
    shown = _text(el)
    scale = int(el.get("scale", "0"))
    nil = el.get(XSI_NIL) == "true"  # a fact reported as nil: no value
    return Fact(concept=el.get("name"), context=contexts[el.get("contextRef")],
                value=None if nil else number_value(shown, el.get("format"), scale,
                                                    el.get("sign") == "-"),
                unit=units.get(el.get("unitRef"), ""), scale=scale,
                decimals=el.get("decimals", ""), shown=shown, element=el)


@cache
def parse_filing(path: Path) -> Filing:
    """Every fact of the filing at `path` (parsed once a process)."""
    # lstrip: some stored filings start with a blank line before their XML declaration
    root = etree.fromstring(path.read_bytes().lstrip(), etree.XMLParser(huge_tree=True))
    contexts, units = _contexts(root), _units(root)
    # an exhibit's facts may refer to contexts its main document defines (Clorox's annual
    # report exhibit): with no period or dimensions known, they are no facts to ask of
    facts = [_numeric(el, contexts, units) for el in root.iterfind(".//ix:nonFraction", NS)
             if el.get("contextRef") in contexts]
    texts = [TextFact(el.get("name"), contexts[el.get("contextRef")], _text(el), el.get("format"),
                      el) for el in root.iterfind(".//ix:nonNumeric", NS)
             if el.get("contextRef") in contexts]
    return Filing(path, contexts, facts, texts)


def is_hidden(el: etree._Element) -> bool:
    """In ix:hidden (inside ix:header): tagged but not shown on the page."""
    return any(a.tag == f"{{{IX}}}header" for a in el.iterancestors())


def _preceding_text(table: etree._Element) -> str:
    """Up to CAPTION_CHARS of the text just before `table` in document order."""
    parts: list[str] = []
    size, node = 0, table
    while node is not None and size < CAPTION_CHARS:
        for sib in node.itersiblings(preceding=True):
            t = _text(sib, " ")
            parts.append(t)
            size += len(t)
            if size >= CAPTION_CHARS:
                break
        node = node.getparent()
    return " ".join(reversed(parts))[-CAPTION_CHARS:]


def caption_scale(table: etree._Element) -> int | None:
    """The scale a table states in its own text or its caption: the nearest statement."""
    own = _HEAD_SCALE_RE.search(_text(table, " ")[:HEAD_CHARS])
    if own:
        return SCALE_WORDS[own.group(1).lower()]
    before = list(_SCALE_RE.finditer(_preceding_text(table)))
    if not before:
        return None
    # The caption is the last statement of scale; within it the first one counts: "(In
    # millions, except number of shares, which are reflected in thousands, ...)".
    i = len(before) - 1
    while i > 0 and before[i].start() - before[i - 1].end() <= CAPTION_CLUSTER:
        i -= 1
    return SCALE_WORDS[before[i].group(1).lower()]


def cell_of(fact: Fact) -> Cell | None:
    """The visible table cell showing `fact`, with its row's label; None when not in a row."""
    if is_hidden(fact.element):
        return None
    td = next(fact.element.iterancestors(f"{{{XHTML}}}td"), None)
    tr = next(fact.element.iterancestors(f"{{{XHTML}}}tr"), None)
    if td is None or tr is None:
        return None
    cells = list(tr.iterchildren(f"{{{XHTML}}}td"))
    label = next((_text(c) for c in cells if _text(c) and c is not td), "")
    i = cells.index(td)
    # A closing ")" of a negative often sits in the next cell: show it with the number.
    text = _text(td)
    if i + 1 < len(cells) and _text(cells[i + 1]) in (")", ")%", "%"):
        text += _text(cells[i + 1])
    table = next(tr.iterancestors(f"{{{XHTML}}}table"))
    return Cell(label=label, text=text, caption_scale=caption_scale(table))


def cell_number(text: str) -> Decimal | None:
    """The number a cell's text shows ("$ (1,234.5)" -> -1234.5, "—" -> 0), or None."""
    stripped = text.replace("$", "").replace("%", "").strip()
    if stripped in ("—", "-", "–"):
        return Decimal(0)
    found = _NUMBER_RE.search(stripped)
    if not found:
        return None
    value = Decimal(found.group().replace(",", ""))
    return -value if "(" in stripped else value
