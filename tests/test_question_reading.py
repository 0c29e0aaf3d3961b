"""What a question asks, read from its words alone (no filing): its periods apart from the
filing it names to read them in, its companies and their names, and the measure with the
words that narrow it."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.rag.answers.company_names import (
    company_aliases,
    find_company,
    written_short_names,
)
from pipeline.rag.answers.filings.companies import Combine, combination, per_company
from pipeline.rag.answers.filings.fact_labels import member_words, split_name
from pipeline.rag.answers.filings.parts.qualifiers import word_runs
from pipeline.rag.answers.filings.parts.unknown_names import compared_name, unknown_names
from pipeline.rag.answers.named_filing import named_filing
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.periods import PeriodKind
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import label_stems, named_years, tokens
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


@pytest.mark.parametrize("text, months, year, end", [
    # analysts' shorthand for the first nine or six months
    ("Travelers top line for 9M 2023, $bn?", 9, 2023, None),
    ("revenue in H1 2023", 6, 2023, None),
    ("revenue in 1H 2023", 6, 2023, None),
    # "the prior-year quarter" set off by a comma describes the quarter named, moves no year
    ("Caterpillar operating profit in Q2 2022 (the prior-year quarter, three months ended "
     "June 30, 2022), in millions.", 3, 2022, date(2022, 6, 30)),
    ("What was Tesla's revenue in the year-ago quarter of Q2 2025?", 3, 2024, None),
])
def test_shorthand_periods_and_a_described_prior_year(text, months, year, end):
    (period,) = parse_query(text).periods
    assert (period.months, period.year, period.end) == (months, year, end)


def test_ampersand_shorthand_is_the_measure_in_words_a_name_word_too():
    """"G&A" had been the letter "g", "general" the company's ("General Dynamics"): any
    expense answered it (38,027 of costs and expenses, not 2,427)."""
    query = parse_query("General Dynamics G&A expense for 2023 — $ millions.",
                        {"general dynamics": "general dynamics", "GD": "general dynamics"})
    assert {"general", "administrative", "expense"} <= query.measure_words
    assert "dynamic" not in query.measure_words


def test_growth_asked_in_percent_after_a_comma_is_a_percent_change():
    query = parse_query("Growth in Marine Systems revenue at GD from 2022 to 2023, %, one decimal.")
    assert query.operation == "percent_change"


def test_a_later_word_of_the_name_the_filing_writes_alone_is_the_companys_name():
    """Disney's 10-Q (registrant WALT DISNEY CO/) had answered no question naming Disney."""
    alone = ["Disney+ grew and Disney reported results."] * 5
    assert written_short_names("walt disney", alone) == ["Disney"]
    # after a capitalized word it is part of another name; in lower case, a common word
    assert written_short_names("union pacific", ["Asia Pacific and Union Pacific."] * 10) == []
    assert written_short_names("general dynamics", ["Dynamics and market dynamics."] * 10) == []


@pytest.mark.parametrize("text, unit, decimals", [
    ("Total in $ millions, rounded to the nearest million.", "million", 0),
    ("What was revenue, to the nearest billion?", "billion", 0),
    ("rounded to the nearest $ million", "million", 0),
    ("in millions, one decimal", "million", 1),
])
def test_the_nearest_million_is_the_unit_and_its_rounding(text, unit, decimals):
    query = parse_query(text)
    assert (query.unit, query.decimals) == (unit, decimals)


def test_names_and_words():
    assert split_name("nvda:ComputeAndNetworkingSegmentMember") == \
        "Compute And Networking Segment Member"
    assert member_words("nvda:ComputeAndNetworkingSegmentMember") == {"compute", "networking"}
    assert member_words("country:US") == {"united", "state"}  # its name's, not its code's
    assert "datacenter" in word_runs("Data Center revenue") and "iphone" in word_runs("iPhone")
    assert combination("Which had higher revenue, A or B?") is Combine.HIGHER
    assert combination("Whose assets are smaller, A or B?") is Combine.LOWER
    assert combination("How much more did A earn than B?") is Combine.DIFFERENCE
    # a difference in another unit: "how many percentage points faster", "how many more"
    assert combination("How many percentage points faster did A's revenue grow than B's?") \
        is Combine.DIFFERENCE
    assert combination("How many more employees did A have than B?") is Combine.DIFFERENCE
    assert combination("The combined capex of A and B?") is Combine.SUM
    assert combination("What was revenue at A and B?") is Combine.EACH


def test_a_staff_count_in_any_words_asks_the_number_of_employees():
    """"How many people did Verizon employ", "workforce", "how many people work at": each asks
    the count a filing labels its employees; "how many of its employees ..." asks a part."""
    from pipeline.rag.answers.query import parse_query

    aliases = {"verizon": "verizon", "stryker": "stryker"}
    for text in ("How many people did Verizon employ at December 31, 2024?",
                 "What was Verizon's workforce at the end of 2024?",
                 "How many people work at Stryker?", "Stryker's headcount at year-end 2024?"):
        assert parse_query(text, aliases).measure_words == {"employee"}, text
    part = parse_query("How many of Stryker's employees are union represented?", aliases)
    assert part.measure_words == {"employee", "represented", "union"}


def test_named_years_keep_the_questions_order():
    assert named_years("Coca-Cola (2024) or Nike (fiscal 2025)") == [2024, 2025]
    assert named_years("Nike (FY2025) or Coca-Cola (2024), fiscal 2025 again") == [2025, 2024]


