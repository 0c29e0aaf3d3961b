"""Which columns and years a question reads, and its answer's scale: an Amount column over a
"% of total revenue" one, every year a header word names, a threshold some year passes."""

from __future__ import annotations

import pytest

from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.question import operation
from pipeline.rag.answers.short_answer import answer_question
from retriever_trt.documents.tables import parse_table

COST_OF_REVENUE = [["", "2019", "", "2018", ""],
                   ["", "Amount", "% of total revenue", "Amount", "% of total revenue"],
                   ["(In thousands)", "", "", "", ""],
                   ["Maintenance", "16,499", "2", "14,783", "2"],
                   ["Total cost of revenue", "$ 324,350", "45%", "296,783", "45%"]]

# "Revenues" heads only the first of its two year columns, as the table prints it.
SEGMENTS = [["", "Revenues", "", "Income (loss) from vessel operations", ""],
            ["(in thousands of U.S. dollars)", "2019", "2018", "2019", "2018"],
            ["Teekay LNG", "601,256", "510,762", "299,253", "148,599"],
            ["Teekay Tankers", "943,917", "776,493", "123,883", "7,204"]]

RND = [["", "2019", "2018", "2017"],
       ["(in thousands)", "", "", ""],
       ["Research and development", "4,804", "6,137", "7,949"],
       ["General and administrative", "18,328", "16,338", "15,682"]]

SHARES_OF_SALES = [["", "2019", "2018"],
                   ["Gross profit", "40.0", "50.9"],
                   ["Net other income", "1.6", "0.1"]]


def test_an_amount_is_read_from_the_amount_column_not_the_percent_one() -> None:
    got = answer_question("What is the average total cost of revenue for 2018 and 2019?",
                          [parse_table(COST_OF_REVENUE)])
    assert got is not None and (got.short_answer, got.scale) == ("310566.5", "thousand")
    got = answer_question("What was the total cost of revenue % in 2019?",
                          [parse_table(COST_OF_REVENUE)])
    assert got is not None and (got.short_answer, got.scale) == ("45", "percent")


@pytest.mark.parametrize("question, percent", [
    ("What was the percentage change in the net sales from JPKO between 2017 and 2018?", False),
    ("What is the revenue as a percentage of total assets in 2019?", False),
    ("What was the change in the percentage of sales from APAC between 2018 and 2019?", True),
    ("What was the gross margin % in 2019?", True),
])
def test_a_percent_figure_is_asked_apart_from_a_percent_computed(question, percent) -> None:
    assert operation(question).percent_operand is percent


def test_a_figure_the_question_calls_a_percentage_has_the_percent_scale() -> None:
    got = answer_question("What was the change in percentage of sales represented by gross "
                          "profit between 2018 and 2019?", [parse_table(SHARES_OF_SALES)])
    assert got is not None and (got.short_answer, got.scale) == ("-10.9", "percent")


def test_which_years_pass_a_threshold_in_the_columns_a_header_word_names() -> None:
    q = operation("In which years was Teekay LNG revenue less than 600,000 thousands?")
    assert q.operation == Operation.WHICH_YEAR and q.threshold == ("600,000", "thousand")
    got = answer_question(q, [parse_table(SEGMENTS)])
    assert got is not None and got.short_answer == "2018"


def test_a_count_over_a_range_of_years_reads_every_year_of_it() -> None:
    got = answer_question("From 2017 to 2019, how many of the years was the research and "
                          "development more than 5 million?", [parse_table(RND)])
    assert got is not None and (got.short_answer, got.derivation) == ("2", "count of 2018, 2017")


def test_a_table_some_year_passes_the_threshold_in_beats_one_none_does() -> None:
    # Neither table names the company: the one whose figures the threshold splits is asked.
    small = [["", "2019", "2018"], ["Research and development", "900", "800"]]
    got = answer_question("In which year was research and development more than 5,000 thousand?",
                          [parse_table(small), parse_table(RND)])
    assert got is not None and got.table_index == 1 and got.short_answer == ["2018", "2017"]


def test_a_table_whose_years_the_threshold_splits_beats_one_all_years_pass() -> None:
    large = [["", "2019", "2018", "2017"], ["(in thousands)", "", "", ""],
             ["Research and development", "90,000", "80,000", "70,000"]]
    for question in ("In which year was research and development more than 5,000 thousand?",
                     "How many years did research and development exceed 5,000 thousand?"):
        got = answer_question(question, [parse_table(large), parse_table(RND)])
        assert got is not None and got.table_index == 1, question


def test_a_change_marked_percent_is_a_percentage_change() -> None:
    assert operation("What is the change (%) for order intake between 2018 and 2019?").operation \
        == Operation.PERCENT_CHANGE


@pytest.mark.parametrize("question", [
    "What are the years included in the table?",
    # "under" compares only before a figure
    "What are the years included under the statement of cash flows table?",
    "For which year(s) is the amortization of purchased intangibles recorded?",
])
def test_the_years_a_table_covers(question) -> None:
    assert operation(question).operation == Operation.YEARS_LIST


@pytest.mark.parametrize("question, counts_years", [
    ("How many years did revenue exceed $5?", True),
    ("How many of the years had a gross margin above 40%?", True),
    # a count of people "at the end of fiscal year 2025" counts no years
    ("How many employees did NVIDIA have at the end of fiscal year 2025?", False),
    ("How many antidilutive shares were excluded for the year ended September 30, 2019?", False),
])
def test_a_count_of_years_is_asked_only_of_years(question, counts_years) -> None:
    assert (operation(question).operation == Operation.COUNT) is counts_years


def test_a_percentage_going_to_the_largest_names_no_row_and_a_deal_falling_through_no_change():
    assert operation("What percentage of Clorox's net sales went to its largest customer in "
                     "fiscal 2022?").operation == Operation.PROPORTION
    assert operation("Which segment had the largest revenue in 2019?").operation == \
        Operation.WHICH_ROW
    assert operation("What termination cost did NVIDIA record after the Arm deal fell "
                     "through?").operation == Operation.LOOKUP
    assert operation("By how much did revenue fall in 2024?").operation == Operation.CHANGE


def test_what_was_paid_is_its_size_though_the_statement_prints_a_deduction() -> None:
    flows = [["", "2022", "2021"], ["(in millions)", "", ""],
             ["Cash dividends paid to stockholders", "(571)", "(558)"],
             ["Net cash used for financing activities", "(1,016)", "(1,329)"]]
    paid = answer_question("How much did Clorox pay in cash dividends to stockholders in 2022?",
                           [parse_table(flows)])
    assert paid is not None and paid.short_answer == "571"
    # a figure asked as printed keeps its sign
    net = answer_question("What was the net cash used for financing activities in 2022?",
                          [parse_table(flows)])
    assert net is not None and net.short_answer == "-1016"
