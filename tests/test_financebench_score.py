"""The FinanceBench benchmark's scorer (benchmarks/financebench_eval.py): a gold's number,
unit and decimals, the tolerance (half a unit of the gold's last decimal or 1% of the gold,
whichever is larger) and a response's number put in the gold's unit. Golds and questions
are written here; no FinanceBench data is read."""

from __future__ import annotations

import sys
from decimal import Decimal

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from financebench_eval import answer_in_unit, gold_number, matches, tolerance  # noqa: E402


@pytest.mark.parametrize("answer, question, expected", [
    ("$1577.00", "What is the capex (in USD millions)?", (Decimal("1577.00"), "USD million", 2)),
    ("$8.70", "What is net PPNE? Answer in USD billions.", (Decimal("8.70"), "USD billion", 2)),
    ("$12", "How much in USD thousands?", (Decimal(12), "USD thousand", 0)),
    ("$3.10", "What is the EPS?", (Decimal("3.10"), "USD", 2)),
    ("1.9%", "capex as a % of revenue", (Decimal("1.9"), "percent", 1)),
    ("-3.7", "What is the CCC?", (Decimal("-3.7"), "", 1)),
    ("24.26", "ratio", (Decimal("24.26"), "", 2)),
    ("1,234", "count", (Decimal(1234), "", 0)),
])
def test_gold_number(answer, question, expected):
    assert gold_number(answer, question) == expected


@pytest.mark.parametrize("answer", ["Yes", "The margin improved", "12 and 14", ""])
def test_a_gold_that_is_not_one_number(answer):
    assert gold_number(answer, "question") is None


def test_tolerance_is_the_larger_of_the_rounding_and_one_percent():
    assert tolerance(Decimal("0.01"), 2) == Decimal("0.005")      # rounding wins
    assert tolerance(Decimal("1577.00"), 2) == Decimal("15.77")   # 1% wins
    assert tolerance(Decimal("-3.7"), 1) == Decimal("0.05")


def test_usd_answers_are_put_in_the_gold_scale():
    assert answer_in_unit("1577", "million", "USD million") == Decimal(1577)
    assert answer_in_unit("1.577", "billion", "USD million") == Decimal(1577)
    assert answer_in_unit("1577000000", "", "USD million") == Decimal(1577)
    assert answer_in_unit("8700", "million", "USD billion") == Decimal("8.7")
    assert answer_in_unit("12", "percent", "USD million") is None


def test_percent_and_plain_golds():
    assert answer_in_unit("1.9", "percent", "percent") == Decimal("1.9")
    assert answer_in_unit("1.9", "", "percent") == Decimal("1.9")
    assert answer_in_unit("83", "percent", "") == Decimal("0.83")   # a ratio given as a percent
    assert answer_in_unit("0.83", "", "") == Decimal("0.83")
    assert answer_in_unit("0.83", "million", "") == Decimal(830000)  # a money figure is no ratio


@pytest.mark.parametrize("short, scale, gold, unit, decimals, right", [
    ("1577", "million", "1577.00", "USD million", 2, True),
    ("1590", "million", "1577.00", "USD million", 2, True),     # within 1%
    ("1600", "million", "1577.00", "USD million", 2, False),    # 1.5% off
    ("0.0149", "", "0.01", "", 2, True),                        # rounds to the gold
    ("0.016", "", "0.01", "", 2, False),
    ("30.81", "percent", "30.8", "percent", 1, True),
    ("-3.74", "", "-3.7", "", 1, True),
    ("3.7", "", "-3.7", "", 1, False),                          # the sign matters
    ("(1,577)", "million", "-1577", "USD million", 0, True),
    (None, "", "1.9", "percent", 1, False),
    ("", "", "1.9", "percent", 1, False),
    (["1.9"], "percent", "1.9", "percent", 1, True),
    (["1.9", "2.0"], "percent", "1.9", "percent", 1, False),
    ("n/a", "", "1.9", "percent", 1, False),
])
def test_matches(short, scale, gold, unit, decimals, right):
    assert matches(short, scale, Decimal(gold), unit, decimals) is right
