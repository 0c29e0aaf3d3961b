"""The filings question set's oracle and scoring: the inline-XBRL fact parser on a snippet
written here, the gold checks, the scoring of /ask responses, and the committed jsonl
verified against the real filings in tests/data/filings (all of it, against the whole shelf
of 25 filings: benchmarks/filings_gold.py verify)."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from datetime import date
from decimal import Decimal

import pytest

from tests.heldout_records import assert_heldout_records
from tests.paths import FILINGS, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from filings_check import Unverified, check_record, evaluate, resolve  # noqa: E402
from filings_eval import (  # noqa: E402
    Corpus,
    corpus_folder,
    pdf_twins,
    report,
    result_row,
    sample,
)
from filings_facts import cell_number, cell_of, parse_filing  # noqa: E402
from filings_gold import load_questions  # noqa: E402
from filings_heldout_check import month_day  # noqa: E402
from filings_periods import Kind, Period  # noqa: E402
from filings_score import (  # noqa: E402
    company_key,
    is_right,
    no_answer,
    normalize_text,
    numeric_right,
    parse_number,
    same_filing,
    spans,
    text_right,
    used_filing,
    wrong_number,
)
from filings_vocab import ITEMS  # noqa: E402

SNIPPET = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:xbrldi="http://xbrl.org/2006/xbrldi"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<body><div style="display:none"><ix:header><ix:hidden>
 <ix:nonNumeric name="dei:DocumentType" contextRef="fy">10-K</ix:nonNumeric>
 <ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="fy">2024</ix:nonNumeric>
 <ix:nonFraction name="us-gaap:Revenues" contextRef="fy" unitRef="usd" scale="6"
  decimals="-6" format="ixt:num-dot-decimal">1,500</ix:nonFraction>
</ix:hidden><ix:resources>
 <xbrli:context id="fy"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
  </xbrli:entity><xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate>
  <xbrli:endDate>2024-12-31</xbrli:endDate></xbrli:period></xbrli:context>
 <xbrli:context id="end"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
  </xbrli:entity><xbrli:period><xbrli:instant>2024-12-31</xbrli:instant></xbrli:period>
 </xbrli:context>
 <xbrli:context id="seg"><xbrli:entity><xbrli:identifier scheme="x">1</xbrli:identifier>
  <xbrli:segment><xbrldi:explicitMember dimension="srt:ProductOrServiceAxis">x:CarsMember
  </xbrldi:explicitMember></xbrli:segment></xbrli:entity><xbrli:period>
  <xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate>
  </xbrli:period></xbrli:context>
 <xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
 <xbrli:unit id="usdps"><xbrli:divide><xbrli:unitNumerator><xbrli:measure>iso4217:USD
  </xbrli:measure></xbrli:unitNumerator><xbrli:unitDenominator><xbrli:measure>xbrli:shares
  </xbrli:measure></xbrli:unitDenominator></xbrli:divide></xbrli:unit>
</ix:resources></ix:header></div>
<p>CONSOLIDATED STATEMENTS OF OPERATIONS (In millions, except number of shares, which are
reflected in thousands, and per-share amounts)</p>
<table>
 <tr><td>Year ended</td><td>2024</td></tr>
 <tr><td>Total net sales</td><td>$</td><td><ix:nonFraction name="us-gaap:Revenues"
  contextRef="fy" unitRef="usd" scale="6" decimals="-6"
  format="ixt:num-dot-decimal">1,500</ix:nonFraction></td></tr>
 <tr><td>Cars</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="seg" unitRef="usd"
  scale="6" decimals="-6" format="ixt:num-dot-decimal">900</ix:nonFraction></td></tr>
 <tr><td>Loss from operations</td><td>(<ix:nonFraction name="us-gaap:OperatingIncomeLoss"
  contextRef="fy" unitRef="usd" scale="6" decimals="-6" sign="-"
  format="ixt:num-dot-decimal">12.5</ix:nonFraction></td><td>)</td></tr>
 <tr><td>Impairments</td><td><ix:nonFraction name="us-gaap:GoodwillImpairmentLoss"
  contextRef="fy" unitRef="usd" scale="6" decimals="-6" format="ixt:fixed-zero">—</ix:nonFraction>
  </td></tr>
 <tr><td>Commitments</td><td><ix:nonFraction name="us-gaap:CommitmentsAndContingencies"
  contextRef="end" unitRef="usd" xsi:nil="true"/></td></tr>
 <tr><td>Diluted</td><td><ix:nonFraction name="us-gaap:EarningsPerShareDiluted" contextRef="fy"
  unitRef="usdps" decimals="2" format="ixt:num-dot-decimal">6.08</ix:nonFraction></td></tr>
</table>
<table><tr><td>(in thousands)</td></tr>
 <tr><td>Total assets</td><td><ix:nonFraction name="us-gaap:Assets" contextRef="end"
  unitRef="usd" scale="6" decimals="-6" format="ixt:num-dot-decimal">2,000</ix:nonFraction>
 </td></tr></table>
</body></html>
"""

