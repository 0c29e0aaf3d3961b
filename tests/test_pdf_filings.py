"""Filings printed to PDF (tests/data/filings/pdf: four SEC filings printed by Chromium,
cut to their covers and statements): the metadata from the cover, and the answers from the
facts their tables show, cited by row, column and page (and the cover's fields from the
metadata)."""

from __future__ import annotations

from datetime import date

import pytest
from filing_shelf import PDFS, printed_answerer

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from retriever_trt.documents import Form, load_document


@pytest.fixture(scope="module")
def shelf() -> FilingAnswerer:
    return printed_answerer()


@pytest.mark.parametrize(("name", "company", "form", "year", "period", "end"), [
    ("aapl-10-k-2024-11-01.pdf", "Apple Inc.", Form.TEN_K, 2024, "FY", date(2024, 9, 28)),
    ("jnj-10-q-2025-07-24.pdf", "Johnson & Johnson", Form.TEN_Q, 2025, "Q2", date(2025, 6, 29)),
    ("tsla-10-q-2025-07-24.pdf", "Tesla, Inc.", Form.TEN_Q, 2025, "Q2", date(2025, 6, 30)),
    ("v-10-k-2024-11-13.pdf", "VISA INC.", Form.TEN_K, 2024, "FY", date(2024, 9, 30)),
])
def test_metadata_of_the_printed_filings(name: str, company: str, form: Form, year: int,
                                         period: str, end: date) -> None:
    m = load_document(PDFS / name, name).metadata
    assert (m.company, m.form, m.fiscal_year, m.fiscal_period, m.period_end) == \
        (company, form, year, period, end)


@pytest.mark.parametrize(("question", "doc_id", "value", "scale", "rows"), [
    ("What was Apple's diluted EPS for the fiscal year ended September 30, 2023?",
     "aapl-10-k-2024-11-01.pdf", "6.13", "", ["Diluted"]),
    ("What was Apple's dividend payout ratio in fiscal 2024 (dividends paid / net income), in "
     "percent to one decimal?", "aapl-10-k-2024-11-01.pdf", "16.3", "percent",
     ["Payments for dividends and dividend equivalents", "Net income"]),
    ("What was Johnson & Johnson's gross margin in the first half of 2025? Answer as a "
     "percentage with one decimal.", "jnj-10-q-2025-07-24.pdf", "67.2", "percent",
     ["Gross profit", "Sales to customers (Note 9)"]),
    ("Give Tesla's PP&E, net at June 30, 2025 (in USD millions).", "tsla-10-q-2025-07-24.pdf",
     "38574", "million", ["Property, plant and equipment, net"]),
    ("What was Visa's current ratio at September 30, 2024? Round to two decimals.",
     "v-10-k-2024-11-13.pdf", "1.28", "", ["Total current assets", "Total current liabilities"]),
    # An analyst's directions around the question name no part of the figure: "information",
    # "item" and "investment" are row words of Apple's tables.
    ("Using the information provided in the cash flow statement, how much did Apple pay in "
     "dividends in FY2024? Answer in USD millions. Address the question by using the line "
     "items shown, as an investment analyst would.", "aapl-10-k-2024-11-01.pdf", "15234",
     "million", ["Payments for dividends and dividend equivalents"]),
    ("What was Apple's gross margin in fiscal 2024 as a percentage? Use the income statement "
     "and round to one decimal place.", "aapl-10-k-2024-11-01.pdf", "46.2", "percent",
     ["Gross margin", "Total net sales"]),
])
def test_answers_from_the_printed_statements(shelf: FilingAnswerer, question: str, doc_id: str,
                                             value: str, scale: str, rows: list[str]) -> None:
    q = shelf.parse(question)
    scope = shelf.scope(q, None)
    assert scope.doc_ids[0] == doc_id
    short = shelf.answer(q, scope)
    assert (short.short_answer, short.scale) == (value, scale), short.prose()
    assert [c["row"] for c in short.citations] == rows
    assert all(c["doc_id"] == doc_id and c["page"] > 0 and "fact" not in c
               for c in short.citations)


def test_a_table_fact_cites_its_cell_and_page(shelf: FilingAnswerer) -> None:
    q = shelf.parse("What was Tesla's free cash flow in the first half of 2025, in millions?")
    short = shelf.answer(q, shelf.scope(q, None))
    assert short.short_answer == "810"  # 4,696 less (3,886): a payment is read unsigned
    capex = short.citations[1]
    assert capex["value"] == "(3,886)" and capex["column"].startswith("Six Months Ended")
    assert short.cited.sources["page"] == str(capex["page"])
    info = shelf.facts_of("tsla-10-q-2025-07-24.pdf")
    assert all(f.value == abs(f.value) for f in info.facts if f.concept ==
               "us-gaap:PaymentsToAcquirePropertyPlantAndEquipment")


@pytest.mark.parametrize(("question", "answer"), [
    ("What is the trading symbol of Tesla's common stock, according to its 10-Q for the quarter "
     "ended June 30, 2025?", "TSLA"),
    ("What was the last day of Visa's fiscal year 2024?", "September 30, 2024"),
    ("On what date did Visa's fiscal year 2023 end?", "September 30, 2023"),
    ("On what date did J&J's second quarter of 2025 end?", "June 29, 2025"),
    ("In which state is Johnson & Johnson incorporated?", "New Jersey"),
    ("What is Visa's I.R.S. employer identification number?", "26-0267673"),
    ("On which exchange is Tesla's common stock listed?", "The Nasdaq Global Select Market"),
])
def test_the_cover_fields_of_a_printed_filing(shelf: FilingAnswerer, question: str,
                                              answer: str) -> None:
    q = shelf.parse(question)
    short = shelf.answer(q, shelf.scope(q, None))
    assert short.short_answer == answer
    # a cover field cites the cover's page (no tag to cite), and the passage showing it
    assert all(c["page"] in (1, 2) and "fact" not in c and c["source_id"] == short.cited.chunk_id
               for c in short.citations)
