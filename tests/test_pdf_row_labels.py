"""Row labels of printed statements: indentation kept as levels and read as parent and
child, on the cut Apple 10-K of tests/data/filings/pdf and on small tables."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from pipeline.rag.answers.filings.printed.statement_rows import (
    StatementTable,
    statement_rows,
    statement_tables,
)
from pipeline.rag.answers.tables.column_periods import ColumnPeriod
from pipeline.rag.answers.tables.row_items import per_share_row
from retriever_trt.documents import load_document
from retriever_trt.documents.model import TableBlock
from retriever_trt.documents.pdf.pdf_row_labels import indent_levels
from retriever_trt.documents.pdf.pdf_statements import StatementKind
from retriever_trt.documents.tables import parse_table
from retriever_trt.indexing.chunking import chunk_document
from tests.paths import FILINGS

CHUNK_TOKENS = 120
APPLE = FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf"


@pytest.fixture(scope="module")
def apple() -> dict[StatementKind, StatementTable]:
    doc = load_document(APPLE, APPLE.name)
    chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
    return {st.kind: st for st in statement_tables(chunks, doc.metadata)}


def _parents(st: StatementTable) -> list[tuple[str, str]]:
    t = st.table
    return [(t.row_labels[i], t.parents[i]) for i in t.body()]


def test_the_reader_keeps_each_rows_indentation() -> None:
    doc = load_document(APPLE, APPLE.name)
    tables = [b for b in doc.blocks if isinstance(b, TableBlock) and "OPERATIONS" in b.caption]
    assert tables
    levels, rows = tables[0].levels, tables[0].rows
    assert levels is not None and len(levels) == len(rows)
    level = {row[0]: n for row, n in zip(rows, levels, strict=True)}
    assert level["Net sales:"] < level["Services"] < level["Total net sales"]


def test_an_income_statements_blocks_end_at_their_totals(apple: dict) -> None:
    """"Products" is a child of "Net sales" and of "Cost of sales"; "Total cost of sales"
    closes its block, so "Gross margin" and "Operating income" belong to no heading."""
    parents = _parents(apple[StatementKind.INCOME])
    assert ("Products", "Net sales") in parents and ("Products", "Cost of sales") in parents
    assert ("Total cost of sales", "Cost of sales") in parents
    assert ("Gross margin", "") in parents and ("Operating income", "") in parents
    assert ("Diluted", "Earnings per share") in parents
    assert ("Diluted", "Shares used in computing earnings per share") in parents


def test_a_balance_sheets_label_under_two_headings(apple: dict) -> None:
    parents = _parents(apple[StatementKind.BALANCE])
    assert ("Marketable securities", "Current assets") in parents
    assert ("Marketable securities", "Non-current assets") in parents
    assert ("Total assets", "") in parents and ("Total liabilities", "") in parents


def test_a_total_set_left_of_a_block_is_outside_it(apple: dict) -> None:
    """Apple's statement of equity closes with its total at the headings' indent: it is no
    part of the last component ("Accumulated other comprehensive income/(loss)")."""
    parents = dict(_parents(apple[StatementKind.EQUITY]))
    assert parents["Total shareholders’ equity, ending balances"] == ""


def test_per_share_figures_are_in_dollars_and_share_counts_in_the_tables_scale(apple: dict) -> None:
    """"(In millions, except number of shares, which are reflected in thousands, and
    per-share amounts)": diluted EPS is $6.08; the diluted share count stays scaled."""
    rows = statement_rows(apple[StatementKind.INCOME])
    eps = {r.value for r in rows if r.label == "Diluted" and r.section == "Earnings per share"}
    assert Decimal("6.08") in eps
    counts = {r.scale for r in rows if r.label == "Diluted" and r.section.startswith("Shares")}
    assert counts and 0 not in counts


