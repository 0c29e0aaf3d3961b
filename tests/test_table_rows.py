"""Answers about a table's rows: their list, their count, the highest or lowest of them."""

from __future__ import annotations

import pytest

from pipeline.rag.answers.question import operation
from pipeline.rag.answers.short_answer import answer_question
from pipeline.rag.answers.tables.table_rows import label_tokens
from retriever_trt.documents.tables import parse_table

SEGMENTS = [["(in millions)", "2019", "2018"],
            ["Transportation Solutions", "$7,821", "$8,290"],
            ["Industrial Solutions", "4,044", "3,856"],
            ["Communications Solutions", "1,583", "1,842"],
            ["Total net sales", "$13,448", "$13,988"]]

DEFERRED_TAX = [["", "2019", "2018"],
                ["Deferred tax assets:", "", ""],
                ["Accrued liabilities", "1,210", "1,100"],
                ["Net operating loss carryforwards", "3,400", "2,900"],
                ["Stock-based compensation", "640", "610"],
                ["Gross deferred tax assets", "5,250", "4,610"],
                ["Valuation allowance", "(900)", "(850)"],
                ["Net deferred tax assets", "4,350", "3,760"],
                ["Deferred tax liabilities:", "", ""],
                ["Depreciation", "(700)", "(650)"],
                ["Intangible assets", "(300)", "(320)"]]

# One block a period: the same rows under each date.
INTANGIBLES = [["", "Gross Carrying Amount", "Accumulated Amortization", "Net"],
               ["June 30, 2019", "", "", ""],
               ["Finite-lived intangible assets", "", "", ""],
               ["Customer relationships", "$1,597.6", "$(498.7)", "$1,098.9"],
               ["Developed technology", "3.4", "(1.5)", "1.9"],
               ["Total", "1,601.0", "(500.2)", "1,100.8"],
               ["June 30, 2018", "", "", ""],
               ["Finite-lived intangible assets", "", "", ""],
               ["Customer relationships", "$1,597.0", "$(405.6)", "$1,191.4"],
               ["Developed technology", "2.7", "(0.6)", "2.1"],
               ["Total", "1,599.7", "(406.2)", "1,193.5"]]


@pytest.mark.parametrize("question, op", [
    ("How many types of finite-lived intangible assets are there?", "row_count"),
    ("How many segments in 2019 had net sales above $2,000 million?", "row_count"),
    ("Which segment had the highest net sales in 2019?", "which_row"),
    ("What segment had the lowest net sales in 2018?", "which_row"),
    ("What was the highest net sales in 2019?", "lookup"),  # a figure, not a row
    ("Which segment had the highest net sales in the year ended December 31, 2019?", "which_row"),
    ("In which currency were the financial assets the smallest?", "which_row"),
    ("What types of accounts receivable are there?", "row_list"),
    ("Which countries are shown in the table of revenues by location?", "row_list"),
    # superlatives over years stay the years'
    ("In which year was the net sales of Industrial Solutions the highest?", "which_year"),
    ("How many years did net sales exceed $13,500 million?", "count"),
])
def test_operation_of_row_questions(question: str, op: str) -> None:
    assert operation(question).operation == op


def test_the_highest_row_in_the_year_asked_totals_left_out() -> None:
    table = parse_table(SEGMENTS)
    got = answer_question("Which segment had the highest net sales in 2019?", [table])
    assert got is not None and got.short_answer == "Transportation Solutions"
    got = answer_question("Which segment had the lowest net sales in 2018?", [table])
    assert got.short_answer == "Communications Solutions"
    assert [c.text for c in got.cells] == ["$8,290", "3,856", "1,842"]


def test_rows_past_a_threshold_are_counted_in_the_table_units() -> None:
    table = parse_table(SEGMENTS)  # in millions: "$2 billion" is 2,000 of them
    got = answer_question("How many segments in 2019 had net sales above $2 billion?", [table])
    assert got is not None and (got.short_answer, got.answer_type) == ("2", "count")
    assert got.derivation == "count of Transportation Solutions, Industrial Solutions"
    got = answer_question("How many segments in 2018 had net sales below $2,000 million?", [table])
    assert got.short_answer == "1"


def test_a_sections_rows_are_counted_without_its_gross_and_net_lines() -> None:
    got = answer_question("How many components are there under deferred tax assets?",
                          [parse_table(DEFERRED_TAX)])
    # "Gross ..." adds the three up; the valuation allowance after it and "Net deferred tax
    # assets" adjust that total, they are no components of it
    assert got is not None and got.short_answer == "3"
    got = answer_question("What are the components of deferred tax liabilities?",
                          [parse_table(DEFERRED_TAX)])
    assert got.short_answer == ["Depreciation", "Intangible assets"]


def test_rows_repeated_for_each_period_are_counted_once() -> None:
    got = answer_question("How many types of finite-lived intangible assets are there?",
                          [parse_table(INTANGIBLES)])
    assert got is not None and got.short_answer == "2"
    assert got.derivation == "count of Customer relationships, Developed technology"


def test_a_row_list_of_a_table_without_sections_is_its_rows() -> None:
    got = answer_question("What are the components of total net sales?", [parse_table(SEGMENTS)])
    assert got is not None
    assert got.short_answer == ["Transportation Solutions", "Industrial Solutions",
                                "Communications Solutions"]


RECEIVABLES = [["", "2019", "2018"],
               ["Accounts receivable", "", ""],
               ["Billed", "$ 127,406", "$ 156,948"],
               ["Unbilled", "—", "242,877"],
               ["Allowance for doubtful accounts", "(1,392)", "(1,324)"],
               ["Total accounts receivable", "126,014", "398,501"],
               ["Less estimated amounts not currently due", "—", "(6,134)"],
               ["Current accounts receivable", "$ 126,014", "$ 392,367"]]

ROLL_FORWARD = [["", "2019", "2018"],
                ["At beginning of the period", "1,212.9", "1,210.5"],
                ["Additions", "3.1", "2.4"],
                ["At end of the period", "1,216.0", "1,212.9"]]


def test_deductions_and_rows_past_the_sections_total_are_no_types() -> None:
    got = answer_question("What types of accounts receivable are there?", [parse_table(RECEIVABLES)])
    assert got is not None and got.short_answer == ["Billed", "Unbilled"]


def test_a_closing_balance_is_no_component_of_itself() -> None:
    got = answer_question("What are the components of the investments at end of the period?",
                          [parse_table(ROLL_FORWARD)])
    assert got is not None and got.short_answer == ["At beginning of the period", "Additions"]


def test_a_footnote_mark_on_a_label_is_left_out_of_the_listed_row() -> None:
    table = [["", "2019", "2018"], ["Amounts owed by subsidiaries1", "410.2", "300.1"],
             ["Taxation recoverable", "5.7", "2.0"], ["Other debtors", "0.9", "1.1"]]
    got = answer_question("What financial items are listed in the table?", [parse_table(table)])
    assert got is not None and got.short_answer == [
        "Amounts owed by subsidiaries", "Taxation recoverable", "Other debtors"]


@pytest.mark.parametrize("label, words", [
    ("Transfers (Note (b))", {"transfer"}), ("Revenue (a)", {"revenue"}),
    ("Other assets(1)", {"other", "asset"}), ("Cash (see Note 4)", {"cash"}),
    ("Order intake1", {"order", "intake"}), ("Level 2", {"level", "2"}),
])
def test_a_labels_words_leave_its_footnote_marks_out(label, words) -> None:
    assert label_tokens(label) == words
