"""The filings question set's scoring of /ask responses: numbers at the scale and
precision asked, text, lists and company names, absent golds, wrong numbers shown, the
report's counts, the sample of a half and the filing an answer used."""

from __future__ import annotations

import sys
from collections import Counter
from decimal import Decimal

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from filings_eval import report, result_row, sample  # noqa: E402
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
    # a gold listing several spans in one string is answered by those spans, in any order
    gold = "Oliver Wyman, Lippincott and NERA Economic Consulting"
    assert text_right(["Lippincott", "Oliver Wyman", "NERA Economic Consulting"], gold)
    assert not text_right(["Oliver Wyman", "Lippincott"], gold)


def test_a_duration_stated_with_its_unit_answers_a_gold_in_that_unit():
    assert numeric_right("18 months", "", "18", "months", 0)
    assert numeric_right("20-year", "", "20", "years", 0)
    assert not numeric_right("18 months", "", "18", "years", 0)
    assert not numeric_right("3 years", "", "18", "years", 0)
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