YEAR = Period("FY", Kind.YEAR, date(2024, 1, 1), date(2024, 12, 31), 2024, None, True)
END = Period("END", Kind.INSTANT, None, date(2024, 12, 31), 2024, None, True)


@pytest.fixture(scope="module")
def filing(tmp_path_factory):
    path = tmp_path_factory.mktemp("filing") / "acme-10-k-2025-02-01.html"
    path.write_text(SNIPPET, encoding="utf-8")
    return parse_filing(path)


def test_a_fact_of_a_context_the_document_lacks_is_left_out(tmp_path):
    """An exhibit's facts may refer to contexts its main document defines (Clorox's annual
    report exhibit): they are read as no facts, not a crash."""
    path = tmp_path / "exhibit.htm"
    path.write_text(SNIPPET.replace('contextRef="end"', 'contextRef="elsewhere"'),
                    encoding="utf-8")
    read = parse_filing(path)
    assert read.numeric("us-gaap:Assets") == [] and read.numeric("us-gaap:Revenues")


def _one(filing, concept, dims=False):
    found = [f for f in filing.numeric(concept) if bool(f.context.dims) == dims]
    assert len(found) >= 1
    return found


def test_facts_read_scale_sign_formats_and_dimensions(filing):
    revenue = _one(filing, "us-gaap:Revenues")
    assert {f.value for f in revenue} == {Decimal(1_500_000_000)}
    assert _one(filing, "us-gaap:Revenues", dims=True)[0].context.dims == (
        ("srt:ProductOrServiceAxis", "x:CarsMember"),)
    assert _one(filing, "us-gaap:OperatingIncomeLoss")[0].value == Decimal(-12_500_000)
    assert _one(filing, "us-gaap:GoodwillImpairmentLoss")[0].value == 0
    assert _one(filing, "us-gaap:CommitmentsAndContingencies")[0].value is None
    eps = _one(filing, "us-gaap:EarningsPerShareDiluted")[0]
    assert (eps.value, eps.unit) == (Decimal("6.08"), "iso4217:USD/xbrli:shares")
    assert filing.dei("DocumentType") == "10-K"
    assert filing.contexts["end"].start is None and filing.contexts["fy"].days == 366


def test_cells_show_label_text_and_caption_scale(filing):
    hidden, shown = sorted(_one(filing, "us-gaap:Revenues"), key=lambda f: cell_of(f) is not None)
    assert cell_of(hidden) is None  # in ix:hidden: tagged, not shown
    cell = cell_of(shown)
    # The caption's first scale counts: shares "in thousands" is an exception within it.
    assert (cell.label, cell.text, cell.caption_scale) == ("Total net sales", "1,500", 6)
    loss = cell_of(_one(filing, "us-gaap:OperatingIncomeLoss")[0])
    assert loss.render() == "Loss from operations | (12.5)"
    assert cell_number(loss.text) == Decimal("-12.5")
    assert cell_number("—") == 0 and cell_number("$ 1,234") == 1234 and cell_number("n/a") is None


def test_resolve_checks_fact_row_and_caption(filing):
    r = resolve(filing, ITEMS["revenue"], YEAR)
    assert (r.value, r.cell.label) == (Decimal(1500), "Total net sales")
    assert resolve(filing, ITEMS["operating_income"], YEAR).value == Decimal("-12.5")
    with pytest.raises(Unverified, match="caption scale 3 != fact scale 6"):
        resolve(filing, ITEMS["total_assets"], END)  # the table says thousands, the fact millions
    with pytest.raises(Unverified, match="no tagged fact"):
        resolve(filing, ITEMS["net_income"], YEAR)


