"""The filings question set's oracle: the inline-XBRL fact parser on a snippet written
here, the gold checks, the corpora of HTML filings and their PDF twins, and the committed
jsonl verified against the real filings in tests/data/filings (all of it, against the whole
shelf of 25 filings: benchmarks/filings_gold.py verify). The scoring of /ask responses:
test_filings_score.py."""

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
from filings_eval import Corpus, corpus_folder, pdf_twins  # noqa: E402
from filings_facts import cell_number, cell_of, parse_filing  # noqa: E402
from filings_gold import load_questions  # noqa: E402
from filings_heldout_check import month_day  # noqa: E402
from filings_periods import Kind, Period  # noqa: E402
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
