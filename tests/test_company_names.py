"""Companies named as people write them (`pipeline/rag/answers/company_names.py`), and the
filing of the year asked chosen on a shelf of several companies and years
(`filings/scope.py`), over registrant names as real 10-K covers print them."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.rag.answers.company_names import (
    as_named,
    company_aliases,
    find_companies,
    find_company,
    shelf_aliases,
)
from pipeline.rag.answers.filings.scope import choose_filings
from pipeline.rag.answers.query import parse_query
from retriever_trt.documents.model import CoverEntry, CoverField, DocumentMetadata, Form
from retriever_trt.store.document_store import DocumentInfo

# (registrant name as the cover prints it, symbol read from the cover or "")
COVERS = [("3M COMPANY", "MMM"), ("THE COCA-COLA COMPANY", "KO"),
          ("ADVANCED MICRO DEVICES, INC.", ""), ("MICROSOFT CORPORATION", "MSFT"),
          ("McDONALD’S CORPORATION", "MCD"), ("Foot Locker, Inc.", "FL"),
          ("American Express Company", "AXP"), ("JOHNSON & JOHNSON", "JNJ"),
          ("PG&E CORPORATION", "PCG"), ("Block, Inc.", "SQ"), ("Best Buy Co., Inc.", "BBY"),
          ("Costco Wholesale Corporation", "COST"), ("eBay Inc.", "EBAY"),
          ("Ford Motor Company", "F"), ("T-MOBILE US, INC.", "TMUS"),
          ("Mondelēz International, Inc.", "MDLZ"), ("LAM RESEARCH CORPORATION", "LRCX"),
          ("JOHNSON CONTROLS INTERNATIONAL PLC", "JCI")]
ALIASES = company_aliases(COVERS)


@pytest.mark.parametrize(("name", "key"), [
    ("3M", "3m"), ("3m", "3m"), ("Coca Cola", "coca cola"), ("Coca-Cola", "coca cola"),
    ("CocaCola", "coca cola"), ("The Coca-Cola Company", "coca cola"),
    ("AMD", "advanced micro devices"), ("Microsoft Corp.", "microsoft"),
    ("Microsoft", "microsoft"), ("MSFT", "microsoft"), ("McDonald's", "mcdonald s"),
    ("McDonalds", "mcdonald s"), ("Footlocker", "foot locker"), ("Foot Locker", "foot locker"),
    ("Amex", "american express"), ("AmEx", "american express"), ("J&J", "johnson and johnson"),
    ("Johnson and Johnson", "johnson and johnson"), ("PG&E", "pg and e"), ("Block", "block"),
    ("Best Buy", "best buy"), ("eBay", "ebay"), ("Ebay", "ebay"), ("COST", "costco wholesale"),
    ("block", "block"), ("microsoft", "microsoft"),  # typed in lower case, as a possessive
    ("ebay.com", "ebay"),  # a web domain for the name, in lower case
    ("T-Mobile", "t mobile us"), ("T Mobile", "t mobile us"),  # a one-letter first word
    ("Mondelez", "mondelez international"), ("Mondelēz", "mondelez international"),
    ("Mondelēz International", "mondelez international"),  # accents as typed or not
    ("Lam", "lam research"),  # three letters, as a possessive
    # without the last word people leave out ("Johnson" alone is too common a first word)
    ("Johnson Controls", "johnson controls international"),
])
def test_a_name_as_people_write_it(name: str, key: str) -> None:
    assert find_company(f"What was {name}'s total revenue in FY 2021?", ALIASES) == key


@pytest.mark.parametrize("question", [
    "What was the cost of goods sold in 2021?", "To the best of your knowledge, revenue?",
    "How large was the block of shares repurchased in 2021?", "What is the mmm ratio?",
    "Did the amd segment grow?", "What did Lam report for revenue in 2021?",
    "Was the lam's revenue higher?"])
def test_a_common_word_in_lower_case_names_no_company(question: str) -> None:
    assert find_company(question, ALIASES) is None


@pytest.mark.parametrize("question", [
    "What was F's total revenue in FY 2021?", "Ticker F: what was revenue in 2021?",
    "For the company trading as (NYSE: F), what was revenue in 2021?"])
def test_a_one_letter_symbol_written_as_a_symbol_names_its_company(question: str) -> None:
    assert find_company(question, ALIASES) == "ford motor"


@pytest.mark.parametrize("question", [
    "What did the Form 10-K for 2021 say about Class F shares?",
    "Which exhibit is Schedule F of the 2021 report?"])
def test_a_one_letter_capital_elsewhere_names_no_company(question: str) -> None:
    assert find_company(question, ALIASES) is None


def test_a_three_letter_first_word_with_a_curly_apostrophe() -> None:
    assert find_company("Lam’s effective tax rate in FY2025?", ALIASES) == "lam research"


def test_the_answer_names_the_company_as_the_question_wrote_it() -> None:
    assert as_named("Was PG&E's revenue higher than J&J's?", "pg and e") == "PG&E"


def _filing(doc_id: str, company: str, year: int, end: date) -> DocumentInfo:
    meta = DocumentMetadata(company, "", Form.TEN_K, year, "FY", end)
    return DocumentInfo(doc_id, doc_id, meta)


def test_the_filing_of_the_year_asked_before_a_later_ones_comparative_column() -> None:
    shelf = {d.doc_id: d for d in [
        _filing("mmm-2018", "3M COMPANY", 2018, date(2018, 12, 31)),
        _filing("mmm-2019", "3M COMPANY", 2019, date(2019, 12, 31)),
        _filing("mmm-2020", "3M Company", 2020, date(2020, 12, 31)),
        _filing("ko-2018", "THE COCA-COLA COMPANY", 2018, date(2018, 12, 31)),
        _filing("orcl-2018", "Oracle Corporation", 2018, date(2018, 5, 31))]}
    aliases = company_aliases((d.metadata.company, "") for d in shelf.values())
    assert choose_filings(parse_query("What was 3M's revenue in FY2018?", aliases),
                          shelf) == ["mmm-2018"]
    assert choose_filings(parse_query("What was 3M's revenue in FY2020?", aliases),
                          shelf) == ["mmm-2020"]
    # no FY2017 10-K on the shelf: the FY2018 one shows FY2017 as its comparative column
    assert choose_filings(parse_query("What was 3M's revenue in FY2017?", aliases),
                          shelf) == ["mmm-2018"]
    # a fiscal year ending in May is that year's: FY2018 is the year ended May 31, 2018
    assert choose_filings(parse_query("Oracle's revenue in fiscal 2018?", aliases),
                          shelf) == ["orcl-2018"]
    assert choose_filings(parse_query("Coca Cola's revenue in FY2018?", aliases),
                          shelf) == ["ko-2018"]


def test_the_short_name_a_filing_defines_names_its_company_in_capitals() -> None:
    """"references to “BXP” mean Boston Properties, Inc." on a 10-K whose cover prints no
    symbol: "BXP" asks for that company's filing, "bxp" in lower case for none."""
    bxp = _filing("bxp-2015", "BOSTON PROPERTIES, INC.", 2015, date(2015, 12, 31))
    bxp.metadata.cover[CoverField.SHORT_NAME] = CoverEntry("BXP", page=3)
    shelf = {d.doc_id: d for d in [
        bxp, _filing("ko-2015", "THE COCA-COLA COMPANY", 2015, date(2015, 12, 31))]}
    aliases = shelf_aliases(d.metadata for d in shelf.values())
    assert choose_filings(parse_query("What was BXP's total revenue in FY 2015?", aliases),
                          shelf) == ["bxp-2015"]
    assert find_company("what is the bxp ratio in 2015?", aliases) is None


