"""A measure's qualifier the question states, matched by the fact the answer uses: net income
including the noncontrolling interests' share (ASC 810's consolidated net income), that share
alone, and the parent's. On Tesla's 10-Q and Apple's 10-K (tests/data/filings)."""

from __future__ import annotations

import pytest
from filing_shelf import ask, shelf_answerer

SHELF = ("tsla-10-q-2025-07-24.html", "aapl-10-k-2024-11-01.html")
QUARTER = "for the three months ended June 30, 2025"


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return shelf_answerer(tmp_path_factory.mktemp("shelf"), SHELF)


@pytest.mark.parametrize("question, value, concept", [
    # Tesla: 1,190 in all, 18 of it the noncontrolling interests', 1,172 its stockholders'
    (f"What was Tesla's net income including noncontrolling interests {QUARTER}?", "1190",
     "us-gaap:ProfitLoss"),
    (f"What was Tesla's consolidated net income {QUARTER}?", "1190", "us-gaap:ProfitLoss"),
    (f"What was Tesla's net income attributable to noncontrolling interests {QUARTER}?", "18",
     "us-gaap:NetIncomeLossAttributableToNoncontrollingInterest"),
    (f"What was Tesla's net income {QUARTER}?", "1172", "us-gaap:NetIncomeLoss"),
    # a company with no noncontrolling interests tags its one net income NetIncomeLoss
    ("What was Apple's consolidated net income in fiscal 2024?", "93736",
     "us-gaap:NetIncomeLoss"),
])
def test_net_income_with_or_without_the_noncontrolling_interests(answerer, question, value,
                                                                 concept):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, "million"), got.prose()
    assert got.citations[0]["fact"]["concept"] == concept


@pytest.mark.parametrize("question, value, scale", [
    # a ratio the question defines in a closing aside
    ("What share of Apple's fiscal 2024 net sales went to research and development (R&D "
     "expense divided by total net sales)? Percent, one decimal.", "8.0", "percent"),
    # "through" narrows no measure: the cash paid for repurchases
    ("How much cash did Apple return through buybacks in fiscal 2024?", "94949", "million"),
])
def test_a_defined_ratio_in_an_aside_and_a_preposition_before_the_measure(answerer, question,
                                                                          value, scale):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, scale), got.prose()
