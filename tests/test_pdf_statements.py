"""Statements located in a PDF filing, read as records and self-checked: statements
Chromium prints here (a balance sheet over two pages with "(continued)", a cash flow
statement whose sections do not add up), and the cut real filings of tests/data/filings/pdf."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.filings.printed.statement_checks import failed_statements
from pipeline.rag.answers.filings.printed.statement_rows import clean_label, statement_rows, statement_tables
from pipeline.rag.answers.filings.printed.table_facts import facts_from_tables
from pipeline.rag.answers.short_answer import ShortAnswer
from pipeline.rag.answers.tables.column_periods import month_day
from retriever_trt.documents import load_document
from retriever_trt.documents.pdf.pdf_statements import StatementKind, statement_kind
from retriever_trt.indexing.chunking import chunk_document
from retriever_trt.indexing.ingest import ingest
from retriever_trt.store.document_store import DocumentInfo
from tests.paths import FILINGS
from tests.test_pdf_loader import COVER, _print_pdf

CHUNK_TOKENS = 120
HEADER = ('<tr><td></td><td colspan="2" class="c">December 31,</td></tr>'
          '<tr><td></td><td class="c">2024</td><td class="c">2023</td></tr>')
ASSETS = [("Current assets:", "", ""), ("Cash and cash equivalents", "$ 1,200", "$ 1,000"),
          ("Accounts receivable, net (1)", "800", "700"), ("Inventories", "500", "450"),
          ("Total current assets", "2,500", "2,150"),
          ("Property and equipment, net", "1,500", "1,350"), ("Total assets", "$ 4,000", "$ 3,500")]
LIABILITIES = [("Current liabilities:", "", ""), ("Accounts payable", "$ 600", "$ 550"),
               ("Accrued expenses", "400", "350"), ("Total current liabilities", "1,000", "900"),
               ("Long-term debt", "1,000", "1,000"), ("Total liabilities", "2,000", "1,900"),
               ("Total stockholders’ equity", "2,000", "1,600"),
               ("Total liabilities and stockholders’ equity", "$ 4,000", "$ 3,500")]
# Operating + investing + financing is 300, not the 250 printed as the change in cash.
CASH_FLOWS = [("Net income", "$ 900", "$ 800"),
              ("Net cash provided by operating activities", "1,100", "950"),
              ("Capital expenditures", "(400)", "(300)"),
              ("Net cash used in investing activities", "(400)", "(300)"),
              ("Dividends paid", "(400)", "(350)"),
              ("Net cash used in financing activities", "(400)", "(350)"),
              ("Net increase in cash and cash equivalents", "250", "300")]


def _table(title: str, rows: list[tuple[str, str, str]], year_header: str = HEADER) -> str:
    body = "".join(f'<tr><td style="width:60%">{label}</td><td class="r">{a}</td>'
                   f'<td class="r">{b}</td></tr>' for label, a, b in rows)
    return (f'<p class="c break"><b>{title}</b></p><p class="c">(In millions)</p>'
            f'<table style="width:100%">{year_header}{body}</table>')


# A calendar-year 10-K: its cover, and the header over its statements' two year columns.
DECEMBER_COVER = COVER.replace("September 28, 2024", "December 31, 2024")
YEARS_HEADER = ('<tr><td></td><td colspan="2" class="c">Years Ended December 31,</td></tr>'
                '<tr><td></td><td class="c">2024</td><td class="c">2023</td></tr>')


def _asker(folder: Path) -> Callable[[str], ShortAnswer]:
    """A question answered by the filing answer rules over the filings in `folder`."""
    answerer = FilingAnswerer(ingest(folder)[0])

    def ask(question: str) -> ShortAnswer:
        query = answerer.parse(question)
        return answerer.answer(query, answerer.scope(query, None))
    return ask


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 10-K: the cover; the balance sheet's assets on page 2 and its liabilities, titled
    "(continued)", on page 3; a cash flow statement that does not add up on page 4."""
    html = DECEMBER_COVER + \
        _table("CONSOLIDATED BALANCE SHEETS", ASSETS) + \
        _table("CONSOLIDATED BALANCE SHEETS (continued)", LIABILITIES) + \
        _table("CONSOLIDATED STATEMENTS OF CASH FLOWS", CASH_FLOWS, YEARS_HEADER)
    return _print_pdf(html, tmp_path_factory.mktemp("statements") / "acme-10-k-2025-02-01.pdf")


def _read(path: Path):
    doc = load_document(path, path.name)
    chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
    return doc, chunks


