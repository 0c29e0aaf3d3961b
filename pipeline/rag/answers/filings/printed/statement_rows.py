"""A PDF filing's primary statements read as rows of fact-like records.

Each table the statement finder (`retriever_trt/documents/pdf/pdf_statements.py`) names gives,
for each body row and each column whose period its header rows show (`column_periods.py`),
one record: the row's label (wrapped lines already joined by the PDF reader, footnote
marks dropped), its section ("Current assets:"), the period, the value as printed times the
table's scale ("(1,234)" negative, "—" zero), the page and the cell. A statement of equity
printed with its components as columns has its periods in its rows (`equity_rows.py`):
its records carry the column's component too. The parts of one
statement (a balance sheet over two pages, "(continued)") share a statement number, which
the self-checks (`statement_checks.py`) read them by.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

from pipeline.rag.answers.filings.printed.equity_rows import equity_cells
from pipeline.rag.answers.tables.column_periods import (
    ColumnPeriod,
    column_periods,
    header_rows,
    month_day,
)
from pipeline.rag.answers.tables.row_items import per_share_row
from pipeline.rag.answers.tables.table_cells import figure, figure_cells
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.documents.pdf.pdf_statements import Part, StatementKind, group_parts, statement_kind
from retriever_trt.documents.tables import Table, parse_table
from retriever_trt.documents.years import years_in
from retriever_trt.store.document_store import Chunk

SCALE_POWER = {"": 0, "thousand": 3, "million": 6, "billion": 9}
# A row that states the balance at the end of its column's period, or at its start.
CLOSING = re.compile(r"\bend(?:ing)? (?:of (?:the )?(?:period|year|quarter)|balances?)\b|"
                     r"\bbalances?,? (?:at )?end\b", re.I)
_OPENING = re.compile(r"\bbeginning (?:of (?:the )?(?:period|year|quarter)|balances?)\b|"
                      r"\bbalances?,? (?:at )?(?:the )?beginning\b", re.I)
# A row "at" a day of the year: "Cash, cash equivalents and restricted cash at January 1".
_AT_DAY = re.compile(r"\bat\s+[A-Za-z]{3,9}\.?\s+\d{1,2}\s*$")
# A year of 52 or 53 weeks ends up to this many days from a calendar-month count.
FISCAL_WEEK_DAYS = 6
# A footnote mark ending a label: "Net income (1)", "Revenues(a)", "Total assets²", "Cash*".
_FOOTNOTE = re.compile(r"(?:\s*\((?:\d|[a-z])\)|[¹²³⁴⁵⁶⁷⁸⁹⁰*†‡]+|(?<=[a-z])\d)$")


@dataclass(frozen=True)
class StatementTable:
    """One table of a statement: its kind, statement number, the parsed table, its
    columns' periods and where it is (chunk id, caption, page)."""

    kind: StatementKind
    statement: int
    table: Table
    periods: list[ColumnPeriod | None]
    chunk_id: str
    caption: str
    page: int | None
    filing_ends: tuple[date, ...] = ()  # every statement column's end in the filing


@dataclass(frozen=True)
class StatementRow:
    """One printed figure of a statement: a fact-like record."""

    kind: StatementKind
    statement: int
    label: str
    section: str
    period: ColumnPeriod       # the column's end, length, and whether it shows balances
    value: Decimal             # in units (the scale applied), signed as printed
    scale: int                 # the power of ten the page's figure is in
    page: int | None
    cell: tuple[str, int, int]  # chunk id, row, column
    component: str = ""        # a statement of equity's column ("Retained Earnings"), else ""


def clean_label(label: str) -> str:
    """A row label without its footnote mark and trailing colon."""
    label = " ".join(label.split()).rstrip(":")
    while (stripped := _FOOTNOTE.sub("", label).rstrip()) != label:
        label = stripped
    return label


def whole_tables(chunks: Iterable[Chunk]) -> Iterator[Chunk]:
    """The first chunk of each table: a table's later pieces carry the same whole table."""
    seen: set[str] = set()
    for chunk in chunks:
        key = chunk.sources.get("table") if chunk.table else None
        if key is not None and key not in seen:
            seen.add(key)
            yield chunk


