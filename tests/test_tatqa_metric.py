"""TAT-QA's official metric rules, on cases whose scores follow from those rules by hand."""

from __future__ import annotations

import sys

import pytest

from tests.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from tatqa_metric import get_metrics, normalize_answer, score, to_number  # noqa: E402


def q(answer, answer_type, scale=""):
    return {"answer": answer, "answer_type": answer_type, "scale": scale}


@pytest.mark.parametrize("text, expected", [
    ("(1200)", -1200),         # parentheses are a minus sign
    ("(1,200)", 1200),         # ... but the official pattern misses them around a separator
    ("1,200", 1200),
    ("5%", 0.05),              # a percentage is divided by 100
    ("3 million", 3_000_000),  # a scale word multiplies
    ("$12.5", 12.5),
    ("no number", None),
])
def test_to_number(text, expected):
    assert to_number(text) == expected


def test_normalize_answer_is_token_by_token():
    # Articles and punctuation go; each number token is canonicalised on its own.
    assert normalize_answer("The Net income.") == "net income"
    assert normalize_answer("$3 million") == "3 million"
    assert normalize_answer("(1200)") == "-1200"


@pytest.mark.parametrize("pred, pred_scale", [
    ("51.37", "percent"),    # the contract's form: bare number plus scale
    ("51.37%", ""),          # a % sign stands for the percent scale
    ("0.5137", ""),          # a lone unscaled number is also tried as is
    ("51.3712", "percent"),  # numbers are compared after rounding to two decimals
])
def test_percent_arithmetic_matches(pred, pred_scale):
    assert score(q(51.37, "arithmetic", "percent"), pred, pred_scale) == (1.0, 1.0)


def test_arithmetic_f1_is_exact_match():
    # 51.4 vs 51.37: close, but arithmetic answers score all or nothing.
    assert score(q(51.37, "arithmetic", "percent"), "51.4", "percent") == (0.0, 0.0)


def test_numbers_compare_after_scale():
    gold = q(1.2, "arithmetic", "thousand")
    assert score(gold, "1200", "") == (1.0, 1.0)
    assert score(gold, "1.2 million", "") == (0.0, 0.0)
    assert score(q(1200, "arithmetic", "thousand"), "1.2 million", "") == (1.0, 1.0)
    # A scale left out on a scaled span does not match: 5.2 is not 5.2 million.
    assert score(q(["5.2"], "span", "million"), "5.2", "") == (0.0, 0.0)
    assert score(q(["5.2"], "span", "million"), "5.2", "million") == (1.0, 1.0)


def test_negative_forms():
    gold = q(-1200, "arithmetic", "thousand")
    assert score(gold, "(1200)", "thousand") == (1.0, 1.0)
    assert score(gold, "-1200", "thousand") == (1.0, 1.0)
    assert score(gold, "1200", "thousand") == (0.0, 0.0)


def test_multi_span_is_a_bag():
    gold = q(["2019", "2018"], "multi-span")
    assert score(gold, ["2018", "2019"], "") == (1.0, 1.0)
    # One of two: precision 1, recall 1/2 -> F1 2/3, rounded to 0.67.
    assert score(gold, ["2019"], "") == (0.0, 0.67)


def test_span_token_f1():
    gold = q(["Interest income increased"], "span")
    assert score(gold, "the interest income.", "") == (0.0, 0.8)  # P 1, R 2/3
    assert score(gold, "Interest income increased", "") == (1.0, 1.0)


def test_count():
    gold = q(3, "count")
    assert score(gold, "3", "") == (1.0, 1.0)
    assert score(gold, "4", "") == (0.0, 0.0)


@pytest.mark.parametrize("pred", [None, "", []])
def test_empty_prediction_scores_zero(pred):
    assert score(q(["x"], "span"), pred, "") == (0.0, 0.0)


def test_pair_metric_aligns_spans_one_to_one():
    # Two gold spans, one prediction matching the second: F1 = (0 + 1) / 2.
    assert get_metrics(["net sales"], ["cost", "net sales"]) == (0.0, 0.5)


@pytest.mark.parametrize("gold, pred, pred_scale, expected", [
    (q(123.2, "arithmetic", "million"), 123200000, "", (1.0, 1.0)),  # a bare number, scaled out
    (q(123.2, "arithmetic", "million"), 123.2, "thousand", (0.0, 0.0)),
    (q(22.12, "arithmetic", "percent"), 0.2212, "", (1.0, 1.0)),
    (q(["22.12"], "span", "percent"), "-22.12", "", (0.0, 0.0)),  # the sign counts
    (q(["22.12"], "span", ""), "$22.12", "", (1.0, 1.0)),         # currency signs do not
    (q(["$23,234", "$234.12"], "multi-span"), ["234.12", "23,234"], "", (1.0, 1.0)),
    # Two of three spans: one bag of 3 tokens against 2 -> P 1, R 2/3, F1 0.8.
    (q(["singapore", "china", "usa"], "multi-span"), ["china", "singapore"], "", (0.0, 0.8)),
])
def test_mixed_forms(gold, pred, pred_scale, expected):
    assert score(gold, pred, pred_scale) == expected