def test_names_are_capitalized_words_inside_a_sentence():
    words = frozenset({"whatsapp", "revenue", "roughly", "ep"})
    assert unknown_names("Roughly how much WhatsApp revenue? EPS too.", words,
                         {"revenue"}) == ["WhatsApp"]
    assert unknown_names("Revenue check: Roughly how much?", words, set()) == []


def test_a_choice_between_companies_asks_which():
    assert combination("Did Home Depot or UnitedHealth spend more on capex?") is Combine.HIGHER
    assert combination("How much more did Apple earn than NVIDIA?") is Combine.DIFFERENCE
    assert combination("Apple's revenue plus NVIDIA's, in millions?") is Combine.SUM


def test_a_ticker_or_a_names_word_is_a_company_only_as_written():
    """"COST" is Costco and "Best" Best Buy; "cost of goods sold" and "to the best of your
    abilities" name no company."""
    aliases = company_aliases([("Costco Wholesale Corp", "COST"),
                               ("Best Buy Co., Inc.", "BBY")])
    assert find_company("What was COST's revenue in 2024?", aliases) == "costco wholesale"
    assert find_company("What was the cost of goods sold in 2024?", aliases) is None
    assert find_company("To the best of your abilities: revenue in 2024?", aliases) is None
    assert find_company("What was Best's revenue in 2024?", aliases) == "best buy"


def test_the_year_of_a_filing_named_is_no_period_asked():
    q = parse_query("Per Apple's FY2024 10-K, what was its R&D expense in fiscal 2022?")
    assert (q.filing_year, [p.year for p in q.periods]) == (2024, [2022])
    q = parse_query("What was Apple's net income in its 2024 10-K?")  # the filing's own year
    assert (q.filing_year, [p.year for p in q.periods]) == (2024, [2024])
    assert parse_query("What was Apple's net income in fiscal 2024?").filing_year is None


def test_compared_names_are_not_periods():
    assert compared_name("How much more revenue in fiscal 2024 than in 2023?") is None
    assert compared_name("How much higher was EPS than FY2023's?") is None
    assert compared_name("How much more did Nvidia earn than Meta did in 2024?") == "Meta"


def test_company_and_legal_words_are_no_measure_words():
    aliases = company_aliases([("BOSTON PROPERTIES LIMITED PARTNERSHIP", "BXP"),
                               ("PFIZER INC.", "PFE")])
    q = parse_query("What was Boston Properties' total revenue in 2015?", aliases)
    assert not {"boston", "propertie", "properties"} & q.measure_words
    q = parse_query("Who reported more net income in 2020, Pfizer Inc. or BXP?", aliases)
    assert not {"who", "inc"} & q.measure_words


def test_legal_words_after_a_name_narrow_no_measure():
    """"Companies" of "Marsh & McLennan Companies revenue" is the name's, not a modifier
    of revenue (which the filing's labels would have to hold, or no number)."""
    aliases = company_aliases([("Marsh & McLennan Companies, Inc.", "MMC")])
    query = parse_query("Marsh & McLennan Companies revenue FY23?", aliases)
    assert query.company == "marsh and mclennan" and not query.modifiers
    assert "companie" not in query.words | query.measure_words


@pytest.mark.parametrize("text, how", [
    ("In percentage points, how much faster did GM's Q2 2023 revenue grow year over year than "
     "GameStop's Q2 2023 net sales? One decimal.", Combine.DIFFERENCE),
    ("Did GM's or GameStop's Q2 2023 net sales grow faster year over year?", Combine.HIGHER),
    ("Which grew its Q2 2023 net sales more slowly year over year, GM or GameStop?",
     Combine.LOWER),
])
def test_growth_set_against_another_company_s_is_each_one_s_growth(text, how):
    """"How much faster did GM's revenue grow than GameStop's" had looked up each company's
    revenue (no number, or the higher revenue's company for "more slowly")."""
    query = parse_query(text, {"GM": "general motors", "GameStop": "gamestop"})
    assert combination(query.text) is how
    assert {per_company(query, c).operation for c in query.companies} == \
        {Operation.PERCENT_CHANGE}
    # a comparison of figures, not of growth, stays a lookup of each
    plain = parse_query("Which had higher Q2 2023 net sales, GM or GameStop?",
                        {"GM": "general motors", "GameStop": "gamestop"})
    assert per_company(plain, plain.companies[0]).operation == Operation.LOOKUP


def test_a_metric_s_initials_spell_a_concept_s_words():
    """AMC tags Adjusted EBITDA as AdjustedEarningsBeforeInterestTaxesDepreciationAndAmortization:
    "Adjusted EBITDA" had been computed as operating income plus D&A (167 of its 189.6, a
    wrong number). A run of initials ends on no skipped word ("... depreciation and" is no
    EBITDA)."""
    from pipeline.rag.answers.filings.initialisms import with_initials

    label = split_name("amch:AdjustedEarningsBeforeInterestTaxesDepreciationAndAmortization")
    assert with_initials(label, frozenset({"ebitda"})) == {"adjusted", "ebitda"}
    assert with_initials("Cost of goods sold", frozenset({"cogs"})) == {"cogs"}
    assert with_initials("Operating income", frozenset({"ebitda"})) == {"operating", "income"}