def test_evaluate_is_exact_and_refuses_anything_but_arithmetic():
    assert evaluate("(391035 - 383285) / 383285 * 100").quantize(Decimal("0.1")) == Decimal("2.0")
    assert evaluate("-3 - -1.5") == Decimal("-1.5")
    with pytest.raises(Unverified):
        evaluate("__import__('os')")


@pytest.mark.parametrize("short, scale, gold, unit, decimals, right", [
    ("391035", "million", "391035", "USD millions", 0, True),
    ("391,035,000,000", "", "391035", "USD millions", 0, True),
    ("391.035", "billion", "391035", "USD millions", 0, True),
    ("391.0", "billion", "391035", "USD millions", 0, False),   # not to the asked precision
    ("391035", "", "391035", "USD millions", 0, False),         # 391,035 dollars
    ("-10707", "million", "-10707", "USD millions", 0, True),
    ("(10,707)", "million", "-10707", "USD millions", 0, True),
    ("10707", "million", "-10707", "USD millions", 0, False),   # the sign matters
    ("3774694", "thousand", "3774694", "USD thousands", 0, True),
    ("3774.694", "million", "3774694", "USD thousands", 0, True),
    ("2.04", "", "2.0", "percent", 1, True),                    # within half a unit of 0.1
    ("2.06", "percent", "2.0", "percent", 1, False),
    ("24.0", "percent", "24.0", "percent", 1, True),
    ("1.07", "", "1.07", "ratio", 2, True),
    ("107", "percent", "1.07", "ratio", 2, True),
    ("6.08", "", "6.08", "USD per share", 2, True),
    (["6.08"], "", "6.08", "USD per share", 2, True),
    (["6.08", "6.13"], "", "6.08", "USD per share", 2, False),
    ("12.3", "percent", "12", "USD millions", 0, False),
    (None, "", "1", "USD millions", 0, False),
    ("about 5", "", "5", "USD millions", 0, False),
    # a count in the scale its unit's first word names
    ("9.1", "million", "9.1", "million square feet", 1, True),
    ("9,100,000", "", "9.1", "million square feet", 1, True),
    ("9.1", "", "9.1", "million square feet", 1, False),
    ("27000", "", "27000", "employees", 0, True),
])
def test_numeric_scoring(short, scale, gold, unit, decimals, right):
    assert numeric_right(short, scale, gold, unit, decimals) is right


def test_parse_number():
    assert parse_number("−5") == -5 and parse_number("$6.08") == Decimal("6.08")
    assert parse_number("12.3%") == Decimal("12.3") and parse_number("1 2") == 12
    assert parse_number("5 million") is None and parse_number("") is None


def test_text_scoring():
    assert normalize_text("The Nasdaq Stock Market LLC") == "nasdaq stock market llc"
    assert text_right("nasdaq stock market, LLC", "The Nasdaq Stock Market LLC")
    assert text_right(["Delaware"], "Delaware") and not text_right("Del.", "Delaware")
    assert text_right("june 30, 2025", "JUNE 30, 2025") and not text_right(None, "Delaware")
    record = {"type": "text", "answer": "Delaware"}
    assert is_right(record, {"short_answer": "delaware", "scale": ""})


ABSENT = {"type": "absent", "answer": None, "unit": "USD millions", "decimals": None}
SYMBOLS = {"type": "cover", "answer": ["BA", "BA-PRA"], "unit": "text", "decimals": None}
PICK = {"type": "compare", "answer": "Meta", "unit": "text", "decimals": None}
NUMBER = {"type": "segment", "answer": "201183", "unit": "USD millions", "decimals": 0}
COUNT = {"type": "text", "answer": "164000", "unit": "employees", "decimals": 0}


@pytest.mark.parametrize("short, right", [
    (None, True), ("", True), ("  ", True), ([], True), ([""], True),
    ("0", False), ("391035", False), ("not reported", False), (["1"], False),
])
def test_absent_gold_is_right_only_without_an_answer(short, right):
    assert is_right(ABSENT, {"short_answer": short, "scale": "million"}) is right
    assert no_answer(short) is right


@pytest.mark.parametrize("short, right", [
    (["BA", "BA-PRA"], True), (["ba-pra", "BA"], True), ("BA, BA-PRA", True),
    ("BA and BA-PRA", True), (["BA", "BA-PRA", "BA"], True),   # a set: a repeat counts once
    (["BA"], False), ("BA", False), (["BA", "BA-PRA", "BAC"], False), ([], False), (None, False),
])
def test_list_gold_is_a_set_of_spans(short, right):
    assert is_right(SYMBOLS, {"short_answer": short, "scale": ""}) is right


