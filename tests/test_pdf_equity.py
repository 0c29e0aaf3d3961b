"""Statements of equity printed with the components as columns and the periods as rows,
read from the cut real filings of tests/data/filings/pdf and checked against the facts
their inline-XBRL twins tag (`StatementEquityComponentsAxis`)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from pipeline.rag.answers.filings.printed.equity_rows import equity_cells
from pipeline.rag.answers.filings.printed.statement_checks import failed_statements
from pipeline.rag.answers.filings.printed.statement_rows import StatementRow, statement_rows, statement_tables
from pipeline.rag.answers.tables.table_cells import figure_cells
from retriever_trt.documents import load_document
from retriever_trt.documents.pdf.pdf_row_labels import join_wrapped
from retriever_trt.documents.pdf.pdf_statements import StatementKind, statement_kind
from retriever_trt.documents.tables import parse_table
from retriever_trt.indexing.chunking import chunk_document
from tests.paths import FILINGS
from tests.test_pdf_loader import COVER, _print_pdf

CHUNK_TOKENS = 120
EQUITY_AXIS = "us-gaap:StatementEquityComponentsAxis"
MILLION = Decimal(10) ** 6
# Each member of the Tesla 10-Q's statement of equity and the words its column prints.
TSLA_COLUMNS = {"us-gaap:AdditionalPaidInCapitalMember": "Additional Paid-In Capital",
                "us-gaap:RetainedEarningsMember": "Retained Earnings",
                "us-gaap:AccumulatedOtherComprehensiveIncomeMember": "Accumulated Other",
                "us-gaap:ParentMember": "Total Stockholders",
                "us-gaap:NoncontrollingInterestMember": "Interests in Subsidiaries"}


def _equity(path: Path) -> list[StatementRow]:
    doc = load_document(path, path.name)
    chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
    return [r for st in statement_tables(chunks, doc.metadata) if st.kind is StatementKind.EQUITY
            for r in statement_rows(st)]


@pytest.fixture(scope="module")
def tesla() -> list[StatementRow]:
    return _equity(FILINGS / "pdf" / "tsla-10-q-2025-07-24.pdf")


def test_a_statement_of_redeemable_interests_and_equity_is_located() -> None:
    title = "Consolidated Statements of Redeemable Noncontrolling Interests and Equity"
    assert statement_kind(title) is StatementKind.EQUITY
    assert statement_kind("Consolidated Statements of Operations and Equity") is not \
        StatementKind.EQUITY


def test_activity_rows_are_flows_between_the_balance_rows(tesla: list[StatementRow]) -> None:
    """The quarter's table and the six months' table each give net income to retained
    earnings over their own span; the balance rows are balances at their dates."""
    income = {(r.period.months, r.value) for r in tesla if r.label == "Net income"
              and r.component == "Retained Earnings" and r.period.end == date(2025, 6, 30)}
    assert income == {(3, 1172 * MILLION), (6, 1581 * MILLION)}
    opening = [r for r in tesla if r.label == "Balance as of March 31, 2025"
               and r.component == "Total Equity"]
    assert [(r.period.end, r.period.months, r.value) for r in opening] == [
        (date(2025, 3, 31), None, 75356 * MILLION)]


def test_the_common_stock_amount_column_takes_the_label_over_it(tesla: list[StatementRow]) -> None:
    """"Common Stock" is centred over "Shares | Amount": the amount column is common stock."""
    closing = {r.component: r.value for r in tesla if r.label == "Balance as of June 30, 2025"
               and r.period.months is None}
    assert closing["Common Stock"] == 3 * MILLION
    assert closing["Additional Paid-In Capital"] == 40363 * MILLION


def test_every_tagged_component_figure_is_read_in_its_column(tesla: list[StatementRow]) -> None:
    """Each USD fact the HTML twin tags with one of the members above is a PDF record of
    that member's column, with the fact's period and value."""
    html = FILINGS / "tsla-10-q-2025-07-24.html"
    doc = load_document(html, html.name)
    read = {(r.period.end, r.period.months or 0, abs(r.value), r.component) for r in tesla}
    checked = 0
    for f in doc.facts:
        if f.unit != "USD" or len(f.dimensions) != 1 or f.dimensions[0][0] != EQUITY_AXIS or \
                f.dimensions[0][1] not in TSLA_COLUMNS:
            continue
        words = TSLA_COLUMNS[f.dimensions[0][1]]
        assert any(key[:3] == (f.end, f.months, abs(f.value)) and words in key[3]
                   for key in read), f
        checked += 1
    assert checked >= 40


def test_a_balance_at_the_first_of_a_month_is_the_close_of_the_day_before() -> None:
    table = parse_table([["", "Retained Earnings", "Total"],
                         ["Balance at January 1, 2024", "100", "150"],
                         ["Net income", "20", "20"],
                         ["Balance at June 30, 2024", "120", "170"]])
    cells = equity_cells(table, figure_cells(table))
    assert cells is not None
    periods = {(c.row, c.component): (c.period.end, c.period.months) for c in cells}
    assert periods[(1, "Retained Earnings")] == (date(2023, 12, 31), None)
    assert periods[(2, "Total")] == (date(2024, 6, 30), 6)


def test_a_52_53_week_years_first_day_stays() -> None:
    """Adobe's years end on the Friday nearest November 30: "December 1" is a year's end."""
    table = parse_table([["", "Retained Earnings"], ["Balances at December 1, 2023", "100"],
                         ["Net income", "20"], ["Balances at November 29, 2024", "120"]])
    cells = equity_cells(table, figure_cells(table))
    assert cells is not None
    assert {c.period.end for c in cells} == {date(2023, 12, 1), date(2024, 11, 29)}


def test_a_table_with_one_balance_row_is_not_read_by_its_rows() -> None:
    table = parse_table([["", "2024", "2023"], ["Balance at December 31, 2023", "100", "90"],
                         ["Net income", "20", "10"]])
    assert equity_cells(table, figure_cells(table)) is None


def test_a_balance_date_wrapped_under_its_amounts_is_joined() -> None:
    rows, indents = join_wrapped([["Balance as of", "$ 568", "3,100"], ["December 31, 2021", "", ""],
                                  ["Net income", "12", "—"]], [35.0, 35.0, 53.0])
    assert indents == [35.0, 53.0]
    assert rows == [["Balance as of December 31, 2021", "$ 568", "3,100"],
                    ["Net income", "12", "—"]]


def test_opening_and_closing_rows_are_balances_at_the_periods_ends() -> None:
    """Apple prints its equity with the years as columns: a "beginning balances" row of the
    fiscal 2024 column is the balance at the close of fiscal 2023 (September 30, 2023, a
    column's end, not the calendar count's September 28), an "ending balances" row the
    balance at the column's own end."""
    rows = _equity(FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf")
    total = {(r.label, r.period.end, r.period.months): r.value for r in rows
             if r.label.startswith("Total shareholders")}
    assert total[("Total shareholders’ equity, beginning balances", date(2023, 9, 30), None)] \
        == 62146 * MILLION
    assert total[("Total shareholders’ equity, ending balances", date(2024, 9, 28), None)] \
        == 56950 * MILLION
    opening = {r.period.end: r.value for r in rows if r.label == "Beginning balances"
               and r.section.startswith("Retained earnings")}
    assert opening[date(2023, 9, 30)] == -214 * MILLION


def test_a_dash_is_a_zero_figure(tesla: list[StatementRow]) -> None:
    """Stock-based compensation adds nothing to retained earnings: its "—" is a 0 record."""
    [cell] = [r for r in tesla if r.label == "Stock-based compensation"
              and r.component == "Retained Earnings" and r.period.months == 3
              and r.period.end == date(2025, 6, 30)]
    assert cell.value == 0


def test_a_note_of_figures_under_a_label_is_joined_to_it() -> None:
    rows, _ = join_wrapped([["Cash dividends paid — common stock", "", ""],
                            ["($1.68 per share)", "(1,563)", "(1,563)"],
                            ["Changes in operating assets", "", ""],
                            ["(Increase) in receivables", "(12)", "(9)"]], [None] * 4)
    assert rows[0] == ["Cash dividends paid — common stock ($1.68 per share)", "(1,563)", "(1,563)"]
    assert rows[2][0] == "(Increase) in receivables"


def test_a_column_that_does_not_roll_forward_fails_the_statement(tmp_path: Path) -> None:
    """Retained earnings 100 + net income 20 printed as closing at 130: the statement of
    equity is marked, naming the column; the columns that roll forward alone pass."""
    def statement(closing: str) -> str:
        rows = [("Balance at December 31, 2023", "$ 50", "$ 100", "$ 150"),
                ("Net income", "—", "20", "20"), ("Stock-based compensation", "5", "—", "5"),
                ("Balance at December 31, 2024", "$ 55", f"$ {closing}", "$ 175")]
        body = "".join(f'<tr><td style="width:55%">{a}</td><td class="r">{b}</td>'
                       f'<td class="r">{c}</td><td class="r">{d}</td></tr>' for a, b, c, d in rows)
        return ('<p class="c break"><b>CONSOLIDATED STATEMENTS OF STOCKHOLDERS’ EQUITY</b></p>'
                '<p class="c">(In millions)</p><table style="width:100%"><tr><td></td>'
                '<td class="c">Additional Paid-in Capital</td><td class="c">Retained Earnings</td>'
                f'<td class="c">Total Equity</td></tr>{body}</table>')

    def failures(closing: str) -> list[str]:
        cover = COVER.replace("September 28, 2024", "December 31, 2024")
        path = _print_pdf(cover + statement(closing), tmp_path / f"acme-10-k-2025-02-{closing}.pdf")
        doc = load_document(path, path.name)
        chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
        return [f.reason for f in failed_statements(statement_tables(chunks, doc.metadata)).values()]

    assert failures("120") == []
    [reason] = failures("130")
    assert reason.startswith("'Retained Earnings': Balance at December 31, 2023")