def test_a_balance_sheet_over_two_pages_is_one_statement_that_adds_up(printed: Path) -> None:
    doc, chunks = _read(printed)
    tables = statement_tables(chunks, doc.metadata)
    balance = [st for st in tables if st.kind is StatementKind.BALANCE]
    assert [st.page for st in balance] == [2, 3]
    assert len({st.statement for st in balance}) == 1
    rows = {(r.label, r.period.end): r for st in balance for r in statement_rows(st)}
    receivable = rows[("Accounts receivable, net", date(2024, 12, 31))]
    assert receivable.section == "Current assets"
    assert receivable.value == Decimal(800_000_000) and receivable.scale == 6
    assert receivable.page == 2
    assert rows[("Total liabilities and stockholders’ equity", date(2023, 12, 31))].value \
        == Decimal(3_500_000_000)
    assert all(f.kind is not StatementKind.BALANCE for f in failed_statements(tables).values())


def test_a_cash_flow_statement_that_does_not_add_up_is_marked_and_gives_no_facts(
        printed: Path) -> None:
    doc, chunks = _read(printed)
    [failure] = failed_statements(statement_tables(chunks, doc.metadata)).values()
    assert failure.kind is StatementKind.CASH_FLOWS and failure.pages == "4"
    assert "300,000,000" in failure.reason and "250,000,000" in failure.reason
    info = facts_from_tables(DocumentInfo(doc.doc_id, "Acme", doc.metadata), chunks)
    assert list(info.unread) == ["cash flow statement"]
    assert info.unread["cash flow statement"].startswith("page 4: ")
    page_of = {c.chunk_id: c.sources.get("page") for c in chunks}
    pages = {page_of[cell[0]] for cell in info.fact_cells.values()}
    assert "4" not in pages and {"2", "3"} <= pages  # the balance sheet still answers


def test_a_misread_column_fails_the_section_total(tmp_path: Path) -> None:
    """Total current assets adds up in 2023 and not in 2024: a figure was misread."""
    wrong = [(label, "2,400" if label == "Total current assets" else a, b)
             for label, a, b in ASSETS]
    path = _print_pdf(COVER + _table("CONSOLIDATED BALANCE SHEETS", wrong), tmp_path / "b.pdf")
    doc, chunks = _read(path)
    [failure] = failed_statements(statement_tables(chunks, doc.metadata)).values()
    assert failure.kind is StatementKind.BALANCE
    assert "'Total current assets' 2,400" in failure.reason


@pytest.mark.parametrize("name", ["aapl-10-k-2024-11-01.pdf", "v-10-k-2024-11-13.pdf",
                                  "jnj-10-q-2025-07-24.pdf", "tsla-10-q-2025-07-24.pdf"])
def test_the_real_filings_statements_are_located_and_add_up(name: str) -> None:
    doc, chunks = _read(FILINGS / "pdf" / name)
    tables = statement_tables(chunks, doc.metadata)
    kinds = {st.kind for st in tables}
    assert {StatementKind.INCOME, StatementKind.BALANCE, StatementKind.CASH_FLOWS} <= kinds
    assert failed_statements(tables) == {}
    assert facts_from_tables(DocumentInfo(doc.doc_id, "x", doc.metadata), chunks).unread == {}


@pytest.mark.parametrize(("caption", "labels", "kind"), [
    ("CONSOLIDATED STATEMENTS OF SHAREOWNERS’ EQUITY (In millions)", (), StatementKind.EQUITY),
    ("CONSOLIDATED STATEMENTS OF STOCKHOLDERS’ (DEFICIT) EQUITY", (), StatementKind.EQUITY),
    ("CONSOLIDATED STATEMENTS OF CHANGES IN COMMON STOCKHOLDERS’INVESTMENT", (),
     StatementKind.EQUITY),
    ("Consolidated Statements of Comprehensive Income", (), StatementKind.COMPREHENSIVE),
    ("CONSOLIDATED STATEMENTS OF OPERATIONS", (), StatementKind.INCOME),
    ("Statements of Financial Position (continued)", (), StatementKind.BALANCE),
    ("as presented in the consolidated statements of cash flows (in millions):", (), None),
    ("", ("Cash", "Total assets", "Total liabilities"), StatementKind.BALANCE),
    ("(continued)", ("Net cash provided by operating activities", "Net cash used in investing"),
     StatementKind.CASH_FLOWS),
    ("The following table shows assets by segment:", ("Total assets", "Total liabilities"), None),
])
def test_statement_titles_and_shapes(caption: str, labels: tuple[str, ...],
                                     kind: StatementKind | None) -> None:
    assert statement_kind(caption, labels) is kind