def test_a_former_name_names_the_company_and_its_filings_under_either_name() -> None:
    renamed = _filing("xyz-2022", "Block, Inc.", 2022, date(2022, 12, 31))
    renamed.metadata.cover[CoverField.FORMER_NAME] = CoverEntry("Square, Inc.", page=1)
    shelf = {d.doc_id: d for d in [
        renamed, _filing("xyz-2020", "Square, Inc.", 2020, date(2020, 12, 31)),
        _filing("ko-2020", "THE COCA-COLA COMPANY", 2020, date(2020, 12, 31))]}
    aliases = shelf_aliases(d.metadata for d in shelf.values())
    # the 10-K of the year asked, printed under the name the question does not use
    assert choose_filings(parse_query("What was Block's revenue in FY2020?", aliases),
                          shelf) == ["xyz-2020"]
    assert choose_filings(parse_query("What was Square's revenue in FY2022?", aliases),
                          shelf) == ["xyz-2022"]
    # with only the renamed filing on the shelf, the former name still finds it
    alone = {"xyz-2022": renamed}
    assert choose_filings(parse_query("Square's revenue in FY2022?",
                                      shelf_aliases([renamed.metadata])), alone) == ["xyz-2022"]


def test_a_new_name_without_a_former_name_line_is_one_company_by_its_numbers() -> None:
    # a registrant renamed: its later covers print the new name and no former one, over the
    # same Commission file number (padded or not); another company's number stays apart
    old = _filing("fl-2020", "Facelook, Inc.", 2020, date(2020, 12, 31))
    new = _filing("mw-2022", "Metaworks Platforms, Inc.", 2022, date(2022, 12, 31))
    other = _filing("fl-other-2020", "Facelock Security Corp", 2020, date(2020, 12, 31))
    for filing, number in ((old, "001-35551"), (new, "1-35551"), (other, "001-35552")):
        filing.metadata.cover[CoverField.FILE_NUMBER] = CoverEntry(number, page=1)
    shelf = {d.doc_id: d for d in (old, new, other)}
    aliases = shelf_aliases(d.metadata for d in shelf.values())
    assert choose_filings(parse_query("What was Metaworks's revenue in FY2020?", aliases),
                          shelf) == ["fl-2020"]
    assert choose_filings(parse_query("What was Facelook's revenue in FY2022?", aliases),
                          shelf) == ["mw-2022"]
    assert choose_filings(parse_query("Facelock Security's revenue in FY2020?", aliases),
                          shelf) == ["fl-other-2020"]
    # one cover's file number not read: its employer identification number links it
    del old.metadata.cover[CoverField.FILE_NUMBER]
    for filing in (old, new):
        filing.metadata.cover[CoverField.TAX_ID] = CoverEntry("20-1665019", page=1)
    assert choose_filings(parse_query("What was Metaworks's revenue in FY2020?", aliases),
                          shelf) == ["fl-2020"]