def statement_tables(chunks: Iterable[Chunk], metadata: DocumentMetadata | None
                     ) -> list[StatementTable]:
    """The filing's statement tables in page order, each with its statement number."""
    tables: list[tuple[Chunk, Table, StatementKind | None]] = []
    for chunk in whole_tables(chunks):
        caption = chunk.sources.get("caption", "")
        table = parse_table(chunk.table, [caption], _levels(chunk))
        kind = statement_kind(caption, table.row_labels[table.n_header:])
        if kind is None and not caption:
            # A title centred over the amounts was read as a header row, leaving no caption.
            kind = statement_kind(" ".join(" ".join(r) for r in table.rows[:table.n_header]))
        tables.append((chunk, table, kind))
    pages = [_page(c) for c, _, _ in tables]
    numbers = group_parts([Part(kind, page) for (_, _, kind), page in zip(tables, pages,
                                                                          strict=True)])
    out = []
    for (chunk, table, kind), number, page in zip(tables, numbers, pages, strict=True):
        if kind is None or number is None:
            continue
        caption = chunk.sources.get("caption", "")
        out.append(StatementTable(kind, number, table, column_periods(table, caption, metadata),
                                  chunk.chunk_id, caption, page))
    # An opening balance dates to a period end another statement prints (the balance
    # sheet's comparative column: NVIDIA's January 26, 2025, a 52-week year's end), not
    # to one a bare "Fiscal 2023" column is counted to.
    ends = tuple(sorted({p.end for st in out for p in st.periods
                         if p is not None and not p.fiscal_year}))
    return [replace(st, filing_ends=ends) for st in out]


def _levels(chunk: Chunk) -> list[int] | None:
    """The indentation level of each row's label, where the reader kept them (a PDF's)."""
    levels = chunk.sources.get("levels", "").split()
    return [int(x) for x in levels] if levels and all(x.isdigit() for x in levels) else None


def _page(chunk: Chunk) -> int | None:
    page = chunk.sources.get("page", "")
    return int(page) if page.isdigit() else None


def statement_rows(st: StatementTable) -> list[StatementRow]:
    """The table's figures as records ("—" as zero; cells of undated columns and percents
    left out)."""
    table = st.table
    power = SCALE_POWER.get(table.scale, 0)
    cells = figure_cells(table)
    if st.kind is StatementKind.EQUITY and (by_rows := equity_cells(table, cells)) is not None:
        # No sections: the components are the columns, and a label-only row between
        # activity rows is the tail of a wrapped label more often than a heading.
        out = []
        for e in by_rows:
            p = _row_power(table.row_labels[e.row], "", power)
            out.append(StatementRow(st.kind, st.statement, clean_label(table.row_labels[e.row]),
                                    "", e.period, figure(cells[(e.row, e.column)]).scaleb(p), p,
                                    st.page, (st.chunk_id, e.row, e.column), e.component))
        return out
    ends = sorted({p.end for p in st.periods if p is not None} | set(st.filing_ends))
    first = header_rows(table)
    out = []
    for (i, j), c in sorted(cells.items()):
        period = st.periods[j] if j < len(st.periods) else None
        if period is None or i < first:
            continue
        p = _row_power(table.row_labels[i], table.parents[i], power)
        out.append(StatementRow(st.kind, st.statement, clean_label(table.row_labels[i]),
                                table.parents[i], _row_period(table.row_labels[i], period, ends),
                                figure(c).scaleb(p), p, st.page, (st.chunk_id, i, j)))
    return out


def _row_power(label: str, parent: str, power: int) -> int:
    """The power of ten a row's figures are in: the table's, but dollars for a per-share
    row ("(In millions, except per-share amounts)"; no statement prints those scaled)."""
    return 0 if per_share_row(clean_label(label), parent) else power


def _row_period(label: str, period: ColumnPeriod, ends: list[date]) -> ColumnPeriod:
    """The period a row's figure is for: a closing row ("Ending balances", "Cash, end of
    period") is the balance at its column's end, an opening one the balance at the close of
    the day before the column's first day, or of a period end of the filing's statements
    within six days of it (a 52/53-week year's). A column naming only a fiscal year dates
    them as nearly as its end. A row "at" a month and day without a year ("Cash ... at
    January 1", "... at June 30") is the opening or closing one where that day begins or
    ends the column's period."""
    first = period.first_day()
    day = month_day(label) if _AT_DAY.search(label) and not years_in(label) else None
    if CLOSING.search(label) or (day is not None and day == (period.end.month, period.end.day)):
        return ColumnPeriod(period.end, None, period.fiscal_year)
    opens = first is not None and day == (first.month, first.day)
    if first is None or not (_OPENING.search(label) or opens):
        return period
    opening = first - timedelta(days=1)
    near = [e for e in ends if abs((e - opening).days) <= FISCAL_WEEK_DAYS]
    return ColumnPeriod(min(near, key=lambda e: abs((e - opening).days)) if near else opening,
                        None, period.fiscal_year)
