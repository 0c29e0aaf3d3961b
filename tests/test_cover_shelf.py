"""The filing of the company and year asked, on a shelf of printed 10-Ks whose covers are
laid out as real ones are (tests/test_registrant.py reads the same layouts as text): the
PDFs are printed here by Chromium, read by the PDF loader, put in one store and asked
through the filing answerer's parse and scope."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from retriever_trt.indexing.ingest import ingest
from tests.test_pdf_loader import _print_pdf

HEAD = ('<p style="text-align:center">FORM 10-K</p><p style="text-align:center">ANNUAL REPORT '
        'PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934</p>'
        '<p style="text-align:center">For the fiscal year ended {end}</p>')
# PG&E's layout: the caption a column header over one row per registrant
ROWS = ('<table style="width:100%"><tr><td>Commission<br>File Number</td><td>Exact Name of '
        'Registrant<br>as Specified In Its Charter</td><td>State or Other Jurisdiction of<br>'
        'Incorporation or Organization</td><td>IRS Employer<br>Identification Number</td></tr>'
        '<tr style="white-space:nowrap"><td>1-12609</td><td>GADGET &amp; POWER CORPORATION</td>'
        '<td>California</td><td>94-3234914</td></tr></table>')
# Foot Locker's: the name printed as an image, nothing above the caption but the file number
NO_NAME = ('<p style="text-align:center">Commission File No. 1-10299</p>'
           '<p style="text-align:center">(Exact name of registrant as specified in its '
           'charter)</p><p>Item 1. Business</p><p>Shoe Locker, Inc., incorporated in 1989, '
           'sells shoes.</p><p>Shoe Locker, Inc. buys most of them from Sneaker Brand, Inc.</p>'
           '<p>Shoe Locker, Inc. and its subsidiaries are the "Company".</p>')
SYMBOLS = ('<table style="width:100%"><tr><td>Title of each class</td><td>Trading Symbol(s)</td>'
           '<td>Name of each exchange on which registered</td></tr><tr><td>Common stock</td>'
           '<td>{symbol}</td><td>New York Stock Exchange</td></tr></table>')


@pytest.fixture(scope="module")
def answerer(tmp_path_factory: pytest.TempPathFactory) -> FilingAnswerer:
    shelf = tmp_path_factory.mktemp("shelf")
    for name, html in {
        "gadget-2018": HEAD.format(end="December 31, 2018") + ROWS,
        "gadget-2020": HEAD.format(end="December 31, 2020") + ROWS + SYMBOLS.format(symbol="GPC"),
        "shoes-2022": HEAD.format(end="January 29, 2022") + NO_NAME + SYMBOLS.format(symbol="SL"),
    }.items():
        _print_pdf(html, shelf / f"{name}.pdf")
        Path(shelf / f"{name}.html").unlink()  # the page Chromium printed is not a filing
    return FilingAnswerer(ingest(shelf)[0])


def test_each_cover_names_its_registrant_and_year(answerer: FilingAnswerer) -> None:
    read = {d: (i.metadata.company, i.metadata.ticker, i.metadata.fiscal_year)
            for d, i in answerer.info.items()}
    assert read == {"gadget-2018.pdf": ("GADGET & POWER CORPORATION", "", 2018),
                    "gadget-2020.pdf": ("GADGET & POWER CORPORATION", "GPC", 2020),
                    "shoes-2022.pdf": ("Shoe Locker, Inc.", "SL", 2022)}


@pytest.mark.parametrize(("question", "first"), [
    ("What was Gadget & Power's total revenue in FY 2018?", "gadget-2018.pdf"),
    ("What was Gadget and Power's total revenue in FY2020?", "gadget-2020.pdf"),
    ("What was GPC's total revenue in fiscal 2018?", "gadget-2018.pdf"),
    ("What was Shoe Locker's total revenue in FY 2022?", "shoes-2022.pdf"),
    ("What was Shoelocker's total revenue in FY 2022?", "shoes-2022.pdf"),
])
def test_the_question_is_scoped_to_the_company_and_year_asked(
        answerer: FilingAnswerer, question: str, first: str) -> None:
    query = answerer.parse(question)
    assert answerer.scope(query, None).doc_ids[0] == first


def test_a_supplier_or_a_common_word_names_no_filing(answerer: FilingAnswerer) -> None:
    assert answerer.parse("What was Sneaker Brand's revenue in FY 2022?").company is None
    assert answerer.parse("What did the gadget cost in 2018?").company is None
