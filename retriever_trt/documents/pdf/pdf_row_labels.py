"""Row labels of a printed table: labels wrapped onto two lines joined, and each label's
indentation as a level.

A printed statement's labels carry its structure in their x position: "Products" and
"Services" indented under "Net sales:", the activity of one component under its heading,
a total at the heading's own indent closing the block. The levels are the label x
positions of a table's body rows, those within `SAME_INDENT` points of each other one
level, numbered from the leftmost.
"""

from __future__ import annotations

import re
from decimal import Decimal

from retriever_trt.documents.pdf.pdf_layout import CURRENCY_SIGNS, Segment
from retriever_trt.documents.tables import parse_value

# Label x positions this close (points) are one indent: PDFium's boxes differ by a glyph's
# side bearing ("T" and "A" of labels set at one indent start 0.1-0.7 points apart).
SAME_INDENT = 3.0
# A label that stops mid-phrase goes on on the next line.
_OPEN_END = re.compile(r"(,|\b(of|and|or|the|to|for|in|as|by|with|from|at|on|per|january|february|"
                       r"march|april|may|june|july|august|september|october|november|december))$",
                       re.I)
# Fewest rows, with figures, that a total printed without a label must add up.
MIN_TOTAL_TERMS = 2
# A line that starts with a parenthesis holding a number qualifies the label above it
# ("Cash dividends paid — common stock" / "($1.68 per share)"); "(Increase)" starts a row.
_FIGURES_NOTE = re.compile(r"^\([^)]*\d")


def indent_levels(indents: list[float | None]) -> list[int]:
    """Each row's level: the rank of its label's x position among the table's, x positions
    within `SAME_INDENT` of the one before being one level; a row without a label is 0."""
    starts: list[float] = []
    for x in sorted({x for x in indents if x is not None}):
        if not starts or x - starts[-1] > SAME_INDENT:
            starts.append(x)
    return [0 if x is None else max(k for k, s in enumerate(starts) if s <= x) for x in indents]


def label_indent(segs: list[Segment], label_end: float) -> float | None:
    """Where a body line's label starts (None: the line has no label)."""
    return segs[0].x0 if segs and segs[0].x0 < label_end else None


def wrapped_rows(texts: list[str], numeric: list[bool]) -> list[bool]:
    """For each line of a page, whether it is a later line of a row's label wrapped down to
    the line with the row's amounts (`numeric`): "Common stock, $0.000006 par value; ..." /
    "and 2,211 million shares issued ..." / ... / "... and 2023, respectively  —  —", each
    line going on from the one above (in lower case, or after a label stopping mid-phrase)."""
    goes_on = [k > 0 and (texts[k][:1].islower() or label_stops(texts[k - 1]))
               for k in range(len(texts))]
    to_amounts = [False] * len(texts)  # the line's label goes on down to amounts
    for k in range(len(texts) - 1, -1, -1):
        goes_down = k + 1 < len(texts) and goes_on[k + 1] and to_amounts[k + 1]
        to_amounts[k] = numeric[k] or goes_down
    return [goes_on[k] and to_amounts[k] and not numeric[k] for k in range(len(texts))]


def label_stops(label: str) -> bool:
    """Whether a label stops mid-phrase ("Balance as of", "Purchases of property and")."""
    return _OPEN_END.search(label) is not None


def join_wrapped(rows: list[list[str]], indents: list[float | None]
                 ) -> tuple[list[list[str]], list[float | None]]:
    """Join a row wrapped onto two lines: a label-only line followed by one that goes on
    (in lower case, after a label that stops mid-phrase: "Balance as of March 31," /
    "2025", or a note of figures: "($1.68 per share)"), a label-only line that finishes
    the row above (lower case, an open parenthesis above, or a label above that stops
    mid-phrase: "Balance as of  $ 568 ..." / "December 31, 2021"), and amounts printed a
    line below their label (a label with a footnote mark, or a lone "$" above its "—").
    A joined row keeps the indent of its first line. Returns the rows and their indents."""
    out: list[list[str]] = []
    kept: list[float | None] = []
    for row, indent in zip(rows, indents, strict=True):
        if out and not out[-1][0].endswith(":"):
            merged = _joined(out[-1], row)
            if merged is not None:
                out[-1] = merged
                continue
        out.append(list(row))
        kept.append(indent)
    return out, kept


def _joined(prev: list[str], row: list[str]) -> list[str] | None:
    """`prev` and `row` as one row when `row` finishes `prev` (see `join_wrapped`)."""
    label, has_cells = row[0], any(row[1:])
    prev_label_only = not any(prev[1:])
    if not label:
        fits = has_cells and all(not p or (p in CURRENCY_SIGNS and c) or not c
                                 for p, c in zip(prev[1:], row[1:], strict=True))
        if fits and (prev_label_only or any(p in CURRENCY_SIGNS for p in prev[1:])):
            return [prev[0]] + [f"{p} {c}".strip() for p, c in zip(prev[1:], row[1:], strict=True)]
        return None
    open_end = _OPEN_END.search(prev[0]) is not None
    goes_on = label[0].islower() or prev[0].count("(") > prev[0].count(")") or (
        open_end and (prev_label_only or not has_cells)) or (
        prev_label_only and _FIGURES_NOTE.match(label) is not None)
    if goes_on and (not has_cells or prev_label_only):
        return [f"{prev[0]} {label}"] + (row[1:] if has_cells else prev[1:])
    return None


def named_totals(rows: list[list[str]]) -> list[list[str]]:
    """Rows with a row of amounts printed without a label named as its section's total,
    where it is the sum of the section's rows in every column: Foot Locker prints "Total
    current assets" as its amounts alone under "Current assets:" and its rows. A row that
    does not add up keeps no label (it is named only where the sum shows what it is)."""
    out = [list(r) for r in rows]
    heading: int | None = None  # the last section heading ("Current assets:")
    for i, row in enumerate(out):
        if row[0].endswith(":") and not any(row[1:]):
            heading = i
        elif not row[0] and heading is not None and any(row[1:]):
            if _adds_up(out[heading + 1:i], row[1:]):
                name = out[heading][0].rstrip(":").strip()
                sentence_case = name[1:] == name[1:].lower()  # not "Boston Properties LP"
                out[i][0] = f"Total {name[:1].lower() if sentence_case else name[:1]}{name[1:]}"
            heading = None
    return out


def _adds_up(terms: list[list[str]], total: list[str]) -> bool:
    """Whether every figure of `total` is the sum of the labelled `terms` above it in its
    column ("—" and blanks as nothing), with at least `MIN_TOTAL_TERMS` terms."""
    if len(terms) < MIN_TOTAL_TERMS or any(not t[0] for t in terms):
        return False
    columns = [j for j, cell in enumerate(total) if parse_value(cell) is not None]
    for j in columns:
        values = [parse_value(t[j + 1]) for t in terms]
        if sum(1 for v in values if v is not None) < MIN_TOTAL_TERMS:
            return False
        if sum((v.number for v in values if v is not None), Decimal(0)) != parse_value(total[j]).number:
            return False
    return bool(columns)