def test_spans_normalize_each_part():
    assert spans("The Nasdaq; NYSE and  Chicago") == {"nasdaq", "nyse", "chicago"}
    assert spans(["V26", " v29 "]) == {"v26", "v29"}


@pytest.mark.parametrize("short, right", [
    ("Meta", True), ("Meta Platforms", True), ("Meta Platforms, Inc.", True), ("meta", True),
    ("Apple", False), ("Meta and Apple", False), (None, False), (["Meta", "Apple"], False),
])
def test_compare_gold_names_the_company(short, right):
    assert is_right(PICK, {"short_answer": short, "scale": ""}) is right


@pytest.mark.parametrize("short, right", [("JCI", True), ("SJM", False), ("jci", False)])
def test_compare_gold_named_by_its_filings_symbol(short, right):
    """"JCI (September 30, 2024) or Smucker: which held more cash?" answered "JCI"."""
    record = {**PICK, "answer": "Johnson Controls", "operands": ["Johnson Controls", "Smucker"],
              "doc_ids": ["JCI_10-K_2024-09-30.htm", "SJM_10-K_2024-04-30.htm"]}
    assert is_right(record, {"short_answer": short, "scale": ""}) is right


def test_company_key_drops_legal_suffixes_not_names():
    assert company_key("The Coca-Cola Company") == company_key("Coca-Cola") == \
        company_key("COCA COLA CO") == "coca cola"  # the registrant's conformed name
    assert company_key("UnitedHealth Group Incorporated") == "unitedhealth"
    assert company_key("The Home Depot, Inc.") == "home depot"
    assert company_key("Group") == "group"   # a suffix alone is a name
    assert company_key("Union Pacific Corporation") != company_key("Union")


def test_count_gold_is_numeric():
    assert is_right(COUNT, {"short_answer": "164,000", "scale": ""})
    assert is_right(COUNT, {"short_answer": "164", "scale": "thousand"})
    assert not is_right(COUNT, {"short_answer": "164", "scale": ""})


def test_a_gold_without_its_rounding_is_as_precise_as_written():
    """Set 9's prose counts and amounts give no decimals: the scorer had raised TypeError."""
    record = {**COUNT, "unit": "employees", "decimals": None, "answer": "111600"}
    assert is_right(record, {"short_answer": "111,600", "scale": ""})
    assert not is_right(record, {"short_answer": "111,000", "scale": ""})
    amount = {**record, "unit": "USD billions", "answer": "6.10"}
    assert is_right(amount, {"short_answer": "6.1", "scale": "billion"})
    assert not is_right(amount, {"short_answer": "6.2", "scale": "billion"})



@pytest.mark.parametrize("unit, short, scale", [
    ("%", "14.4", "percent"), ("percentage points", "-10.8", "percent"), ("x", "4.34", ""),
])
def test_units_written_otherwise_are_the_same_units(unit, short, scale):
    record = {"type": "ratio", "answer": short, "unit": unit, "decimals": 1}
    assert is_right(record, {"short_answer": short, "scale": scale})
    assert not is_right({**record, "answer": "1.5"}, {"short_answer": short, "scale": scale})


@pytest.mark.parametrize("record, short, scale, wrong", [
    (NUMBER, "201183", "million", False),       # right
    (NUMBER, "201184", "million", True),        # a different number
    (NUMBER, "201183", "", True),               # the right digits at the wrong scale
    (NUMBER, None, "", False),                  # no number: not shown, not right either
    (NUMBER, "unknown", "", False),
    (ABSENT, "94036", "million", True),         # a number where the filing holds none
    (ABSENT, None, "", False),
    (PICK, "Apple", "", False),                 # a text gold: never a wrong number
    (SYMBOLS, ["1"], "", False),
])
def test_wrong_number_shown(record, short, scale, wrong):
    assert wrong_number(record, {"short_answer": short, "scale": scale}) is wrong


def _row(record: dict, qid: str, short, scale: str = "million") -> dict:
    r = {**record, "id": qid, "question": "q", "form": "10-K", "half": "a",
         "doc_id": "x-10-k-2025-01-01.html"}
    return result_row(r, 200, {"short_answer": short, "scale": scale, "sources": [{}]}, 1.0)


