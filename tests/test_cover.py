# ruff: noqa: E501  (an inline-XBRL cover, written as the SEC lays it out)
"""The cover fields of a filing (state of incorporation, employer identification number,
the principal executive offices' city and state, exchange, Commission file number,
telephone): read from the `dei:` facts of inline XBRL as the cover shows them, off the
cover page of a PDF by the positions of its text, kept in the saved metadata, and answered
with a citation of the fact or the page. Real filings from tests/data/filings (the whole
shelf of 25: benchmarks/filings_covers.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from paths import FILINGS, REPO

from pipeline.rag.answers.filings.cover.cover_answer import FilingField, cover_field
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from retriever_trt.documents import load_document
from retriever_trt.documents.filing.auditor_report import read_auditor
from retriever_trt.documents.filing.cover_page import COVER_PAGES, printed_metadata, read_cover
from retriever_trt.documents.model import (
    PRINTED_COVER_FIELDS,
    CoverEntry,
    CoverField,
    DocumentMetadata,
    Form,
)
from retriever_trt.documents.pdf.pdf_layout import Line, Segment, page_lines
from retriever_trt.indexing.ingest import ingest
from retriever_trt.store.document_store import DOCUMENTS_FILE, DocumentStore, read_documents

sys.path.insert(0, str(REPO / "benchmarks"))
from filings_covers import cover_problems  # noqa: E402

# tests/data/filings: four filings whole and the three HTML twins of the PDFs, cut
HTML_FILINGS = 7

# A cover as filers tag it: the state shown by name (its value, by ixt-sec:stateprovnameen,
# is the code "DE"), a comma caught in the city's tag, the area code in parentheses, the
# exchange only as a hidden code that a visible name displays (-sec-ix-hidden), and the
# offices' state only as a hidden code that nothing displays, and the fiscal year's end as a
# hidden month and day in ixt:date-month-day's format (Intuitive Surgical's "12/31").
_COVER = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:dei="http://xbrl.sec.gov/dei/2024"
 xmlns:ixt-sec="http://www.sec.gov/inlineXBRL/transformation/2015-08-31">
<head><title>gdgt-20241231</title></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentType">10-K</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentFiscalYearFocus">2024</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentFiscalPeriodFocus">FY</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentPeriodEndDate">2024-12-31</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:SecurityExchangeName" id="f-x">NYSE</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:EntityAddressStateOrProvince" id="f-st">IL</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:CurrentFiscalYearEndDate" format="ixt:date-month-day" id="f-fy">12/31</ix:nonNumeric>
</ix:hidden></ix:header></div>
<div><span>FORM 10-K</span></div>
<div><ix:nonNumeric contextRef="c-1" name="dei:EntityRegistrantName" id="f-1">Gadget Corp.</ix:nonNumeric></div>
<table>
<tr><td><ix:nonNumeric contextRef="c-1" name="dei:EntityIncorporationStateCountryCode" format="ixt-sec:stateprovnameen" id="f-2">Delaware</ix:nonNumeric></td>
<td><ix:nonNumeric contextRef="c-1" name="dei:EntityTaxIdentificationNumber" id="f-3">12-3456789</ix:nonNumeric></td></tr>
<tr><td>(State or other jurisdiction of incorporation or organization)</td><td>(I.R.S. Employer Identification No.)</td></tr>
</table>
<div><ix:nonNumeric contextRef="c-1" name="dei:EntityAddressCityOrTown" id="f-4">Springfield,</ix:nonNumeric> Illinois</div>
<div>(Address of principal executive offices)</div>
<div>(<ix:nonNumeric contextRef="c-1" name="dei:CityAreaCode" id="f-5">555</ix:nonNumeric>) <ix:nonNumeric contextRef="c-1" name="dei:LocalPhoneNumber" id="f-6">123-4567</ix:nonNumeric></div>
<table>
<tr><td>Title of each class</td><td>Trading Symbol(s)</td><td>Name of each exchange on which registered</td></tr>
<tr><td>Common Stock</td><td><ix:nonNumeric contextRef="c-1" name="dei:TradingSymbol" id="f-7">GDGT</ix:nonNumeric></td><td><span style="-sec-ix-hidden:f-x">New York Stock Exchange</span></td></tr>
</table>
<div><span>Gadget Corp. sells widgets in every region and competes on price.</span></div>
</body></html>
"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cover")
    (folder / "gdgt-10-k-2025-02-01.htm").write_text(_COVER, encoding="utf-8")
    return folder


def _values(meta: DocumentMetadata) -> dict[CoverField, str]:
    """The fields a printed cover is read for, as tagged."""
    return {f: e.value for f, e in meta.cover.items() if f in PRINTED_COVER_FIELDS}


def test_inline_xbrl_cover_fields_are_what_the_cover_shows(sample: Path) -> None:
    meta = load_document(sample / "gdgt-10-k-2025-02-01.htm").metadata
    assert _values(meta) == {
        CoverField.INCORPORATION: "Delaware", CoverField.TAX_ID: "12-3456789",
        CoverField.CITY: "Springfield", CoverField.PHONE: "(555) 123-4567",
        CoverField.EXCHANGE: "New York Stock Exchange"}
    # the hidden "IL" that nothing shows is no answer; the phone cites both its facts
    assert CoverField.STATE not in meta.cover
    assert meta.cover[CoverField.PHONE].facts == (("f-5", "555"), ("f-6", "123-4567"))
    assert meta.cover[CoverField.EXCHANGE].facts == (("f-x", "New York Stock Exchange"),)
    # a date has one reading, hidden or shown: the month and day as a reader writes them
    assert meta.cover[CoverField.FISCAL_YEAR_END].value == "December 31"


def test_a_cover_answer_cites_its_fact_and_none_comes_of_a_missing_field(sample: Path) -> None:
    answerer = FilingAnswerer(ingest(sample)[0])
    q = answerer.parse("In which state is Gadget Corp. incorporated?")
    short = answerer.answer(q, answerer.scope(q, None))
    assert short.short_answer == "Delaware"
    (cite,) = short.citations
    assert cite["fact"]["id"] == "f-2"
    assert cite["fact"]["concept"] == "dei:EntityIncorporationStateCountryCode"
    assert short.cited is not None and "Delaware" in short.cited.text
    assert cite["source_id"] == short.cited.chunk_id
    q = answerer.parse("In which state are Gadget Corp.'s principal executive offices?")
    assert answerer.answer(q, answerer.scope(q, None)).short_answer is None
    # a date or a count asked of what the cover names is no field of it ("When does the
    # lease on its headquarters expire?" had been answered with the city)
    for question in ("When was Gadget Corp. incorporated in its state of incorporation?",
                     "How many employees work in Gadget Corp.'s state of incorporation?"):
        q = answerer.parse(question)
        assert answerer.answer(q, answerer.scope(q, None)).short_answer != "Delaware"


def _line(y: float, *cells: tuple[str, float, float]) -> Line:
    return Line(y, 10.0, tuple(Segment(t, x0, x1) for t, x0, x1 in cells))


def test_a_printed_cover_in_three_columns() -> None:
    # An 8-K's or 10-Q's layout: state, file number and EIN side by side, each over its
    # caption; the address on one line; the telephone after its caption.
    cover = [
        _line(700, ("Gadget Corp.", 250, 350)),
        _line(690, ("(Exact name of registrant as specified in its charter)", 200, 410)),
        _line(670, ("Delaware", 80, 130), ("001-12345", 280, 330), ("12-3456789", 450, 500)),
        _line(660, ("(State or other jurisdiction", 40, 170), ("(Commission File Number)", 250, 360),
              ("(IRS Employer", 440, 510)),
        _line(652, ("of incorporation)", 60, 150), ("Identification No.)", 435, 515)),
        _line(630, ("1 Main Street, Springfield, Illinois 62701", 180, 430)),
        _line(620, ("(Address of principal executive offices, including zip code)", 170, 440)),
        _line(600, ("Registrant's telephone number, including area code: (555) 123-4567", 150, 460)),
        _line(580, ("Title of each class", 40, 120), ("Trading Symbol(s)", 250, 320),
              ("Name of each exchange on which registered", 380, 560)),
        _line(570, ("Common Stock", 50, 110), ("GDGT", 270, 300), ("Nasdaq Global Market", 420, 520)),
    ]
    found = read_cover([cover])
    assert {f: e.value for f, e in found.items()} == {
        CoverField.INCORPORATION: "Delaware", CoverField.FILE_NUMBER: "001-12345",
        CoverField.TAX_ID: "12-3456789", CoverField.CITY: "Springfield",
        CoverField.STATE: "Illinois", CoverField.PHONE: "(555) 123-4567",
        CoverField.EXCHANGE: "Nasdaq Global Market", CoverField.SYMBOLS: "GDGT"}
    assert {e.page for e in found.values()} == {1}


def test_the_symbols_under_a_split_header_up_to_the_next_section() -> None:
    """Wells Fargo's "Trading" over "Symbols"; a class's wrapped title passed over; the
    12(g) line ends the table."""
    cover = [
        _line(530, ("Trading", 480, 503)),
        _line(522, ("Title of Each Class", 35, 93), ("Symbols", 479, 505)),
        _line(497, ("Common Stock", 35, 137), ("GDGT", 484, 500), ("NYSE", 534, 557)),
        _line(488, ("Depositary Shares, each representing", 35, 277), ("GDGT.PRL", 476, 508)),
        _line(480, ("a 1/1000th interest in a share", 35, 277)),
        _line(422, ("Guarantee of Notes due 2028", 35, 330), ("GDGT/28A", 477, 507)),
        _line(400, ("Securities registered pursuant to Section 12(g) of the Act: None", 197, 520)),
        _line(390, ("ZZZ", 480, 500))]
    assert read_cover([cover])[CoverField.SYMBOLS].value == "GDGT, GDGT.PRL, GDGT/28A"


def test_headers_run_together_a_wrapped_header_and_older_captions() -> None:
    """Covers seen on real 10-Ks: "Trading Symbol Name of each exchange on which registered"
    drawn as one run of text (Patriot Transportation's), "Name of Each Exchange" over "on
    Which Registered" (GigaCloud's), "(State of incorporation)" (Ford's older covers), and
    "00-0000000" where a foreign registrant has no employer identification number."""
    cover = [
        _line(670, ("Delaware", 150, 193), ("00-0000000", 415, 467)),
        _line(660, ("(State of incorporation)", 121, 221),
              ("(I.R.S. Employer Identification No.)", 365, 517)),
        _line(580, ("Title of each class", 116, 191),
              ("Trading Symbol Name of each exchange on which registered", 252, 518)),
        _line(570, ("Common Stock, $.10 par value", 92, 215), ("GDGT", 276, 298), ("NASDAQ", 402, 443)),
        _line(560, ("Securities registered pursuant to Section 12(g) of the Act: None", 171, 442))]
    assert {f: e.value for f, e in read_cover([cover]).items()} == {
        CoverField.INCORPORATION: "Delaware", CoverField.SYMBOLS: "GDGT",
        CoverField.EXCHANGE: "NASDAQ"}
    wrapped = [
        _line(580, ("Title of Each Class", 40, 120), ("Trading Symbol(s)", 250, 320),
              ("Name of Each Exchange", 400, 500)),
        _line(572, ("on Which Registered", 405, 495)),
        _line(560, ("Ordinary Shares", 40, 120), ("GDGT", 270, 300),
                   ("The Nasdaq Stock Market LLC", 380, 520))]
    assert read_cover([wrapped])[CoverField.EXCHANGE].value == "The Nasdaq Stock Market LLC"
    # AbbVie's: "Name of Each Exchange on Which" over "Registered"
    wrapped[0:2] = [_line(580, ("Title of Each Class", 40, 120), ("Trading Symbol(s)", 250, 320),
                          ("Name of Each Exchange on Which", 400, 520)),
                    _line(572, ("Registered", 430, 470))]
    assert read_cover([wrapped])[CoverField.EXCHANGE].value == "The Nasdaq Stock Market LLC"


def test_the_ticker_is_the_symbols_column_where_the_text_gives_none() -> None:
    """Visa's cover: "Trading" over "Title of each class symbol ...", so the text names no
    symbol table; the column under "symbol" still holds "V" first."""
    cover = [
        _line(700, ("GADGET INC.", 250, 350)),
        _line(690, ("(Exact name of registrant as specified in its charter)", 200, 410)),
        _line(590, ("Trading", 300, 330)),
        _line(580, ("Title of each class", 40, 120), ("symbol", 300, 330),
              ("Name of each exchange on which registered", 380, 560)),
        _line(570, ("Class A Common Stock", 40, 200), ("V", 310, 316), ("New York Stock Exchange", 400, 520)),
        _line(560, ("1.500% Senior Notes due 2026", 40, 200), ("V26", 305, 325),
              ("New York Stock Exchange", 400, 520)),
        _line(550, ("Securities registered pursuant to Section 12(g) of the Act: None", 40, 400))]
    meta = printed_metadata([cover], "gadget.pdf")
    assert (meta.company, meta.ticker) == ("GADGET INC.", "V")


def test_a_cover_without_the_captions_gives_nothing() -> None:
    prose = [_line(700 - 10 * k, (text, 40, 560)) for k, text in enumerate(
        ["Gadget Corp. is incorporated in Delaware.", "Our offices are in Springfield."])]
    assert read_cover([prose]) == {}
    # no securities registered under 12(b): "None" under the header is no exchange
    table = [_line(580, ("Name of each exchange on which registered", 380, 560)),
             _line(570, ("None", 450, 470))]
    assert read_cover([table]) == {}


@pytest.mark.parametrize("stem", ["aapl-10-k-2024-11-01", "jnj-10-q-2025-07-24",
                                  "tsla-10-q-2025-07-24", "v-10-k-2024-11-13"])
def test_printed_covers_agree_with_their_tags(stem: str) -> None:
    """Each printed filing's cover, read by position, says what its HTML twin's dei facts say."""
    tagged = load_document(FILINGS / f"{stem}.html").metadata
    pdf = pdfium.PdfDocument(str(FILINGS / "pdf" / f"{stem}.pdf"))
    try:
        pages = [page_lines(pdf[i]) for i in range(COVER_PAGES)]
    finally:
        pdf.close()
    read = {f: e.value for f, e in read_cover(pages).items()}
    # a 10-K's cover prints its fiscal year's end; every cover its securities' symbols
    more = {f: read.pop(f, None) for f in (CoverField.FISCAL_YEAR_END, CoverField.SYMBOLS)}
    assert read == _values(tagged)
    assert all(f in tagged.cover for f in PRINTED_COVER_FIELDS)
    expected = {f: tagged.cover[f].value if f in tagged.cover else None for f in more}
    if "-10-q-" in stem:  # a quarter's cover prints no year end; its hidden tag still says it
        assert expected[CoverField.FISCAL_YEAR_END] is not None
        expected[CoverField.FISCAL_YEAR_END] = None
    assert more == expected


def test_a_printed_auditors_report_names_the_auditor() -> None:
    """The report's signature, the tenure sentence, the city and the date; an officer's
    signature and an exhibit's undated consent name no auditor."""
    report = [_line(700 - 10 * k, (text, 40, 300)) for k, text in enumerate([
        "/s/ Tim Cook", "Chief Executive Officer", "/S/ GADGET & PARTNERS LLP",
        "We have served as the Company's auditor since 2009.", "Springfield, Illinois",
        "November 1, 2024"])]
    found = read_auditor(report, 7)
    assert {f: (e.value, e.page) for f, e in found.items()} == {
        CoverField.AUDITOR: ("GADGET & PARTNERS LLP", 7),
        CoverField.AUDITOR_LOCATION: ("Springfield, Illinois", 7)}
    consent = [_line(700, ("/s/ Gadget & Partners LLP", 40, 300)),
               _line(690, ("23.1 Consent of Independent Registered Public Accounting Firm", 40, 300))]
    assert read_auditor(consent, 9) == {}


def test_every_filing_here_tags_its_cover_fields_as_shown() -> None:
    paths = sorted(FILINGS.glob("*.html"))
    assert len(paths) == HTML_FILINGS
    for path in paths:
        assert cover_problems(load_document(path).metadata) == [], path.name
    # IBM tags a hidden "CHX" first; the cover shows the New York Stock Exchange
    ibm = load_document(FILINGS / "ibm-10-k-2025-02-25.html").metadata
    assert ibm.cover[CoverField.EXCHANGE].value.lower() == "new york stock exchange"


def test_the_cover_check_names_what_is_wrong() -> None:
    """What the check above (and benchmarks/filings_covers.py on the whole shelf) reports:
    the fields no fact tags, a field read off the page instead, a comma caught in a tag."""
    caught = DocumentMetadata(cover={CoverField.CITY: CoverEntry("Arlington,", page=1)})
    assert cover_problems(caught) == [
        *(f"{f.value}: not tagged" for f in PRINTED_COVER_FIELDS if f is not CoverField.CITY),
        "city: 'Arlington,' has no tagged fact", "city: 'Arlington,' ends with a comma"]


def test_metadata_saved_before_the_cover_fields_still_loads(tmp_path: Path, sample: Path) -> None:
    store = ingest(sample)[0]
    (doc_id,) = store.info
    store.save(tmp_path / "new")
    assert DocumentStore.load(tmp_path / "new").info[doc_id].metadata == store.info[doc_id].metadata
    # the old code wrote no "cover": strip it, as an index saved then looks
    store.save(tmp_path / "old")
    path = tmp_path / "old" / DOCUMENTS_FILE
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for r in records:
        del r["metadata"]["cover"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (info,) = read_documents(tmp_path / "old", "")  # what DocumentStore.load reads them with
    old = info.metadata
    assert old.cover == {} and (old.company, old.form) == ("Gadget Corp.", Form.TEN_K)
    # a field a later version adds is left out, not an error
    raw = {**store.info[doc_id].metadata.to_dict()}
    raw["cover"] = {**raw["cover"], "lei": {"value": "X", "facts": [], "page": None}}
    assert DocumentMetadata.from_dict(raw).cover == store.info[doc_id].metadata.cover
    assert CoverEntry.from_dict(CoverEntry("Delaware", page=1).to_dict()) == CoverEntry("Delaware", page=1)


@pytest.mark.parametrize(("question", "field"), [
    ("In which state is J&J incorporated?", CoverField.INCORPORATION),
    ("What is Boeing's state of incorporation as given on the cover of its 10-K?", CoverField.INCORPORATION),
    ("In which city are AbbVie's principal executive offices located?", CoverField.CITY),
    ("Where is IBM headquartered, which city?", CoverField.CITY),
    ("In which city and state are Tesla's principal executive offices?", FilingField.OFFICES),
    ("Where are Visa's principal executive offices located?", FilingField.OFFICES),
    ("In which state are Visa's principal executive offices?", CoverField.STATE),
    ("Name the exchange Apple's common stock trades on.", CoverField.EXCHANGE),
    ("On which stock exchange is Tesla listed?", CoverField.EXCHANGE),
    ("Where is Palantir's Class A common stock (PLTR) registered for trading?", CoverField.EXCHANGE),
    ("Where is Palantir headquartered?", None),
    ("What is Nike's IRS employer identification number?", CoverField.TAX_ID),
    ("What is Meta's Commission file number?", CoverField.FILE_NUMBER),
    ("What is Netflix's telephone number?", CoverField.PHONE),
    ("What is the ticker of Apple?", FilingField.TICKER),
    ("In which city and state is the office that audited Stryker's statements?",
     CoverField.AUDITOR_LOCATION),
    ("Who audited Stryker's statements?", CoverField.AUDITOR),
    ("Which audit firm signed the opinion in Texas Instruments' 10-K?", CoverField.AUDITOR),
    ("On what date did Visa's fiscal year 2023 end?", FilingField.PERIOD_END),
    ("On what date did the repurchase program end?", None),
    ("How much did foreign exchange rates that the company traded at reduce revenue?", None),
    ("What was Apple's revenue in fiscal 2024?", None),
])
def test_what_a_question_asks_of_the_cover(question: str, field: object) -> None:
    assert cover_field(question) is field
