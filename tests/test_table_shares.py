"""Shares of a whole, differences of two periods, and the columns they read: "percentage of
X in total Y", "proportion of X made up of Y", a column of expiry years beside the amounts."""

from __future__ import annotations

import pytest

from pipeline.rag.answers.question import operation
from pipeline.rag.answers.short_answer import answer_question
from retriever_trt.documents.tables import parse_table

FEES = [["", "2019 $", "2018 $"],
        ["Fees", "500", "450"],
        ["Audit fees", "55,000", "52,000"],
        ["Audit-related fees", "11,000", "9,000"],
        ["Total fees", "66,000", "61,450"]]

INVESTMENTS = [["(in thousands)", "2019", "2018"],
               ["Equity method", "8,000", "7,000"],
               ["Measurement alternative", "1,750", "1,500"],
               ["Total non-marketable investments", "9,750", "8,500"]]

CARRYFORWARDS = [["(dollars in thousands)", "Last Fiscal Year of Expiration", "Amount"],
                 ["Tax credit carryforwards:", "", ""],
                 ["Domestic–federal", "2029", "$39,784"],
                 ["Domestic–state", "2027", "$3,313"]]


@pytest.mark.parametrize("question, operands", [
    # "in total fees": the denominator is the total row, "total" kept
    ("What is the percentage of audit fees in total fees in 2019?",
     ["audit fees", "total fees in 2019?"]),
    # the whole named first, the part after "accounted for using" / "made up of"
    ("What percentage of total non-marketable investments were accounted for using the equity "
     "method in 2019?", ["the equity method in 2019?", "total non-marketable investments"]),
    ("What proportion of level 2 inputs is made up of money market funds?",
     ["money market funds?", "level 2 inputs"]),
    ("What was the state credit as a ratio of the federal credit?",
     ["What was the state credit", "the federal credit?"]),
])
def test_share_operands(question: str, operands: list[str]) -> None:
    assert operation(question).operands == operands


@pytest.mark.parametrize("question, table, short", [
    ("What is the percentage of audit fees in total fees in 2019?", FEES, "83.33"),
    ("What percentage of total non-marketable investments were accounted for using the equity "
     "method in 2019?", INVESTMENTS, "82.05"),
])
def test_a_share_divides_the_part_by_the_whole(question: str, table, short: str) -> None:
    got = answer_question(question, [parse_table(table)])
    assert got is not None and (got.short_answer, got.scale) == (short, "percent")


def test_a_column_of_years_is_dates_not_figures() -> None:
    table = parse_table(CARRYFORWARDS)
    got = answer_question("What was the domestic-state tax credit carryforwards as a ratio of "
                          "domestic-federal tax credit carryforwards?", [table])
    assert got is not None and got.short_answer == "0.08"  # 3,313 / 39,784, not 2027 / 2029
    got = answer_question("What was the last fiscal year of expiration for domestic-state tax "
                          "credit carryforwards?", [table])
    assert got is not None and (got.short_answer, got.scale) == ("2027", "")


def test_a_difference_between_one_row_s_two_periods_is_its_change() -> None:
    rows = [["($ in millions)", "2019", "2018"],
            ["Net cash provided by operating activities", "14,551", "15,386"],
            ["Net cash used for financing activities", "(42,056)", "(9,982)"]]
    table = parse_table(rows)
    got = answer_question("What is the difference between the net cash provided by operating "
                          "activities from 2018 to 2019?", [table])
    assert got is not None and got.short_answer == "-835"
    # "the difference in X between 2018 and 2019" stays a gap's size
    assert operation("What is the difference in total costs incurred between 2018 and "
                     "2019?").magnitude