def test_report_counts_kinds_of_the_set_absent_and_wrong_numbers():
    rows = [_row(ABSENT, "a1", None), _row(ABSENT, "a2", "5"), _row(NUMBER, "n1", "201183"),
            _row(NUMBER, "n2", "7"), _row(PICK, "p1", "Meta Platforms")]
    lines = report(rows, set())
    assert lines[0].startswith("*** WRONG NUMBERS SHOWN: 2/5 (40.0%)")
    table = [line.split() for line in lines[1:]]
    by_name = {cols[0]: cols for cols in table if len(cols) == 4 and cols[1].isdigit()}
    assert by_name["absent"][1:3] == ["2", "50.0"] and by_name["segment"][1:3] == ["2", "50.0"]
    assert by_name["compare"][1:3] == ["1", "100.0"]
    assert "lookup" not in by_name    # the kinds of the set read, not a fixed list
    assert "absent questions answered with no number: 1/2 (50.0%)" in lines


def test_compare_questions_take_either_filing():
    r = {**PICK, "id": "c", "question": "q", "form": "10-K", "half": "b",
         "doc_id": "aapl-10-k-2024-11-01.html",
         "doc_ids": ["aapl-10-k-2024-11-01.html", "meta-10-k-2025-01-30.html"]}
    row = result_row(r, 200, {"short_answer": "Meta", "filing": {"doc_id": "meta-10-k-2025-01-30.html"}}, 1)
    assert row["em"] and row["right_filing"]


def test_sample_stratifies_by_the_sets_own_kinds():
    records = [{**NUMBER, "id": f"s{i}", "half": "a"} for i in range(6)] + \
        [{**ABSENT, "id": f"a{i}", "half": "a"} for i in range(4)] + \
        [{**ABSENT, "id": "b0", "half": "b"}]
    chosen = sample(records, "a", 5)
    assert Counter(r["type"] for r in chosen) == {"segment": 3, "absent": 2}
    assert len(sample(records, "all", None)) == 11


def test_filing_used_and_pdf_twins():
    assert used_filing({"filing": {"doc_id": "a.html"}, "sources": [{"doc_id": "b.html"}]}) == "a.html"
    by_citation = {"filing": None, "citations": [{"source_id": "s2"}],
                   "sources": [{"id": "s1", "doc_id": "b.html"}, {"id": "s2", "doc_id": "c.html"}]}
    assert used_filing(by_citation) == "c.html"
    assert used_filing({"citations": [{"source_id": "s9", "doc_id": "d.html"}],
                        "sources": []}) == "d.html"
    assert used_filing({"sources": [{"id": "s1", "doc_id": "b.html"}]}) == "b.html"
    assert used_filing({"sources": []}) is None
    assert same_filing("aapl-10-k-2024-11-01.pdf", "aapl-10-k-2024-11-01.html")
    assert not same_filing("aapl-10-q-2025-08-01.html", "aapl-10-k-2024-11-01.html")
    assert not same_filing(None, "aapl-10-k-2024-11-01.html")


FIELDS = {"id", "question", "type", "doc_id", "company", "form", "fiscal_year", "answer", "unit",
          "decimals", "facts", "derivation", "cells", "half"}
TYPES = {"lookup", "change", "margin", "ratio", "text"}
# The records on tests/data/filings' seven: nine a filing, two on IBM's 10-K (no statements)
VERIFIED_HERE = 6 * 9 + 2


def test_committed_question_set_is_complete():
    records = load_questions()
    assert len(records) >= 100
    assert len({r["id"] for r in records}) == len(records)
    counts = Counter(r["type"] for r in records)
    assert set(counts) == TYPES, counts
    assert set(Counter(r["half"] for r in records)) == {"a", "b"}
    for r in records:
        assert FIELDS <= set(r), r["id"]
        assert r["company"].split()[0].lower().replace("&", "") in r["question"].lower().replace(
            "&", "") or r["company"] in ("Johnson & Johnson", "Procter & Gamble"), r["id"]
        assert len(r["facts"]) == len(r["cells"]) >= 1, r["id"]
        if r["type"] != "text":
            Decimal(r["answer"])
            assert r["unit"] and isinstance(r["decimals"], int), r["id"]


