"""A computed answer needs every operand the question names: a year no table covers, one
period named as both ends of a change, a threshold that is no finite number. Then there is
no number, and the prose says what was missing; a failure inside the answer rules is no
answer either, never an exception (a 500)."""

from __future__ import annotations

import pytest

from pipeline.rag.answers.question import operation
from pipeline.rag.answers.short_answer import ShortAnswer, answer_question
from retriever_trt.documents.tables import parse_table

ROWS = [["", "December 31,", ""],
        ["(in millions)", "2019", "2018"],
        ["Revenue", "$503.6", "$476.9"],
        ["Operating income", "120.4", "98.2"]]


@pytest.mark.parametrize(("question", "missing"), [
    ("What was the revenue in 1850?", "the year 1850, which no table covers"),
    ("What was the percentage change in revenue between 1900 and 2019?", "the year 1900"),
    ("What was the percentage change in revenue between 2019 and 2019?",
     "2019 as both periods"),
    ("How many years did revenue exceed $inf?", "the threshold $inf is not a number"),
    ("How many years did revenue exceed $1e400 million?", "the threshold $1e400 is not"),
    ("How many years did revenue exceed $" + "9" * 56 + "?", "too large to compare"),
])
def test_a_missing_or_unusable_operand_gives_no_number_and_says_why(question, missing) -> None:
    q = operation(question)
    assert answer_question(q, [parse_table(ROWS)]) is None
    assert q.missing is not None and missing in q.missing
    prose = ShortAnswer(missing=q.missing).prose()
    assert prose.startswith("I cannot give a number:") and missing in prose


@pytest.mark.parametrize(("question", "short"), [
    ("What was the revenue in 2019?", "503.6"),
    ("What was the percentage change in revenue between 2018 and 2019?", "5.6"),
    ("How many years did revenue exceed $480 million?", "1"),
])
def test_operands_the_table_has_still_give_the_number(question, short) -> None:
    q = operation(question)
    got = answer_question(q, [parse_table(ROWS)])
    assert q.missing is None and got is not None and got.short_answer == short


def test_a_count_over_a_comparison_column_is_no_answer_not_an_exception() -> None:
    # The third column names 2020 only as a comparison: no period column holds that year
    # (the answer rules once raised IndexError here, a 500 for three held-out questions).
    rows = [["", "2019", "2018", "Change 2020 vs 2019"],
            ["Revenue", "503.6", "476.9", "5.6"],
            ["Operating income", "120.4", "98.2", "22.6"]]
    got = answer_question(operation("How many years did the change in revenue exceed $5?"),
                          [parse_table(rows)])
    assert got is None or got.short_answer is not None
