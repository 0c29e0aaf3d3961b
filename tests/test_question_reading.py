"""What a question asks, read from its words: the periods apart from the filing it names to
read them in, and the measure with the words that narrow it."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.rag.answers.named_filing import named_filing
from pipeline.rag.answers.periods import PeriodKind
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import label_stems, tokens
from pipeline.rag.answers.vocabulary.formula import terms


@pytest.mark.parametrize("text, kind, months, year, end", [
    # the shorthand with its year's two digits written onto it
    ("CVX capex, 1H23 ($M)?", PeriodKind.MONTHS, 6, 2023, None),
    ("revenue 9M23", PeriodKind.MONTHS, 9, 2023, None),
    # "at" before a company's name is no balance date; "year ended" a date is a year
    ("U.S. Retail Pet Foods net sales at J.M. Smucker in fiscal 2023 (year ended April 30, "
     "2023)", PeriodKind.YEAR, 12, 2023, date(2023, 4, 30)),
    ("Total assets at June 30, 2024?", PeriodKind.INSTANT, None, 2024, date(2024, 6, 30)),
    ("Cash as of the fiscal year ended September 28, 2024", PeriodKind.YEAR, 12, 2024,
     date(2024, 9, 28)),
])
def test_period_words(text, kind, months, year, end):
    (period,) = parse_query(text).periods
    assert (period.kind, period.months, period.year, period.end) == (kind, months, year, end)


def test_a_quarterly_report_named_by_quarter_and_plain_year_is_not_the_period_asked():
    """"UPS full-year 2022 revenue, per the Q2 2023 10-Q" had been read as Q2 2022 and
    answered with the 10-Q's quarter: the year asked is 2022, the report Q2 2023's."""
    filing = named_filing("UPS full-year 2022 revenue, per the Q2 2023 10-Q?")
    assert (filing.quarter, filing.year) == (2, 2023)
    (period,) = parse_query("UPS full-year 2022 revenue, per the Q2 2023 10-Q?").periods
    assert (period.kind, period.year, period.quarter) == (PeriodKind.YEAR, 2022, None)
    # a year of two digits names a report only after "fiscal" or "FY"
    assert named_filing("revenue in Q2 23 10-Q").quarter is None


@pytest.mark.parametrize("text, measure", [
    ("Johnson Controls' income from continuing operations before income taxes, fiscal 2024",
     "pretax income"),
    ("Chevron Upstream segment earnings for Q2 2023", "net income"),
    ("Apple diluted earnings 2024", "diluted eps"),
    ("Apple earnings per share 2024", "basic eps"),
    ("Apple retained earnings 2024", "retained earnings"),
])
def test_measure_phrasings(text, measure):
    assert parse_query(text).measure.name == measure


def test_a_defined_tax_rate_divides_by_pretax_income():
    """Both operands had read the income tax expense ("income taxes" inside the second)."""
    metric = parse_query("Chevron effective tax rate for Q2 2023 (income tax expense / income "
                         "before income tax expense), %").measure
    assert metric.denominator == "pretax income"


def test_a_class_of_stock_after_the_measure_narrows_it():
    """"Dividends JCI paid on preferred shares" had been answered with its common dividends."""
    assert parse_query("Dividends JCI paid on preferred shares in fiscal 2024?").modifiers == \
        {"preferred"}
    assert parse_query("Dividends paid to common shareholders in 2024").modifiers == set()


def test_ordinary_shares_are_common_stock_in_a_filings_labels():
    """Johnson Controls' "ordinary shares outstanding" had read no cover fact."""
    assert label_stems(tokens("ordinary shares outstanding")) == \
        label_stems(tokens("common stock outstanding"))


_JCI = {"JCI": "johnson controls international",
        "johnson controls": "johnson controls international", "j m smucker": "j m smucker"}


def test_a_name_written_with_initials_and_a_verb_of_carrying_are_no_measure_words():
    """"J.M. Smucker" had left "jm" (and "carried" stayed) among the measure words: no label
    held them, and neither company's goodwill was read."""
    query = parse_query("Which carried more goodwill: Johnson Controls or J.M. Smucker?", _JCI)
    assert query.measure_words == {"goodwill"}


@pytest.mark.parametrize("text, operands", [
    # the company a definition names is the question's; the unit after a dash ends it
    ("JCI dividend payout ratio for fiscal 2024: payment of cash dividends / net income "
     "attributable to Johnson Controls, in %, one decimal.",
     ["phrase:payment of cash dividends", "net income"]),
    ("JCI debt-to-equity, defined as (short-term debt + long-term debt) / total Johnson "
     "Controls shareholders' equity — x, two decimals.",
     ["phrase:short-term debt", "long-term debt", "total shareholders' equity"]),
])
def test_a_definitions_operands(text, operands):
    assert [t.item for t in terms(parse_query(text, _JCI).measure.expression())] == operands


def test_initials_the_question_spells_out_are_no_measure_word():
    """"SJM SD&A — selling, distribution, and administrative expenses": "sd" had been a
    measure word no label holds, and Smucker's 1,446.2 got no number."""
    query = parse_query("SJM SD&A — selling, distribution, and administrative expenses — for "
                        "FY24, $ millions (one decimal)?", {"SJM": "j m smucker"})
    assert query.measure_words == {"selling", "distribution", "administrative", "expense"}
    # initials said alone stay the measure's
    assert "ebita" in parse_query("JCI segment EBITA for FY24").measure_words