def test_the_questions_on_the_filings_here_are_verified():
    """Every gold answer on a filing in tests/data/filings agrees with its tagged facts and
    shown cells (the whole set, on the shelf of 25: benchmarks/filings_gold.py verify)."""
    here = {p.name for p in FILINGS.glob("*.html")}
    records = [r for r in load_questions() if r["doc_id"] in here]
    assert {r["doc_id"] for r in records} == here
    assert len(records) == VERIFIED_HERE
    problems = [p for r in records for p in check_record(r, FILINGS)]
    assert problems == []


def test_pdf_corpora_link_the_pdf_twins(tmp_path):
    twins = sorted(p.name for p in (FILINGS / "pdf").glob("*.pdf"))
    assert twins, f"no PDF twins in {FILINGS / 'pdf'}"
    only = corpus_folder(FILINGS, Corpus.PDF_ONLY, tmp_path)
    assert sorted(p.name for p in only.iterdir()) == twins
    mixed = sorted(p.name for p in corpus_folder(FILINGS, Corpus.PDF, tmp_path).iterdir())
    assert len(mixed) == len(list(FILINGS.glob("*.htm*"))) and set(twins) <= set(mixed)
    assert all((only / name).resolve() == (FILINGS / "pdf" / name).resolve() for name in twins)


def test_a_pdf_dir_adds_twins_and_the_shared_ones_win(tmp_path):
    """--pdf-dir: a second folder's twins stand in for their HTML too; where both folders
    hold one, filings/pdf/'s is linked; --twins-only keeps those filings alone, as HTML."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    shared = FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf"
    for stem in ("aapl-10-k-2024-11-01", "nvda-10-k-2025-02-26"):
        shutil.copy(shared, shelf / f"{stem}.pdf")
    twins = pdf_twins(FILINGS, [shelf])
    assert twins["aapl-10-k-2024-11-01"] == FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf"
    assert twins["nvda-10-k-2025-02-26"] == shelf / "nvda-10-k-2025-02-26.pdf"
    only = corpus_folder(FILINGS, Corpus.PDF_ONLY, tmp_path / "engines", twins=twins)
    assert sorted(p.stem for p in only.iterdir()) == sorted(twins)
    assert (only / "nvda-10-k-2025-02-26.pdf").resolve() == (shelf / "nvda-10-k-2025-02-26.pdf")
    html = corpus_folder(FILINGS, Corpus.HTML, tmp_path / "engines", twins=twins,
                         stems={"nvda-10-k-2025-02-26"})
    assert [p.name for p in html.iterdir()] == ["nvda-10-k-2025-02-26.html"]


def test_a_shelf_of_pdf_filings_is_a_corpus(tmp_path):
    """--filings SHELF: a folder of PDF 10-Ks with no HTML beside them; its PDFs are the
    filings (under --corpus pdf-only as under html, where there is nothing else)."""
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    for name in ("EBAY_2019_10K.pdf", "INTEL_2020_10K.pdf"):
        shutil.copy(FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf", shelf / name)
    assert sorted(pdf_twins(shelf, [])) == ["EBAY_2019_10K", "INTEL_2020_10K"]
    only = corpus_folder(shelf, Corpus.PDF_ONLY, tmp_path / "engines", twins=pdf_twins(shelf, []))
    assert sorted(p.name for p in only.iterdir()) == ["EBAY_2019_10K.pdf", "INTEL_2020_10K.pdf"]
    html = corpus_folder(shelf, Corpus.HTML, tmp_path / "html")
    assert sorted(p.name for p in html.iterdir()) == ["EBAY_2019_10K.pdf", "INTEL_2020_10K.pdf"]


def test_heldout_set_is_complete_and_split():
    """The committed held-out set (benchmarks/filings_heldout_check.py verifies its gold
    against the filings themselves): every kind, in both halves, golds of the right shape."""
    records = load_questions(REPO / "benchmarks" / "data" / "filings_heldout.jsonl")
    assert_heldout_records(records, 160)
    assert all(FIELDS <= set(r) for r in records)


@pytest.mark.parametrize("shown, spoken", [
    ("--09-28", "September 28"), ("11/29", "November 29"), ("12-31", "December 31"),
    ("1/25", "January 25"), ("DECEMBER 31", "December 31"), ("September 28", "September 28"),
])
def test_heldout_check_reads_fiscal_year_ends(shown, spoken):
    assert month_day(shown) == spoken