def test_a_combined_reports_other_registrant_names_the_report() -> None:
    # a parent and its utility file one 10-K; the utility's name, as people write it, is
    # the report's, and takes nothing from another company on the shelf
    report = _filing("gw-2019", "GADGET & WIDGET CORPORATION", 2019, date(2019, 12, 31))
    report.metadata.cover[CoverField.CO_REGISTRANTS] = CoverEntry(
        "PACIFIC GADGET AND ELECTRIC COMPANY", page=1)
    shelf = {d.doc_id: d for d in [
        report, _filing("gw-2020", "GADGET & WIDGET CORPORATION", 2020, date(2020, 12, 31)),
        _filing("pe-2019", "Pacific Edison Corp", 2019, date(2019, 12, 31))]}
    aliases = shelf_aliases(d.metadata for d in shelf.values())
    assert choose_filings(parse_query("What were Pacific Gadget and Electric's operating "
                                      "revenues in 2019?", aliases), shelf) == ["gw-2019"]
    assert choose_filings(parse_query("Pacific Edison's revenue in FY2019?", aliases),
                          shelf) == ["pe-2019"]


def test_three_years_asked_go_to_the_10k_that_shows_all_three() -> None:
    shelf = {d.doc_id: d for d in [
        _filing(f"mmm-{y}", "3M COMPANY", y, date(y, 12, 31)) for y in (2018, 2019, 2020)]}
    aliases = company_aliases((d.metadata.company, "") for d in shelf.values())
    query = parse_query("What was 3M's average revenue from FY2016 to FY2018?", aliases)
    assert len(query.periods) == 3
    assert choose_filings(query, shelf) == ["mmm-2018"]
    # one year, two years before the oldest 10-K: that 10-K's oldest income statement column
    assert choose_filings(parse_query("3M's revenue in FY2016?", aliases), shelf) == ["mmm-2018"]
    # three years before the oldest 10-K: none shows it; the latest first, as before
    assert choose_filings(parse_query("3M's revenue in FY2015?", aliases), shelf)[0] == \
        "mmm-2020"


def test_a_first_word_inside_a_longer_capitalized_name_names_no_company():
    aliases = {"Pacific": "pacific gas and electric", "Apple": "apple", "Best": "best buy"}
    assert find_companies("Oracle's total revenues from the Asia Pacific region?", aliases) == {}
    assert list(find_companies("In FY2023 Apple and Best Buy earned what?", aliases)) == \
        ["apple", "best buy"]


def test_the_quarterly_report_named_is_the_one_read() -> None:
    """Apple's six months ended March 30, 2024 is a column of its Q2 FY25 10-Q, not of the
    Q3 FY24 10-Q the question names: that one is read, and says it does not hold it."""
    def quarterly(doc_id: str, year: int, quarter: int, end: date) -> DocumentInfo:
        meta = DocumentMetadata("Apple Inc.", "", Form.TEN_Q, year, f"Q{quarter}", end)
        return DocumentInfo(doc_id, doc_id, meta)

    shelf = {d.doc_id: d for d in [quarterly("aapl-q3-fy24", 2024, 3, date(2024, 6, 29)),
                                   quarterly("aapl-q2-fy25", 2025, 2, date(2025, 3, 29))]}
    aliases = company_aliases([("Apple Inc.", "")])
    six_months = "Apple's net sales for the six months ended March 30, 2024"
    assert choose_filings(parse_query(f"{six_months}?", aliases), shelf) == ["aapl-q2-fy25"]
    for named in ("taken from its Q3 FY24 10-Q", "per its 10-Q for the third quarter of "
                  "fiscal 2024", "in the third-quarter fiscal 2024 10-Q"):
        query = parse_query(f"{six_months}, {named}?", aliases)
        assert (query.filing_year, query.filing_quarter) == (2024, 3), named
        assert [p.months for p in query.periods] == [6], named
        assert choose_filings(query, shelf) == ["aapl-q3-fy24"], named
