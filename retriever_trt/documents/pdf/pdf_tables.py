"""Tables found among a PDF page's lines: rows of cells by x position, header rows, caption.

A printed filing's table has no rules: it is lines whose label sits at the left and whose
amounts sit in right-aligned columns. A page is looked at as a table only where lines with
a label and one or more amounts follow each other; the amounts' x ranges, overlapping from
row to row, give the columns. The lines just above that sit over the columns ("Years
ended" / "September 28," / "2024") are header rows, and the short lines above those (a
statement's title and "(In millions, except per-share amounts)") are the caption. Rows
come out as `tables.parse_table` reads them: a row label in column 0, a label spanning
several columns written once in its first column, "(1,234)" and "—" kept as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from retriever_trt.documents.filing.metadata import MONTHS
from retriever_trt.documents.pdf.pdf_cells import cells, is_amount
from retriever_trt.documents.pdf.pdf_layout import Line, Segment
from retriever_trt.documents.pdf.pdf_row_labels import (
    indent_levels,
    join_wrapped,
    label_indent,
    label_stops,
    named_totals,
    wrapped_rows,
)
from retriever_trt.documents.pdf.pdf_statements import statement_kind
from retriever_trt.documents.years import YEAR_DIGITS, years_in

# Fewest lines with amounts that make a table: two when they share two or more columns,
# three when there is one column of amounts; one line makes a table when it has amounts in
# three or more columns ("Future principal payments  $ 5,513  $ 2,750  ...").
MIN_ROWS = 2
MIN_ROWS_ONE_COLUMN = 3
MIN_COLUMNS_ONE_ROW = 3
# A line without amounts wider than this share of the page's text is prose: a table ends.
PROSE_WIDTH = 0.75
# A table runs on over at most this many lines without amounts (section headings,
# labels wrapped onto two lines).
MAX_LINES_WITHOUT_AMOUNTS = 3
# Vertical gaps, in the page's usual line pitch, past which a table, its header or its
# caption stops: a header's lines sit tight over the first row, a title further up.
MAX_ROW_GAP = 3.0
MAX_HEADER_GAP = 1.5
MAX_DATE_HEADER_GAP = 2.5
MAX_CAPTION_GAP = 4.5
MAX_HEADER_LINES = 6
MAX_CAPTION_LINES = 4
# An amount wider than this (points) is not used to find columns (it would join two).
MAX_CELL_WIDTH = 150.0
# A line that starts no further left than this (points) of a table's first amount, and
# names a year or holds amounts without a label, heads the next table (or is a footer).
HEADER_INDENT = 40.0
# Column x ranges of a table and of its continuation end within this many points.
SAME_COLUMN = 12.0
# Points of slack when a cell is placed against a column's x range.
SLACK = 2.0
# Where a caption's prose starts: after the last sentence that ends within a line.
# (a lower-case word or a number ends it, so "U.S. Treasury" does not).
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)])\.\s+(?=[A-Z(])")
_YEAR = re.compile(rf"^{YEAR_DIGITS}$")
_RUNNING_HEADS = re.compile(r"^(table of contents|index)$", re.I)
# A header's day numbers ("Six months ended June" over "30") are no amounts.
_DAY = re.compile(r"^(?:[1-9]|[12]\d|3[01])$")
_MONTH = re.compile(r"\b(?:" + "|".join(MONTHS) + r")\b", re.I)
# A footer is at most this long and this many line pitches below the text above it.
MAX_FOOTER_CHARS = 80
FOOTER_GAP = 1.5
# A page's last line ending in its number ("Apple Inc. | 2024 Form 10-K | 31", "5").
_FOOTER = re.compile(r"(^|\s)\d{1,3}$")


Columns = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class PageTables:
    """A page's tables, and the title lines that end it (for a table on the next page)."""

    tables: list[FoundTable]
    tail_caption: str


@dataclass(frozen=True)
class FoundTable:
    """A table on a page: `rows` as laid out (`n_header` header rows first), the lines it
    takes (`start` the first caption line, `end` one past its last row), its columns'
    x ranges, for joining it to its continuation on the next page, and the indentation
    level of each row's label."""

    rows: list[list[str]]
    n_header: int
    caption: str
    start: int
    end: int
    columns: Columns
    levels: tuple[int, ...]  # each row's label indentation level (0 leftmost; headers 0)


