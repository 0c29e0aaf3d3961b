"""Metadata from a filing's cover text and file name (`documents/metadata.py`): the fiscal
year as SEC's DocumentFiscalYearFocus names it, a 10-Q's quarter, the file-name fallback."""

from __future__ import annotations

from datetime import date

from retriever_trt.documents import Form
from retriever_trt.documents.filing.metadata import (
    fiscal_year,
    infer_metadata,
    labelled_fiscal_year,
    parse_date,
    title,
)
from retriever_trt.documents.html.html_loader import load
from retriever_trt.documents.model import DocumentMetadata

APPLE_COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-K
For the fiscal year ended September 28, 2024
Commission File Number: 001-36743
Apple Inc.
(Exact name of Registrant as specified in its charter)
Securities registered pursuant to Section 12(b) of the Act:
Title of each class Trading symbol(s) Name of each exchange on which registered
Common Stock, $0.00001 par value per share AAPL The Nasdaq Stock Market LLC
1.625% Notes due 2026 — The Nasdaq Stock Market LLC
"""


def _ten_q(period: str, months: str) -> str:
    statements = f"Condensed Statements of Operations {months} Months Ended {period}\n" * 3
    return ("FORM 10-Q\nFor the quarterly period ended " + period + "\nAcme Corp\n"
            "(Exact name of registrant as specified in its charter)\n"
            "Title of each class Trading Symbol Name of each exchange\n"
            "Common Stock ACME New York Stock Exchange\n" + statements)


def test_a_10k_cover() -> None:
    meta = infer_metadata(APPLE_COVER, "whatever.pdf")
    assert (meta.company, meta.ticker, meta.form, meta.fiscal_year, meta.fiscal_period,
            meta.period_end) == ("Apple Inc.", "AAPL", Form.TEN_K, 2024, "FY", date(2024, 9, 28))
    assert title(meta, "x") == "Apple Inc. 10-K FY2024"


def test_a_10q_quarter_comes_from_its_longest_months_ended() -> None:
    calendar = infer_metadata(_ten_q("June 30, 2025", "Six"))
    assert (calendar.form, calendar.fiscal_period, calendar.fiscal_year, calendar.ticker) == \
        (Form.TEN_Q, "Q2", 2025, "ACME")
    # Apple's fiscal year ends in September: the quarter ended June 28, 2025 is Q3 of FY2025
    assert (infer_metadata(_ten_q("June 28, 2025", "Nine")).fiscal_period,
            infer_metadata(_ten_q("June 28, 2025", "Nine")).fiscal_year) == ("Q3", 2025)
    # NVIDIA's year ends in January: the quarter ended July 27, 2025 is Q2 of FY2026
    nvidia = infer_metadata(_ten_q("July 27, 2025", "Six") + "fiscal year 2026 " * 3)
    assert (nvidia.fiscal_period, nvidia.fiscal_year) == ("Q2", 2026)
    assert infer_metadata(_ten_q("March 31, 2025", "Three")).fiscal_period == "Q1"


def test_fiscal_year_of_a_year_ending_in_january_or_february_follows_the_filing() -> None:
    nvidia = "We refer to fiscal year 2025. Fiscal year 2025 was a 52-week year. fiscal 2024"
    assert fiscal_year(date(2025, 1, 26), nvidia) == 2025
    home_depot = "Fiscal 2024 included 53 weeks; fiscal 2024 sales; fiscal 2023"
    assert fiscal_year(date(2025, 2, 2), home_depot) == 2024
    assert fiscal_year(date(2025, 1, 3)) == 2024  # a 52/53-week year ending in early January
    assert fiscal_year(date(2024, 12, 31), "fiscal 2023 fiscal 2023") == 2024


def test_a_printed_filings_tables_name_its_fiscal_year() -> None:
    # Foot Locker heads the year ended January 29, 2022 "2021"; Walmart the year ended
    # January 31, 2023 "2023"; a December year is never relabelled.
    start = [[["", "2021", "2020"], ["Sales", "8,958", "7,548"]]] * 3 + \
        [[["", "2022", "2023", "2024"], ["Leases", "1", "2", "3"]]]
    foot_locker = DocumentMetadata(form=Form.TEN_K, period_end=date(2022, 1, 29), fiscal_year=2022)
    assert labelled_fiscal_year(foot_locker, start) == 2021
    end = [[["", "Fiscal Years Ended January 31,", ""], ["", "2023", "2022"]]] * 3
    walmart = DocumentMetadata(form=Form.TEN_K, period_end=date(2023, 1, 31), fiscal_year=2022)
    assert labelled_fiscal_year(walmart, end) == 2023
    assert labelled_fiscal_year(walmart, []) == 2022  # no tables: the cover's reading stays
    december = DocumentMetadata(form=Form.TEN_K, period_end=date(2021, 12, 31), fiscal_year=2021)
    assert labelled_fiscal_year(december, start) == 2021


def test_the_file_name_fills_what_the_text_does_not_say() -> None:
    meta = infer_metadata("", "aapl-10-k-2024-11-01.pdf")
    assert (meta.ticker, meta.form, meta.fiscal_period, meta.fiscal_year) == \
        ("AAPL", Form.TEN_K, "FY", 2024)
    assert meta.company == "" and title(meta, "aapl-10-k-2024-11-01") == "aapl-10-k-2024-11-01"
    assert infer_metadata("", "notes.pdf").form is Form.OTHER


def test_dates_as_covers_write_them() -> None:
    assert parse_date("JUNE 30, 2025") == date(2025, 6, 30)
    assert parse_date("Sept. 28 2024") == date(2024, 9, 28)
    assert parse_date("Smarch 3, 2024") is None


_ORACLE_STYLE_COVER = b"""
<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL">
<body><div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric id="fy" name="dei:DocumentFiscalYearFocus" contextRef="c">2025</ix:nonNumeric>
<ix:nonNumeric id="fp" name="dei:DocumentFiscalPeriodFocus" contextRef="c">Q1</ix:nonNumeric>
<ix:nonNumeric id="dt" name="dei:DocumentType" contextRef="c">10-Q</ix:nonNumeric>
</ix:hidden></ix:header></div>
<p>For the quarterly period ended <ix:nonNumeric id="end" name="dei:DocumentPeriodEndDate"
contextRef="c">August 31, <span style="-sec-ix-hidden:fy">2024</span></ix:nonNumeric></p>
<p><ix:nonNumeric id="name" name="dei:EntityRegistrantName"
contextRef="c">Oracle Corporation</ix:nonNumeric></p>
</body></html>
"""


def test_a_fiscal_year_the_cover_shows_as_the_period_ends_year(tmp_path) -> None:
    """Oracle's cover shows the period end's "2024" for its hidden DocumentFiscalYearFocus
    2025 (the quarter ended August 31, 2024 is Q1 of fiscal 2025): the tagged value names
    the fiscal year. The copy opens with a blank line before its XML declaration, which is
    still XHTML (read as HTML its facts would be lost)."""
    path = tmp_path / "orcl-10-q.htm"
    path.write_bytes(_ORACLE_STYLE_COVER)
    meta = load(path, path.name).metadata
    assert (meta.company, meta.fiscal_year, meta.fiscal_period, meta.period_end) == (
        "Oracle Corporation", 2025, "Q1", date(2024, 8, 31))