@pytest.mark.parametrize(("label", "section", "per_share"), [
    ("Diluted", "Earnings per share:", True),
    ("Dividends declared per share", "", True),
    ("Diluted", "Shares used in computing earnings per share:", False),
    ("Cash dividends declared and paid ($0.016 per common share)", "", False),
    ("Dividends (per share — $1.94, $1.84 and $1.76 in 2024, 2023 and 2022)", "", False),
    ("Common stock, par value $0.20 per share, and additional paid-in capital", "", False),
])
def test_per_share_rows(label: str, section: str, per_share: bool) -> None:
    assert per_share_row(label, section) is per_share


def test_indent_levels_group_near_positions() -> None:
    assert indent_levels([35.5, 43.0, 42.6, 52.9, None, 35.2, 71.2]) == [0, 1, 1, 2, 0, 0, 3]


def test_parents_by_indentation() -> None:
    """A heading whose rows are not indented keeps them; a total naming it is its last row;
    a row set left of an indented block ends it."""
    rows = [["", "2024"], ["Current assets:", ""], ["Cash", "1"], ["Total current assets", "1"],
            ["Goodwill", "2"], ["Revenues:", ""], ["Products", "3"], ["Net income", "4"]]
    levels = [0, 0, 0, 0, 0, 0, 1, 0]
    table = parse_table(rows, levels=levels)
    assert table.parents[1:] == ["", "Current assets", "Current assets", "", "", "Revenues", ""]
    assert table.levels == levels
    # Without levels (an HTML table), a heading's section runs to the next heading.
    assert parse_table(rows).parents[4] == "Current assets"


def _statement(rows: list[list[str]], period: ColumnPeriod, ends: tuple[date, ...] = ()
               ) -> StatementTable:
    table = parse_table([["", "2025"], *rows], ["(In millions, except per share data)"])
    return StatementTable(StatementKind.INCOME, 0, table, [None, period], "t#table0/0", "", 1,
                          ends)


def test_a_footnote_mark_does_not_hide_a_per_share_row() -> None:
    """Coca-Cola's "Basic Net Income Per Share1": $2.47, not 2.47 million."""
    st = _statement([["Net Operating Revenues", "47,061"], ["Basic Net Income Per Share1", "$ 2.47"]],
                    ColumnPeriod(date(2024, 12, 31), 12))
    values = {r.label: r.value for r in statement_rows(st)}
    assert values == {"Net Operating Revenues": 47061 * Decimal(10) ** 6,
                      "Basic Net Income Per Share": Decimal("2.47")}


def test_an_opening_balance_dates_to_a_period_end_the_filing_prints() -> None:
    """Six months to July 27, 2025 began after January 26, 2025 (NVIDIA's year end, its
    balance sheet's other column), not on the calendar count's January 27."""
    six_months = ColumnPeriod(date(2025, 7, 27), 6)
    rows = [["Cash and cash equivalents at beginning of period", "8,589"]]
    [alone] = statement_rows(_statement(rows, six_months))
    [known] = statement_rows(_statement(rows, six_months, (date(2025, 1, 26), date(2025, 7, 27))))
    assert (alone.period.end, known.period.end) == (date(2025, 1, 27), date(2025, 1, 26))
    assert known.period.months is None


def test_rows_at_the_periods_first_and_last_days_are_its_balances() -> None:
    """IBM's cash flows: "... at January 1" opens the six months to June 30, "... at June
    30" closes them; a row of another day stays a flow."""
    rows = [["Cash, cash equivalents and restricted cash at January 1", "14,160"],
            ["Cash, cash equivalents and restricted cash at June 30", "12,026"],
            ["Payments at March 31", "5"]]
    periods = [(r.period.end, r.period.months) for r in
               statement_rows(_statement(rows, ColumnPeriod(date(2025, 6, 30), 6)))]
    assert periods == [(date(2024, 12, 31), None), (date(2025, 6, 30), None),
                       (date(2025, 6, 30), 6)]