def page_footer(lines: list[Line]) -> bool:
    """Whether the page's last line is its footer: short, ending in the page number
    ("Apple Inc. | 2024 Form 10-K | 29"), set apart below the text above it."""
    if not lines or len(lines[-1].text) > MAX_FOOTER_CHARS or not _FOOTER.search(lines[-1].text):
        return False
    return len(lines) == 1 or (lines[-2].y - lines[-1].y) / line_pitch(lines) > FOOTER_GAP


def running_line(text: str) -> bool:
    """A running head ("Table of Contents") or a bare page number: not document text."""
    text = text.strip()
    return text.isdigit() or _RUNNING_HEADS.match(text) is not None


class _Page:
    """A page's lines with what the search needs of each: its cells, whether it has
    amounts (a row) or is prose, and the page's usual line pitch (the unit of gaps); which
    lines go on a wrapped label, once, when a table asks."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.split = [cells(line) for line in lines]
        width = max(line.x1 for line in lines) - min(line.x0 for line in lines) if lines else 0.0
        self.numeric = [_has_amounts(segs) and not _day_numbers(segs, lines[i - 1] if i else None)
                        for i, segs in enumerate(self.split)]
        self.prose = [not self.numeric[i] and any(s.x1 - s.x0 > PROSE_WIDTH * width
                                                  for s in self.split[i])
                      for i in range(len(lines))]
        self.pitch = line_pitch(lines)

    @cached_property
    def wrapped(self) -> list[bool]:
        """Whether each line is a later line of a label wrapped down to its row's amounts."""
        return wrapped_rows([line.text for line in self.lines], self.numeric)

    def gap(self, k: int) -> float:
        """Vertical distance from line k-1 down to line k, in line pitches."""
        return (self.lines[k - 1].y - self.lines[k].y) / self.pitch


