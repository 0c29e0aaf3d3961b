"""An analyst's directions around a question ("Using the information in the income
statement, ...", "Answer in USD millions.") are told apart from what it asks, so their words
name no measure or part of one."""

from __future__ import annotations

import pytest

from pipeline.rag.answers.instructions import asked_part
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import tokens


@pytest.mark.parametrize(("question", "asked"), [
    ("Using the information provided in the income statement, what is Apple's FY2024 net "
     "income? Answer in USD millions.", "what is Apple's FY2024 net income?"),
    ("What is NVIDIA's FY2025 capex? Respond by assuming the perspective of an investment "
     "analyst who can only use the details shown within the statement of cash flows.",
     "What is NVIDIA's FY2025 capex?"),
    ("By drawing conclusions from the information stated only in the statement of cash flows, "
     "what were Apple's dividends paid in FY2024?", "what were Apple's dividends paid in FY2024?"),
    ("What was Tesla's revenue in 2024, according to the information in its income statement?",
     "What was Tesla's revenue in 2024?"),
    # The sentence that asks stays whole when it has no "?"; a definition is no direction.
    ("Compute Apple's FY2024 current ratio. Round to two decimal places.",
     "Compute Apple's FY2024 current ratio."),
    ("Calculate the gross margin as gross profit divided by revenue. What was it for Apple in "
     "2024?", "Calculate the gross margin as gross profit divided by revenue. What was it for "
     "Apple in 2024?"),
    ("From FY2022 to FY2024, what was Apple's average revenue?",
     "From FY2022 to FY2024, what was Apple's average revenue?"),
])
def test_directions_are_not_the_ask(question: str, asked: str) -> None:
    assert asked_part(question) == asked


def test_direction_words_are_no_measure_words() -> None:
    q = parse_query("Based on the information presented in the balance sheet, what are "
                    "Apple's FY2024 inventories? Address the question by using the line items "
                    "shown, as an investment analyst would. Answer in USD millions.")
    # No company aliases are given here, so the company's name is a word of the ask too; the
    # year ("FY2024") is a period, no measure word.
    assert q.measure_words == frozenset(tokens("Apple's inventories"))
