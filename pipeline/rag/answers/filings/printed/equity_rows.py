"""A statement of equity printed with its components as columns, read row by row.

Most statements of equity are transposed against the other statements: the columns are
the components of equity ("Common Stock Shares | Amount", "Additional Paid-in Capital",
"Retained Earnings", "Total Shareholders' Equity"), and the periods are rows: a balance row
at a date ("Balances as of Jan 29, 2023"), the year's or quarter's activity ("Net income",
"Stock-based compensation"), the next balance row; a 10-K stacks three years in one table.
The header's columns carry no period, so `column_periods` finds none, and the periods come
from the balance rows instead: a balance row is the balance at its date, an activity row
is a flow over the span from the balance above it to the balance below it.

Each column's component is the text of its own header cells (years and scale notes left
out); a column headed only "Amount" or "Shares" under a label centred over two columns
("Common Stock" over "Shares | Amount") takes that label from the column on its left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from pipeline.rag.answers.tables.column_periods import ColumnPeriod, month_day
from retriever_trt.documents.tables import Cell, Table
from retriever_trt.documents.years import YEAR, years_in

# A row stating the balances at a date: "Balance as of March 31, 2025", "Balances, Jan 26,
# 2025", "Equity - April 1, 2025".
_BALANCE = re.compile(r"\bbalances?\b|^(?:total\s+)?equity\b", re.I)
# Fewest dated balance rows that make a table one with the periods as rows.
MIN_BALANCE_ROWS = 2
# Average days a month, to count the months between two balance dates.
DAYS_PER_MONTH = 30.44
# Header words that name a part of a component's columns, not a component.
_PART_WORDS = frozenset({"shares", "amount", "amounts", "par", "value", "number", "of", "at"})
_SCALE_NOTE = re.compile(r"\(?\s*in (?:millions|thousands|billions)[^)]*\)?", re.I)
_WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*")


@dataclass(frozen=True)
class EquityCell:
    """Where a figure of a components-as-columns table belongs: its cell, period, component."""

    row: int
    column: int
    period: ColumnPeriod
    component: str


def _balance_date(label: str) -> date | None:
    """The date a balance row states ("Balance as of March 31, 2025"), else None."""
    if not _BALANCE.search(label):
        return None
    md, years = month_day(label), years_in(label)
    if md is None or len(years) != 1:
        return None
    try:
        return date(years[0], *md)
    except ValueError:
        return None


def _closing_dates(dates: dict[int, date]) -> dict[int, date]:
    """The balance rows' dates as tagged: a balance "at January 1" of a table that counts
    in calendar months (another of its dates a month's last day) is the one at the close of
    December 31; a 52/53-week year's first day stays ("Balances at December 1, 2023")."""
    calendar_months = any((d + timedelta(days=1)).day == 1 for d in dates.values())
    if not calendar_months:
        return dates
    return {i: d - timedelta(days=1) if d.day == 1 else d for i, d in dates.items()}


def components(table: Table, header_end: int) -> list[str]:
    """Each column's component name, from the header rows above `header_end` (see doc)."""
    width = len(table.rows[0]) if table.rows else 0
    own = []
    for j in range(width):
        text = " ".join(table.rows[r][j] for r in range(header_end) if table.rows[r][j])
        text = YEAR.sub(" ", _SCALE_NOTE.sub(" ", text))
        own.append(" ".join(text.split()) if j else "")
    out = list(own)
    for j in range(2, width):
        words = [w.lower() for w in _WORDS.findall(own[j])]
        if all(w in _PART_WORDS for w in words):
            left = [w for w in _WORDS.findall(own[j - 1]) if w.lower() not in _PART_WORDS]
            out[j] = " ".join([*left, *_WORDS.findall(own[j])])
    return out


def equity_cells(table: Table, figures: dict[tuple[int, int], Cell]) -> list[EquityCell] | None:
    """The table's figure cells (`figures`, by row and column) with periods from its balance
    rows and components from its columns; None when it is not laid out so (fewer than two
    dated balance rows)."""
    body = sorted({i for i, _ in figures})
    dates = _closing_dates({i: d for i in body
                            if (d := _balance_date(table.row_labels[i])) is not None})
    if len(dates) < MIN_BALANCE_ROWS:
        return None
    names = components(table, min(body))
    marks = sorted(dates)
    periods = {i: p for i in body if (p := _row_period(i, marks, dates)) is not None}
    return [EquityCell(i, j, periods[i], names[j]) for i, j in sorted(figures) if i in periods]


def _row_period(i: int, marks: list[int], dates: dict[int, date]) -> ColumnPeriod | None:
    """A balance row's date, or an activity row's span between the balances around it."""
    if i in dates:
        return ColumnPeriod(dates[i], None)
    before = [k for k in marks if k < i]
    after = [k for k in marks if k > i]
    if not before or not after:
        return None
    start, end = dates[before[-1]], dates[after[0]]
    months = round((end - start).days / DAYS_PER_MONTH)
    return ColumnPeriod(end, months) if months > 0 else None