def line_pitch(lines: list[Line]) -> float:
    """The median distance between consecutive lines (1.0 for a page of one line)."""
    gaps = sorted(a.y - b.y for a, b in zip(lines, lines[1:], strict=False) if a.y > b.y)
    return gaps[len(gaps) // 2] if gaps else 1.0


def find_tables(lines: list[Line], carried: Columns = ()) -> PageTables:
    """The tables among a page's lines, top to bottom, and the title lines that end the
    page after them. `carried`: the columns of the table that ended the page before; rows
    at the top of this page whose amounts fall in them are its continuation, however few."""
    page = _Page(lines)
    found: list[FoundTable] = []
    i = 0
    while i < len(lines):
        if not page.numeric[i]:
            i += 1
            continue
        last = _body_end(page, i)
        at_top = not found and all(running_line(line.text) for line in lines[:i])
        table = _build(page, i, last, found[-1].end if found else 0, carried if at_top else ())
        if table is not None:
            found.append(table)
        i = last + 1
    tail = _tail_caption(page, found[-1].end if found else 0)
    return PageTables(found, caption_text(lines[tail.start:tail.stop]))


def _has_amounts(segs: list[Segment]) -> bool:
    """A table row: amounts after its first cell, and not only years (a header line)."""
    return any(is_amount(s.text) for s in segs[1:]) and not _years_only(segs)


def _day_numbers(segs: list[Segment], above: Line | None) -> bool:
    """Bare days for amounts, and a month named in a cell after the label, or on the line
    above a line with no label ("Three Months Ended March" over "31"); not a label naming
    a month ("Balance at June 30, 2025", a contents entry)."""
    amounts = [s.text for s in segs[1:] if is_amount(s.text)]
    if not all(_DAY.match(a) for a in amounts):
        return False
    if any(_MONTH.search(s.text) for s in segs[1:]):
        return True
    return bool(_DAY.match(segs[0].text)) and above is not None and bool(_MONTH.search(above.text))


def _years_only(segs: list[Segment]) -> bool:
    """A header line of years ("2024  2023  2022"): its amounts are all bare years."""
    return all(_YEAR.match(s.text) for s in segs if is_amount(s.text))


def _body_end(page: _Page, first: int) -> int:
    """The last line with amounts of the table whose first such line is `first`: it stops
    at prose, a wide gap, too many lines without amounts, or a line over the amounts that
    names a year (the header of the next table) or a page footer with its number."""
    split, numeric = page.split, page.numeric
    amounts_x = min(s.x0 for s in split[first][1:] if is_amount(s.text)) - HEADER_INDENT
    last = first
    loose = 0  # lines since `last` without amounts, a wrapped row's later lines aside
    for k in range(first + 1, len(page.lines)):
        if page.prose[k] or page.gap(k) > MAX_ROW_GAP:
            break
        over_amounts = split[k][0].x0 >= amounts_x
        if over_amounts and (_years_only(split[k]) if is_amount(split[k][0].text)
                             else numeric[k] or years_in(page.lines[k].text)):
            break  # the next table's header, or a page footer ("Form 10-Q   1")
        if numeric[k]:
            last, loose = k, 0
            continue
        loose += not page.wrapped[k]
        if loose > MAX_LINES_WITHOUT_AMOUNTS:
            break
    return last + _label_goes_on(page, last)


def _label_goes_on(page: _Page, last: int) -> int:
    """1 when the line after a table's last row finishes that row's label, which stops
    mid-phrase ("Balance as of  $ 63 ..." over "December 31, 2024"; the amounts may sit
    on a line of their own between the label's two lines), else 0."""
    k = last + 1
    if k >= len(page.lines) or page.numeric[k] or page.prose[k] or page.gap(k) > MAX_HEADER_GAP:
        return 0
    label = last - 1 if last > 0 and is_amount(page.split[last][0].text) else last
    return int(len(page.split[k]) == 1 and label_stops(page.split[label][0].text))


def _columns(split: list[list[Segment]], rows: range, numeric: list[bool]) -> list[list[float]]:
    """Column x ranges: amounts of the rows whose ranges overlap belong to one column. Text
    cells of those rows right of the first column that no amount column takes ("Up 114%",
    "3 years") make columns of their own."""
    cells_ = [s for i in rows if numeric[i] for s in split[i][1:]]
    columns = _merged(sorted((s.x0, s.x1) for s in cells_
                             if is_amount(s.text) and s.x1 - s.x0 <= MAX_CELL_WIDTH))
    if not columns:
        return columns
    text = sorted((s.x0, s.x1) for s in cells_ if not is_amount(s.text) and s.x0 > columns[0][0]
                  and not any(min(s.x1, c[1]) > max(s.x0, c[0]) for c in columns))
    return sorted(columns + _merged(text))


def _merged(spans: list[tuple[float, float]]) -> list[list[float]]:
    """Sorted x ranges with the overlapping ones merged."""
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    return columns


def same_columns(a: Columns, b: Columns) -> bool:
    """Whether every column of `a` ends where one of `b` does (amounts are right-aligned)."""
    return bool(a) and all(any(abs(x[1] - y[1]) <= SAME_COLUMN for y in b) for x in a)


def _build(page: _Page, first: int, last: int, floor: int, carried: Columns) -> FoundTable | None:
    columns = _columns(page.split, range(first, last + 1), page.numeric)
    n_numeric = sum(page.numeric[first:last + 1])
    if not columns or (len(columns) == 1 and n_numeric < MIN_ROWS_ONE_COLUMN) or (
            n_numeric < MIN_ROWS and len(columns) < MIN_COLUMNS_ONE_ROW):
        if not same_columns(tuple((c[0], c[1]) for c in columns), carried):
            return None
        columns = [[x0, x1] for x0, x1 in carried]  # a few rows carried over from the page before
    label_end = columns[0][0] - SLACK
    first, top = _header_start(page, first, floor, label_end)
    cap = _caption_start(page, top, floor)
    header = [_place(page.split[k], columns, label_end, spanning=True) for k in range(top, first)]
    lines = range(first, last + 1)
    body, indents = join_wrapped([_place(page.split[k], columns, label_end, spanning=False)
                                  for k in lines], [label_indent(page.split[k], label_end) for k in lines])
    body = named_totals(body)
    caption = caption_text(page.lines[cap:top])
    return FoundTable(header + body, len(header), caption, cap, last + 1,
                      tuple((c[0], c[1]) for c in columns),
                      (0,) * len(header) + tuple(indent_levels(indents)))


def _header_start(page: _Page, first: int, floor: int, label_end: float) -> tuple[int, int]:
    """(first body line, first header line) of the table whose first amounts are on line
    `first`: header lines sit over the columns; section labels between the header and the
    first amounts ("Assets", "Current assets:") are body rows, as far apart as body rows
    may be (a heading "ASSETS" set a blank line above "Current assets:"): they are kept
    only where a header is found above them."""
    split = page.split

    def fits(k: int, gap: float = MAX_HEADER_GAP) -> bool:
        return k >= floor and not page.numeric[k] and not page.prose[k] and \
            not _RUNNING_HEADS.match(page.lines[k].text) and page.gap(k + 1) <= gap

    body = first
    while first - body < MAX_LINES_WITHOUT_AMOUNTS and fits(body - 1, MAX_ROW_GAP) and \
            all(s.center <= label_end for s in split[body - 1]):
        body -= 1
    top = body
    # The dates over the columns may stand further off the first row than a header's lines
    # from each other (NVIDIA's "Jul 27, 2025  Jul 28, 2024", two line pitches up), and so
    # may any header over a section heading (Verizon's "Shares  Amount" over "Common Stock").
    if body > floor and (years_in(page.lines[body - 1].text) or body < first) and \
            fits(body - 1, MAX_DATE_HEADER_GAP) and any(s.center > label_end for s in split[body - 1]):
        top -= 1
    # A statement's title centred over the columns is its caption, not a header line.
    while body - top < MAX_HEADER_LINES and fits(top - 1) and \
            any(s.center > label_end for s in split[top - 1]) and \
            statement_kind(page.lines[top - 1].text) is None:
        top -= 1
    return (body, top) if top < body else (first, first)


def caption_text(lines: list[Line]) -> str:
    """Caption lines as one text, from the last sentence start: lines above an intro
    ("The following table ... (in millions):") can end another paragraph's sentences."""
    text = " ".join(line.text for line in lines)
    ends = list(_SENTENCE_END.finditer(text))
    return text[ends[-1].end():] if ends else text


def _tail_caption(page: _Page, floor: int) -> range:
    """The title lines that end a page, above its footer (a statement's title printed at
    the foot of the page before its table); empty when the page ends in prose."""
    lines = page.lines
    end = len(lines)
    while end > floor and (_FOOTER.search(lines[end - 1].text)
                           or _RUNNING_HEADS.match(lines[end - 1].text)):
        end -= 1
    return range(_caption_start(page, end, floor), end)


def _caption_start(page: _Page, top: int, floor: int) -> int:
    """The first of the short lines just above a table (line `top`) that title it."""
    cap = top
    while cap - 1 >= floor and top - cap < MAX_CAPTION_LINES and not page.numeric[cap - 1] and (
            cap == len(page.lines) or page.gap(cap) <= MAX_CAPTION_GAP):
        text = page.lines[cap - 1].text
        if _RUNNING_HEADS.match(text) or text.endswith("."):  # a sentence ends the prose above
            break
        cap -= 1
    if 0 < cap and floor == 0 and top <= MAX_CAPTION_LINES and not any(page.numeric[:top]) \
            and statement_kind(caption_text(page.lines[:top])) is not None:
        return 0  # a statement's title heading the page, set far above the table (Pfizer)
    return cap


def _place(segs: list[Segment], columns: list[list[float]], label_end: float,
           spanning: bool) -> list[str]:
    """A line's cells in a row. A body line's label is its first cell, starting left of
    the first column (with any cells before that column); a header cell belongs to the
    columns it overlaps, even when it starts left of them ("Total Number" centred over a
    narrow column of share counts). A cell goes in the column it overlaps most (a header
    spanning several columns: the first it overlaps), else the nearest."""
    row = [""] * (len(columns) + 1)
    for i, s in enumerate(segs):
        overlaps = [min(s.x1, c[1]) - max(s.x0, c[0]) for c in columns]
        if spanning:  # a year centred over right-aligned amounts is the column's, not a label
            label = s.x0 < label_end and max(overlaps) <= 0 and not _YEAR.match(s.text)
        else:  # an amount over a column is no label, though it starts left of the column
            label = (i == 0 and s.x0 < label_end and not (max(overlaps) > 0 and is_amount(s.text))
                     ) or s.x1 <= label_end
        if label:
            j = 0
        elif max(overlaps) > 0:
            j = 1 + (next(k for k, o in enumerate(overlaps) if o > 0) if spanning
                     else overlaps.index(max(overlaps)))
        else:
            j = 1 + min(range(len(columns)),
                        key=lambda k: abs(s.center - (columns[k][0] + columns[k][1]) / 2))
        row[j] = f"{row[j]} {s.text}".strip()
    return row