def test_labels_and_headers_as_printed() -> None:
    assert clean_label("Accounts receivable, net (1)") == "Accounts receivable, net"
    assert clean_label("Total revenues(a):") == "Total revenues"
    assert clean_label("Cost of revenue²") == "Cost of revenue"
    assert clean_label("Level 3") == "Level 3"
    assert month_day("Jan 26, 2025") == (1, 26)
    assert month_day("Sept. 28, 2024") == (9, 28)


def test_a_question_on_a_statement_that_could_not_be_read_says_so(printed: Path,
                                                                  tmp_path: Path) -> None:
    """The answer names the statement that failed its check and why, not only "no figure";
    the balance sheet, which adds up, still answers."""
    shutil.copy(printed, tmp_path / printed.name)
    ask = _asker(tmp_path)

    flows = ask("What was Acme's operating cash flow in fiscal 2024?")
    assert flows.short_answer is None
    assert "cash flow statement could not be read (page 4: " in flows.missing
    assert ask("What were Acme's total assets at December 31, 2024?").short_answer == "4000"


INCOME = [("Net sales", "$ 5,000", "$ 4,500"), ("Cost of sales", "3,000", "2,800"),
          ("Gross margin", "2,000", "1,700"), ("Operating income", "1,200", "1,000"),
          ("Net income", "$ 900", "$ 800")]
BY_PRODUCT = [("Widgets", "$ 3,500", "$ 3,100"), ("Gadgets", "1,500", "1,400"),
              ("Total net sales", "$ 5,000", "$ 4,500")]


def test_a_printed_row_no_item_names_answers_by_its_label(tmp_path: Path) -> None:
    """"Goodwill" is no vocabulary item: its balance sheet row answers; "Interest expense,
    net" says more than "interest expense" asks, so it gives no number for it."""
    header = ('<tr><td></td><td class="c">December 31, 2024</td>'
              '<td class="c">December 31, 2023</td></tr>')
    income = [*INCOME[:4], ("Interest expense, net", "150", "140"), INCOME[4]]
    assets = [("Total current assets", "2,500", "2,150"), ("Goodwill", "700", "650"),
              ("Total assets", "$ 4,000", "$ 3,500")]
    html = DECEMBER_COVER + \
        _table("CONSOLIDATED STATEMENTS OF OPERATIONS", income, YEARS_HEADER) + \
        _table("CONSOLIDATED BALANCE SHEETS", assets, header)
    _print_pdf(html, tmp_path / "acme-10-k-2025-02-01.pdf")
    ask = _asker(tmp_path)

    goodwill = ask("How much goodwill did Acme report at December 31, 2024?")
    assert goodwill.short_answer == "700" and goodwill.citations[0]["row"] == "Goodwill"
    assert ask("What was Acme's interest expense in fiscal 2024?").short_answer is None


OPERATING_BY_PRODUCT = [("Widgets", "$ 700", "$ 600"), ("Gadgets", "500", "400"),
                       ("Total operating income", "$ 1,200", "$ 1,000")]


def test_a_printed_filing_answers_a_part_from_its_row_not_its_whole(tmp_path: Path) -> None:
    """A PDF has no dimensions: "Gadgets net sales" is the Gadgets row of the table that
    names net sales (not of the operating income one, nor the income statement's total);
    the total itself is still the statement's; a part no row shows gets no number."""
    html = DECEMBER_COVER + \
        _table("CONSOLIDATED STATEMENTS OF OPERATIONS", INCOME, YEARS_HEADER) + \
        _table("Operating income by product", OPERATING_BY_PRODUCT, YEARS_HEADER) + \
        _table("Net sales by product", BY_PRODUCT, YEARS_HEADER)
    _print_pdf(html, tmp_path / "acme-10-k-2025-02-01.pdf")
    ask = _asker(tmp_path)

    part = ask("What were Acme's Gadgets net sales in fiscal 2024?")
    assert part.short_answer == "1500" and part.citations[0]["row"] == "Gadgets"
    assert ask("What were Acme's Gadgets net sales in fiscal 2023?").short_answer == "1400"
    assert ask("What were Acme's net sales in fiscal 2024?").short_answer == "5000"
    unknown = ask("What were Acme's Sprockets net sales in fiscal 2024?")
    assert unknown.short_answer is None
