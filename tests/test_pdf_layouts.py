"""Statement layouts of real 10-Ks that the PDF reader once lost, printed here by Chromium:
a title alone at the foot of the page before its table (Boeing), the dates over the columns
set two line pitches above the first row (NVIDIA), and a label wrapped over four lines in a
balance sheet's equity (Meta, Netflix)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from pipeline.rag.answers.filings.printed.statement_rows import StatementRow, statement_rows, statement_tables
from retriever_trt.documents import load_document
from retriever_trt.documents.pdf.pdf_statements import StatementKind
from retriever_trt.indexing.chunking import chunk_document
from tests.test_pdf_loader import COVER, _print_pdf

CHUNK_TOKENS = 120
MILLION = Decimal(10) ** 6
# Four lines of label at this page width, the amounts on its last.
COMMON_STOCK = ("Common stock, $0.000006 par value; 5,000 million Class A shares authorized, "
                "2,190 million and 2,211 million shares issued and outstanding, as of December 31, "
                "2024 and 2023, respectively; 4,141 million Class B shares authorized, 344 million "
                "and 350 million shares issued and outstanding, as of December 31, 2024 and 2023")
BALANCE = [("Cash", "$ 700", "$ 600"), ("Total assets", "$ 1,000", "$ 900"),
           ("Total liabilities", "400", "380"), ("Commitments and contingencies", "", ""),
           ("Stockholders’ equity:", "", ""), (COMMON_STOCK, "—", "—"),
           ("Additional paid-in capital", "450", "400"), ("Retained earnings", "150", "120"),
           ("Total stockholders’ equity", "600", "520"),
           ("Total liabilities and stockholders’ equity", "$ 1,000", "$ 900")]
# Dates on one line, set about 1.8 line pitches above the first row.
DATES = 'class="c" style="white-space:nowrap; padding-bottom:24pt"'
INCOME = [("Revenue", "$ 46,743", "$ 30,040"), ("Net income", "$ 26,422", "$ 16,599")]


def _rows(rows: list[tuple[str, str, str]]) -> str:
    return "".join(f'<tr><td style="width:70%">{a}</td><td class="r">{b}</td>'
                   f'<td class="r">{c}</td></tr>' for a, b, c in rows)


@pytest.fixture(scope="module")
def statements(tmp_path_factory: pytest.TempPathFactory) -> list[StatementRow]:
    """Page 2 ends with the balance sheet's title; page 3 has its scale note and table;
    page 4 an income statement whose dates stand apart over its first row."""
    balance = ('<p class="c break" style="margin-top:8in"><b>Consolidated Statements of '
               'Financial Position</b></p>'
               '<p class="c break">(Dollars in millions)</p><table style="width:100%">'
               '<tr><td>December 31,</td><td class="c">2024</td><td class="c">2023</td></tr>'
               f'{_rows(BALANCE)}</table>')
    income = ('<p class="c break"><b>Consolidated Statements of Income</b></p>'
              '<p class="c">(In millions)</p><table style="width:100%">'
              '<tr><td></td><td colspan="2" class="c">Three Months Ended</td></tr>'
              f'<tr><td></td><td {DATES}>Jul 27, 2025</td><td {DATES}>Jul 28, 2024</td></tr>'
              f'{_rows(INCOME)}</table>')
    html = COVER.replace("September 28, 2024", "December 31, 2024") + balance + income
    path = _print_pdf(html, tmp_path_factory.mktemp("layouts") / "acme-10-k-2025-02-01.pdf")
    doc = load_document(Path(path), path.name)
    chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
    return [r for st in statement_tables(chunks, doc.metadata) for r in statement_rows(st)]


def _value(rows: list[StatementRow], kind: StatementKind, label: str, end: date) -> Decimal:
    [value] = [r.value for r in rows if r.kind is kind and r.label == label and r.period.end == end]
    return value


def test_a_title_ending_the_page_before_names_the_table(statements: list[StatementRow]) -> None:
    assert _value(statements, StatementKind.BALANCE, "Total assets", date(2024, 12, 31)) == \
        1000 * MILLION


def test_a_long_wrapped_label_does_not_cut_the_balance_sheet(
        statements: list[StatementRow]) -> None:
    """The rows after the four-line label stay in the statement, with its header."""
    assert _value(statements, StatementKind.BALANCE, "Retained earnings", date(2023, 12, 31)) == \
        120 * MILLION
    [label] = {r.label for r in statements if r.label.startswith("Common stock")}
    assert label.endswith("as of December 31, 2024 and 2023")


def test_dates_standing_apart_over_the_first_row_are_its_header(
        statements: list[StatementRow]) -> None:
    income = {(r.label, r.period.end, r.period.months): r.value for r in statements
              if r.kind is StatementKind.INCOME}
    assert income[("Net income", date(2025, 7, 27), 3)] == 26422 * MILLION
