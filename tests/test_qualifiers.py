"""The number asked for, or none: every qualifier a question states (company, period kind and
date, segment, measure) matched by the fact the answer uses, on real filings (Apple's 10-K
and 10-Q, NVIDIA's 10-K, in tests/data/filings). A figure the filing does not hold gets no
number, and the prose says what the filing does hold."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from filing_shelf import ask, shelf_answerer

from pipeline.rag.answers.answer_checks import withheld
from pipeline.rag.answers.company_names import (
    company_aliases,
    find_company,
    written_short_names,
)
from pipeline.rag.answers.filings.companies import Combine, combination, per_company
from pipeline.rag.answers.filings.fact_labels import FactLabels, member_words, split_name
from pipeline.rag.answers.filings.parts.business_names import company_of_business
from pipeline.rag.answers.filings.parts.qualifiers import (
    asked_parts,
    compared_name,
    unknown_names,
    word_runs,
)
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import named_years, stems, tokens
from retriever_trt.documents.model import Fact

SHELF = ("aapl-10-k-2024-11-01.html", "aapl-10-q-2025-08-01.html", "nvda-10-k-2025-02-26.html")


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return shelf_answerer(tmp_path_factory.mktemp("shelf"), SHELF)


@pytest.mark.parametrize("question, value", [
    # a segment's figure from its member's fact, never the consolidated 130,497
    ("What were Nvidia's Compute & Networking segment revenues in fiscal 2025?", "116193"),
    ("What was NVIDIA's Graphics segment operating income in fiscal 2024?", "5846"),
    ("What was NVIDIA's Data Center revenue for fiscal 2025?", "115186"),
    ("What was NVIDIA's total revenue in fiscal 2025?", "130497"),
    # a product named as one word though tagged aapl:IPhoneMember ("I Phone")
    ("What were Apple's iPhone net sales in fiscal 2023?", "200583"),
    ("What was Apple's Greater China net sales in fiscal 2024?", "66952"),
])
def test_a_part_of_the_company_is_answered_from_its_members_fact(answerer, question, value):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, "million"), got.prose()


def test_a_segment_the_filing_does_not_report_gets_no_number_and_the_list(answerer):
    got = ask(answerer, "How much revenue did NVIDIA's Smartphone segment generate in fiscal 2025?")
    assert got.short_answer is None
    assert "Compute And Networking" in got.missing and "Graphics" in got.missing


def test_a_part_named_in_part_is_not_answered_with_the_total(answerer):
    """"Asia" is a word of Apple's "Rest of Asia Pacific" segment, too few of its words to
    name it: the question asks for a part, so the company's 391,035 is no answer."""
    got = ask(answerer, "What were Apple's Asia net sales in fiscal 2024?")
    assert got.short_answer is None and "Rest Of Asia Pacific" in got.missing


@pytest.mark.parametrize("question, value", [
    ("What was Apple's revenue for the first nine months of fiscal 2025?", "313695"),
    ("What were Apple's total net sales for the three months ended June 28, 2025?", "94036"),
    ("What was Apple's revenue in the third quarter of fiscal 2025?", "94036"),
    # year to date: the months from the fiscal year's start (October) to the date, nine here;
    # "date" is no part of the measure ("date revenue")
    ("What was Apple's year-to-date revenue through June 28, 2025?", "313695"),
    ("What was Apple's year-to-date revenue through June 29, 2024?", "296105"),
    ("Apple's YTD net income in fiscal 2025?", "84544"),
    ("Apple's year-to-date revenue through September 28, 2024?", "391035"),
])
def test_quarters_and_months_to_date_are_told_apart(answerer, question, value):
    assert ask(answerer, question).short_answer == value


@pytest.mark.parametrize("question, held", [
    # the 10-Q of the third quarter holds neither the second quarter alone nor six months
    ("What was Apple's revenue in the second quarter of fiscal 2025 alone?",
     "3 months ended 2025-06-28"),
    ("What was Apple's net sales for the six months ended June 28, 2025?",
     "9 months ended 2025-06-28"),
    # six months to date at March 29, 2025: the third quarter's 10-Q holds neither
    ("What was Apple's year-to-date revenue through March 29, 2025?",
     "9 months ended 2025-06-28"),
    # a year before the 10-K's earliest column
    ("What were Apple's total net sales for fiscal 2019?", "12 months ended 2022-09-24"),
    ("What was NVIDIA's revenue in fiscal 2021?", "12 months ended 2023-01-29"),
    # the year of the filing named is which filing to read, not the period asked
    ("What was Apple's net income in fiscal 2019, per its FY2024 10-K?",
     "12 months ended 2022-09-24"),
])
def test_a_period_the_filing_lacks_gets_no_number_and_what_it_holds(answerer, question, held):
    got = ask(answerer, question)
    assert got.short_answer is None, got.prose()
    assert held in got.missing and got.prose().startswith("I cannot give a number")


def test_a_measure_outside_the_vocabulary_is_matched_by_the_filings_labels(answerer):
    got = ask(answerer, "What was Nvidia's goodwill at the end of fiscal 2025?")
    assert (got.short_answer, got.citations[0]["fact"]["concept"]) == ("5188", "us-gaap:Goodwill")


@pytest.mark.parametrize("question, value, scale", [
    # the company as the question names it, not its registrant name "NVIDIA CORP"
    ("Which had higher revenue in fiscal 2024, Apple or Nvidia?", "Apple", ""),
    ("Which had lower net income, Apple in fiscal 2024 or NVIDIA in fiscal 2025?",
     "NVIDIA", ""),
    # each company its own period, in the order both are named: 93,736 - 72,880
    ("How much more net income did Apple earn in fiscal 2024 than NVIDIA in fiscal 2025?",
     "20856", "million"),
    ("What was the combined goodwill of Apple (at September 28, 2024) and NVIDIA (at "
     "January 26, 2025)?", None, ""),
    # legal words after a name are the name's ("Inc.", "Corporation", "The ... Companies");
    # "latest fiscal years" are the 10-Ks' years, not the 10-Q's quarter (94,036)
    ("Which had higher revenue in their latest fiscal years, Apple Inc. or NVIDIA "
     "Corporation?", "Apple", ""),
    ("How much more revenue did Apple Inc. report than The NVIDIA Corporation in their "
     "latest fiscal years?", "260538", "million"),
    ("Add Apple's R&D in fiscal 2024 and NVIDIA's R&D in fiscal 2025: total in $ millions?",
     "44284", "million"),
])
def test_several_companies_are_answered_each_from_its_own_filing(answerer, question, value,
                                                                 scale):
    got = ask(answerer, question)
    assert got.short_answer == value and got.scale == scale, got.prose()
    if value is None:  # Apple tags no goodwill: no sum of one company's figure
        assert "not every company's figure" in got.missing
    else:
        assert {c["doc_id"] for c in got.citations} == {SHELF[0], SHELF[2]}


@pytest.mark.parametrize("question, value, scale", [
    # each side of the operator its own measure, part and period: 123,216 / 82,875
    ("Apple's operating income for fiscal 2024 divided by the operating income of NVIDIA's "
     "Compute & Networking segment for fiscal 2025? Multiple, two decimals.", "1.49", ""),
    # each side its own definition: 46.21% - 74.99%, in percentage points
    ("Apple's gross margin % for fiscal 2024 (gross margin / total net sales) minus NVIDIA's "
     "fiscal 2025 gross margin % (gross profit / revenue), in percentage points to one "
     "decimal.", "-28.8", "percent"),
    # the operands inside the parenthesis, the year theirs; "nearest million" rounds
    ("Add Apple's and NVIDIA's R&D (Apple's research and development in fiscal 2024 plus "
     "NVIDIA's research and development in fiscal 2025), to the nearest million.", "44284",
     "million"),
    # "the ratio of A's X to B's Y": 6.08 / 2.94
    ("Ratio of Apple's fiscal 2024 diluted EPS to NVIDIA's fiscal 2025 diluted EPS (x, two "
     "decimals).", "2.07", ""),
    # "A as a fraction / percentage of B": 391,035 / 130,497
    ("Apple's fiscal 2024 net sales as a fraction of NVIDIA's fiscal 2025 revenue (x, two "
     "decimals).", "3", ""),
    ("Apple's fiscal 2024 net sales as a percentage of NVIDIA's fiscal 2025 revenue, one "
     "decimal.", "299.7", "percent"),
])
def test_each_company_operand_is_read_from_its_own_side_of_the_operator(answerer, question,
                                                                       value, scale):
    """Both companies had read the whole question, the other's definition and part too, and
    got no number."""
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, scale), got.prose()
    assert {c["doc_id"] for c in got.citations} == {SHELF[0], SHELF[2]}


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


@pytest.mark.parametrize("question, value", [
    ("Who audits Apple's financial statements?", "Ernst & Young LLP"),
    ("Where is Apple's auditor located?", "San Jose, California"),
    ("What month and day does Apple's fiscal year end, per its 10-K?", "September 28"),
    # the latest filing's own year: the 10-Q's hidden --09-27 is fiscal 2025's end
    ("What month and day does Apple's fiscal year end?", "September 27"),
    ("What was Apple's public float?", "2628553000000"),
    # the cover's count (dei:EntityCommonStockSharesOutstanding), not the balance sheet's
    ("How many shares of Apple's common stock were outstanding per the cover of its 10-K?",
     "15115823000"),
    ("ZIP code of Apple's principal executive offices, per its 10-K cover?", "95014"),
    # dei:EntityAddressAddressLine1 (Disney's had been answered with the cover's whole text)
    ("Street address of Apple's principal executive offices?", "One Apple Park Way"),
    # every title of a kind registered, a span each
    ("List every note series Apple registered under Section 12(b), per its 10-K cover.",
     ["0.000% Notes due 2025", "0.875% Notes due 2025", "1.625% Notes due 2026",
      "2.000% Notes due 2027", "1.375% Notes due 2029", "3.050% Notes due 2029",
      "0.500% Notes due 2031", "3.600% Notes due 2042"]),
    ("List every class of common stock Apple has registered.",
     "Common Stock, $0.00001 par value per share"),
    # the exchange a class is registered on is no list of classes
    ("On which exchange are Apple's notes registered?", "The Nasdaq Stock Market LLC"),
])
def test_cover_facts_answer(answerer, question, value):
    assert ask(answerer, question).short_answer == value


def test_a_ratio_defined_with_an_operand_outside_the_vocabulary(answerer):
    """"interest expense" is no vocabulary item: NVIDIA's own label resolves it; 81,453 / 247."""
    got = ask(answerer, "What was NVIDIA's interest coverage ratio = operating income / interest "
                        "expense for fiscal 2025 (two decimals)?")
    assert got.short_answer == "329.77", got.prose()
    # NVIDIA tags it us-gaap:InterestExpenseNonoperating, printed "Interest expense"
    assert {c["fact"]["concept"] for c in got.citations} == {
        "us-gaap:OperatingIncomeLoss", "us-gaap:InterestExpenseNonoperating"}
    cagr = ask(answerer, "What was Nvidia's two-year revenue CAGR from fiscal 2023 to fiscal 2025, "
                         "computed as (FY2025 revenue / FY2023 revenue)^(1/2) - 1? Percent, one "
                         "decimal.")
    assert (cagr.short_answer, cagr.scale) == ("120.0", "percent")


def test_a_figure_of_the_wrong_kind_is_withheld(answerer):
    got = ask(answerer, "What was NVIDIA's operating income ratio for fiscal 2025?")
    assert got.short_answer is None and "ratio" in got.missing
    # a margin asked in dollars is its line item, as Apple prints "Gross margin" in dollars
    dollars = ask(answerer, "What was Apple's gross margin in dollars for fiscal 2024?")
    assert (dollars.short_answer, dollars.scale) == ("180683", "million")
    millions = ask(answerer, "What was Apple's gross margin for fiscal 2024 in millions?")
    assert (millions.short_answer, millions.scale) == ("180683", "million")
    percent = ask(answerer, "What was Apple's gross margin percentage for fiscal 2024?")
    assert (percent.short_answer, percent.scale) == ("46.21", "percent")


def test_withheld_reasons(answerer):
    facts = [f for f in answerer.info[SHELF[2]].facts
             if f.concept == "us-gaap:OperatingIncomeLoss" and not f.dimensions][:1]
    assert "ratio" in withheld("Operating income to interest expense ratio?", "million", facts,
                               False)
    assert "count" in withheld("How many employees did it have?", "million", facts, False)
    assert withheld("How many shares of stock were repurchased?", "million", facts, False) is None
    assert "same figure" in withheld("A divided by B?", "percent", facts * 2, True)
    assert withheld("What was operating income?", "million", facts, False) is None
    # a balance at a date is never what was earned over a period
    balance = [f for f in answerer.info[SHELF[2]].facts
               if f.concept == "us-gaap:StockholdersEquity" and not f.dimensions][:1]
    assert "earned" in withheld("How much did it earn from equity affiliates in fiscal 2025?",
                                "million", balance, False)
    assert withheld("What was its equity at January 26, 2025?", "million", balance, False) is None


def test_names_and_words():
    assert split_name("nvda:ComputeAndNetworkingSegmentMember") == \
        "Compute And Networking Segment Member"
    assert member_words("nvda:ComputeAndNetworkingSegmentMember") == {"compute", "networking"}
    assert member_words("country:US") == {"united", "state"}  # its name's, not its code's
    assert "datacenter" in word_runs("Data Center revenue") and "iphone" in word_runs("iPhone")
    assert combination("Which had higher revenue, A or B?") is Combine.HIGHER
    assert combination("Whose assets are smaller, A or B?") is Combine.LOWER
    assert combination("How much more did A earn than B?") is Combine.DIFFERENCE
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


def test_a_sentence_answers_only_about_the_measure_and_year_asked():
    from pipeline.rag.answers.compose import is_about as _is_about
    from pipeline.rag.answers.query import parse_query
    from pipeline.rag.answers.short_answer import ShortAnswer

    query = parse_query("What was NVIDIA's headcount at the end of fiscal 2025?", {"nvidia": "nvidia"})

    def said(value: str, sentence: str) -> ShortAnswer:
        return ShortAnswer(value, "", "span", quote=sentence)

    assert not _is_about(said("1.3", "Depreciation expense for fiscal years 2025, 2024 and 2023 "
                                     "was $1.3 billion, $894 million and $844 million."), query)
    assert not _is_about(said("29600", "Our headcount was 29,600 at the end of fiscal 2024."),
                         query)
    assert _is_about(said("36000", "At the end of fiscal 2025 our headcount was about 36,000."),
                     query)
    # a head count is told in the words the filing counts its people by
    assert _is_about(said("36000", "As of the end of fiscal year 2025, we had approximately "
                                   "36,000 employees in 38 countries."), query)
    where = parse_query("Where is Apple headquartered?", {"apple": "apple"})
    assert _is_about(said("Cupertino, California", "Our principal executive offices are in "
                                                   "Cupertino, California."), where)


def test_named_years_keep_the_questions_order():
    assert named_years("Coca-Cola (2024) or Nike (fiscal 2025)") == [2024, 2025]
    assert named_years("Nike (FY2025) or Coca-Cola (2024), fiscal 2025 again") == [2025, 2024]


def test_each_company_takes_the_year_named_beside_it(answerer):
    # a fiscal year named second was once given to the first company (Apple has no FY2025)
    got = ask(answerer, "Which had higher revenue, Apple (2024) or NVIDIA (fiscal 2025)?")
    assert got.short_answer == "Apple" and "the higher of Apple: 391035" in got.derivation


def test_an_operand_a_vocabulary_phrase_barely_names_is_read_by_the_labels(answerer):
    # "income taxes" names 2 of its 5 words: as "income tax expense" both operands would read
    # one fact (no number); the filing's label for pretax income is the denominator: the
    # income statement's 84,026, not the tax note's U.S. share of it (77,456, which gave 14.4)
    got = ask(answerer, "NVIDIA's effective tax rate for fiscal 2025, computed as income tax "
                        "expense / income from continuing operations before income taxes? "
                        "Percent, one decimal.")
    assert (got.short_answer, got.scale) == ("13.3", "percent")


@pytest.mark.parametrize("question, value", [
    # what was paid for a balance's item is the cash flow statement's payment, not the balance
    ("What did Apple pay for property, plant and equipment in fiscal 2024? $ millions.", "9447"),
    ("What was Apple's free cash flow in fiscal 2024, defined as cash generated by operating "
     "activities minus payments for property, plant and equipment? $M.", "108807"),
    # a word narrowing the measure, held by a label beside it: the balance sheet's row
    ("What was Apple's deferred revenue at the end of fiscal 2024?", "8249"),
    ("What were Apple's other non-current liabilities at the end of fiscal 2024?", "45888"),
])
def test_what_was_paid_and_a_narrowed_measure(answerer, question, value):
    assert ask(answerer, question).short_answer == value


def test_where_a_figure_is_printed_names_no_measure(answerer):
    got = ask(answerer, "How much goodwill did NVIDIA carry on its balance sheet at "
                        "January 26, 2025?")
    assert (got.short_answer, got.scale) == ("5188", "million")


def test_spent_asks_for_the_cash_paid_and_verbs_meet_nouns(answerer):
    assert stems(["repurchasing"]) == stems(["repurchase"]) == stems(["repurchased"])
    # the cash flow statement's payment (94,949), not the equity statement's value (95,000)
    got = ask(answerer, "How much did Apple spend repurchasing its common stock in fiscal 2024?")
    assert (got.short_answer, got.scale) == ("94949", "million")


def _region_fact(n: int, member: str) -> Fact:
    return Fact(f"f{n}", "us-gaap:Revenues", Decimal(n), "USD", date(2025, 6, 30),
                date(2025, 1, 1), (("srt:StatementGeographicalAxis", member),))


def test_each_printed_label_names_its_member_apart():
    """A member printed under "Europe/Middle East/Africa" in one table and beside other rows
    in another is named by the first label alone (their words together dilute it); of two
    members one label names equally, the one naming more of the question's words wins
    ("outside the U.S." over "the U.S.")."""
    facts = [_region_fact(1, "us-gaap:EMEAMember"), _region_fact(2, "us-gaap:EMEAMember"),
             _region_fact(3, "country:US"), _region_fact(4, "us-gaap:NonUsMember")]
    shown = {"f1": ("Europe/Middle East/Africa", ""), "f2": ("Aaa Ba1 Baa3 C", ""),
             "f3": ("Revenues - in the U.S.", ""), "f4": ("Revenues - outside the U.S.", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])

    def first(question: str) -> set[str]:
        words = set(tokens(question))
        parts = asked_parts(words, words - {"revenue"}, question, labels)
        return {m for _, m in parts.options[0]} if parts.options else set()

    assert first("IBM revenue from Europe/Middle East/Africa in 2025") == {"us-gaap:EMEAMember"}
    assert first("Revenue outside the U.S. in 2025") == {"us-gaap:NonUsMember"}
    assert first("Revenue in the U.S. in 2025") == {"country:US"}


@pytest.mark.parametrize("question", [
    # products no member of Apple's filing names: its total is no answer
    "How much revenue did Beats generate for Apple in fiscal 2024?",
    "What were Apple's Vision Pro net sales in fiscal 2024?",
])
def test_a_name_no_label_of_the_filing_holds_gets_no_number(answerer, question):
    got = ask(answerer, question)
    assert got.short_answer is None and "the question names" in got.missing, got.prose()
    assert "Greater China" in got.missing  # what it does report


def test_names_are_capitalized_words_inside_a_sentence():
    words = frozenset({"whatsapp", "revenue", "roughly", "ep"})
    assert unknown_names("Roughly how much WhatsApp revenue? EPS too.", words,
                         {"revenue"}) == ["WhatsApp"]
    assert unknown_names("Revenue check: Roughly how much?", words, set()) == []


@pytest.mark.parametrize("question, value", [
    ("Apple's fiscal 2024 revenue plus NVIDIA's fiscal 2025 revenue, in millions?", "521532"),
    ("Apple's fiscal 2024 total net sales minus NVIDIA's fiscal 2025 revenue, in millions?",
     "260538"),
    ("Add up Apple's fiscal 2024 and NVIDIA's fiscal 2025 net income, in millions?", "166616"),
    ("How much larger was Apple's fiscal 2024 revenue than NVIDIA's fiscal 2025 revenue, in "
     "millions?", "260538"),
    # percentages compare as they are: 46.21% and 74.99%
    ("Which company had the higher gross margin percentage, Apple in fiscal 2024 or NVIDIA in "
     "fiscal 2025?", "NVIDIA"),
    # "grow ... in percent" is a percent change; "full year" names a period, not a measure
    ("How much did NVIDIA's revenue grow in fiscal 2025 over fiscal 2024, in percent?", "114.20"),
    ("Apple net income, full year fiscal 2024, in millions?", "93736"),
    # "balance" and "how large" ask for the size of a figure, they name no measure
    ("How large was NVIDIA's goodwill balance at January 26, 2025, in millions?", "5188"),
])
def test_arithmetic_words_and_period_words(answerer, question, value):
    assert ask(answerer, question).short_answer == value


def test_stock_and_share_are_one_word_in_labels(answerer):
    """Apple prints "Share-based compensation expense"; "stock-based comp" is the same line
    (and "per the cash flow statement" names no cash)."""
    got = ask(answerer, "Apple's stock-based comp expense in fiscal 2024 per the cash flow "
                        "statement, in millions?")
    assert got.short_answer == "11688", got.prose()


def test_a_choice_between_companies_asks_which():
    assert combination("Did Home Depot or UnitedHealth spend more on capex?") is Combine.HIGHER
    assert combination("How much more did Apple earn than NVIDIA?") is Combine.DIFFERENCE
    assert combination("Apple's revenue plus NVIDIA's, in millions?") is Combine.SUM


def test_a_label_printed_for_every_segment_names_none():
    """A measure's row across a segment table ("Purchases of property ...") is printed for
    each segment: it names none of them; a name printed for two members (a country and
    the region named after it) still names both."""
    rows = {"f1": "Purchases of equipment", "f2": "Purchases of equipment",
            "f3": "Purchases of equipment", "f4": "Optum"}
    facts = [_region_fact(n, m) for n, m in ((1, "x:AMember"), (2, "x:BMember"),
                                            (3, "x:CMember"), (4, "x:CMember"))]
    facts = [Fact(f.fact_id, "us-gaap:PaymentsToAcquireProductiveAssets", f.value, f.unit, f.end,
                  f.start, (("us-gaap:StatementBusinessSegmentsAxis", f.dimensions[0][1]),))
             for f in facts]
    labels = FactLabels.of(facts, lambda f: (rows[f.fact_id], ""))
    segment = ("us-gaap:StatementBusinessSegmentsAxis", "x:CMember")
    assert labels.printed[segment] == (frozenset({"optum"}),)


def test_a_cover_figure_asked_at_a_date_is_that_dates_cover(answerer):
    """The 10-Q's cover (14,840,390,000 at July 18, 2025) is the latest filing's, but the
    date asked is the 10-K cover's."""
    got = ask(answerer, "About how many Apple common shares were outstanding as of October "
                        "18, 2024?")
    assert got.short_answer == "15115823000", got.prose()


def test_the_cover_figures_are_named_in_the_cover_forms_words(answerer):
    got = ask(answerer, "What was the aggregate market value of Apple's voting stock held by "
                        "non-affiliates as of March 29, 2024, in billions, one decimal?")
    assert (got.short_answer, got.citations[0]["fact"]["concept"]) == \
        ("2628.6", "dei:EntityPublicFloat")


@pytest.mark.parametrize("question, value", [
    # NVIDIA's segment names the company
    ("What was Data Center revenue in fiscal 2025, in millions?", "115186"),
    # another company named beside it: not NVIDIA's figure
    ("What was Intel's Data Center revenue in fiscal 2025?", None),
    # a word in lower case names no business
    ("What was data center revenue in fiscal 2025?", None),
])
def test_a_business_names_its_company(answerer, question, value):
    assert ask(answerer, question).short_answer == value


def test_a_business_two_companies_share_names_neither():
    known = {"acme": frozenset({frozenset({"cloud"})}), "beta": frozenset({frozenset({"cloud"})})}
    assert company_of_business("What was Cloud revenue in 2024?", known) is None
    assert company_of_business("What was Cloud revenue in 2024?", {"acme": known["acme"]}) == "acme"


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


def test_a_prior_year_is_read_from_the_filing_named(answerer):
    got = ask(answerer, "What were Apple's total net sales in fiscal 2022, per its FY2024 10-K?")
    assert got.short_answer == "394328", got.prose()


@pytest.mark.parametrize("question, rival", [
    ("How much more did Apple spend on R&D than Microsoft in fiscal 2024?", "Microsoft"),
    ("How much more did Apple spend on capex than PG&E Corporation in 2024?", "PG&E"),
    ("Was Apple's revenue higher than that of Samsung in 2024?", "Samsung"),
])
def test_a_figure_compared_with_a_company_not_in_scope_gets_no_number(answerer, question, rival):
    got = ask(answerer, question)
    assert got.short_answer is None and f"compares with {rival}" in got.missing, got.prose()


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


@pytest.mark.parametrize("question, value", [
    ("What share of Apple's fiscal 2024 net sales came from iPhone? Percent, one decimal.",
     "51.4"),  # 201,183 / 391,035
    ("What was iPhone's share of Apple's total net sales in fiscal 2024?", "51.45"),
    ("What percentage of Apple's fiscal 2024 net sales came from Greater China?", "17.12"),
])
def test_a_parts_share_is_its_figure_over_the_whole(answerer, question, value):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, "percent"), got.prose()
    assert len(got.citations) == 2


def test_a_share_is_never_the_parts_amount(answerer):
    got = ask(answerer, "What share of Apple's fiscal 2024 net sales came from Vision Pro?")
    assert got.short_answer is None, got.prose()


@pytest.mark.parametrize("question, value", [
    ("What was Apple's revenue in its latest fiscal year?", "391035"),
    ("What was Apple's annual revenue?", "391035"),
    ("Apple's full-year net income?", "93736"),
    ("What was Apple's revenue in the latest quarter?", "94036"),
])
def test_a_fiscal_year_named_without_its_number_is_the_latest_10_ks(answerer, question, value):
    assert ask(answerer, question).short_answer == value


def test_another_companys_name_names_no_part_of_this_one():
    """"Wholesale" of "Costco Wholesale" is Verizon's wholesale business's word: asked of
    Verizon alone, the question keeps no word of Costco's name, legal words included."""
    aliases = company_aliases([("Costco Wholesale Corp /NEW/", "COST"),
                               ("Verizon Communications Inc.", "VZ")])
    query = parse_query("Which had higher revenue in fiscal 2025, Costco Wholesale Corporation "
                        "or Verizon?", aliases)
    verizon = per_company(query, "verizon communications")
    assert "Wholesale" not in verizon.text and "Corporation" not in verizon.text
    assert "Verizon" in verizon.text and not {"wholesale", "corporation"} & verizon.words
    assert "wholesale" in per_company(query, "costco wholesale new").text.lower()


def test_legal_words_after_a_name_narrow_no_measure():
    """"Companies" of "Marsh & McLennan Companies revenue" is the name's, not a modifier
    of revenue (which the filing's labels would have to hold, or no number)."""
    aliases = company_aliases([("Marsh & McLennan Companies, Inc.", "MMC")])
    query = parse_query("Marsh & McLennan Companies revenue FY23?", aliases)
    assert query.company == "marsh and mclennan" and not query.modifiers
    assert "companie" not in query.words | query.measure_words


def test_a_filings_only_class_of_stock_is_the_companys():
    """Costco's cover tags its common stock's symbol with a class member and its shares
    outstanding with none: "shares of common stock" is the company's count there. Where the
    filing has two classes, the class named is one of them, never the total alone."""
    def fact(n: int, concept: str, dims: tuple) -> Fact:
        return Fact(f"f{n}", concept, Decimal(n), "shares", date(2025, 9, 30), None, dims)

    common = (("us-gaap:StatementClassOfStockAxis", "us-gaap:CommonStockMember"),)
    class_b = (("us-gaap:StatementClassOfStockAxis", "us-gaap:CommonClassBMember"),)
    shares = "dei:EntityCommonStockSharesOutstanding"
    question = "How many shares of common stock did Costco have outstanding?"
    words = set(tokens(question))

    def options(facts: list[Fact]) -> list[frozenset]:
        labels = FactLabels.of(facts, lambda f: ("", ""))
        return list(asked_parts(words, words - {"share", "outstanding"}, question,
                                labels).options)

    # the plain "Common Stock" member is the company's common stock, no part of it
    assert options([fact(1, "dei:Security12bTitle", common), fact(2, shares, ())]) == []
    two = options([fact(1, shares, class_b), fact(2, shares, (
        ("us-gaap:StatementClassOfStockAxis", "us-gaap:CommonClassAMember"),))])
    assert frozenset() not in two


def test_a_class_listed_beside_notes_and_the_plain_common_stock_is_the_only_class():
    """Mondelez's cover lists its Class A common stock, seven notes and the plain "Common
    Stock" member on one axis, and tags its shares outstanding with no member: "Class A
    common stock outstanding" is that count."""
    axis = "us-gaap:StatementClassOfStockAxis"
    members = ["us-gaap:CommonClassAMember", "mdlz:ZeroPointTwoFiftyPercentNotesDue2028Member",
               "us-gaap:CommonStockMember"]
    facts = [Fact(f"f{n}", "dei:Security12bTitle", Decimal(n), "", date(2024, 12, 31), None,
                  ((axis, m),)) for n, m in enumerate(members)]
    facts.append(Fact("f9", "dei:EntityCommonStockSharesOutstanding", Decimal(9), "shares",
                      date(2025, 1, 31)))
    labels = FactLabels.of(facts, lambda f: ("", ""))
    question = "How many shares of Class A common stock did Mondelez have outstanding?"
    words = set(tokens(question)) - {"mondelez"}
    parts = asked_parts(words, words - {"share", "outstanding"}, question, labels)
    assert list(parts.options) == [frozenset({(axis, members[0])}), frozenset()]


@pytest.mark.parametrize("question, value", [
    # "Incorporated" of the name asks nothing ("UnitedHealth Group Incorporated"); the verb
    # in lower case does
    ("What was Apple Incorporated's public float per its 10-K cover?", "2628553000000"),
    ("Where is Apple incorporated?", "California"),
])
def test_a_word_of_the_companys_name_asks_no_cover_field(answerer, question, value):
    assert ask(answerer, question).short_answer == value


def test_a_side_of_a_region_and_the_rest_of_a_part_must_be_said():
    """"Americas" names no "North America" (Starbucks's segment): the side of a region is
    part of its name. "Non-food revenue" is the rest of Food's, never Food's."""
    def fact(n: int, axis: str, member: str) -> Fact:
        return Fact(f"f{n}", "us-gaap:Revenues", Decimal(n), "USD", date(2025, 9, 28),
                    date(2024, 9, 30), ((axis, member),))

    segments, products = "us-gaap:StatementBusinessSegmentsAxis", "srt:ProductOrServiceAxis"
    facts = [fact(1, segments, "sbux:NorthAmericaSegmentMember"),
             fact(2, segments, "sbux:InternationalSegmentMember"),
             fact(3, products, "sbux:FoodMember")]
    labels = FactLabels.of(facts, lambda f: ("", ""))

    def first(question: str) -> set[str]:
        words = set(tokens(question)) - {"starbuck"}  # the company's name, as what_is_asked
        parts = asked_parts(words, words - {"revenue"}, question, labels)
        return {m for _, m in parts.options[0]} if parts.options else set()

    assert first("Starbucks Americas revenue in fiscal 2025") == set()
    assert first("Starbucks North America revenue in fiscal 2025") == \
        {"sbux:NorthAmericaSegmentMember"}
    assert first("Starbucks non-food revenue in fiscal 2025") == set()
    assert first("Starbucks food revenue in fiscal 2025") == {"sbux:FoodMember"}


def test_a_part_named_by_its_initials():
    """"FLNA" is PepsiCo's Frito-Lay North America segment, as its tables head it; the
    measure's own letters ("EPS") name no "Energy Production Services"."""
    def fact(n: int, member: str) -> Fact:
        return Fact(f"f{n}", "us-gaap:Revenues", Decimal(n), "USD", date(2024, 12, 28),
                    date(2023, 12, 31), (("us-gaap:StatementBusinessSegmentsAxis", member),))

    labels = FactLabels.of([fact(1, "pep:FritoLayNorthAmericaMember"),
                            fact(2, "x:EnergyProductionServicesMember")], lambda f: ("", ""))

    def first(question: str, measure: set[str]) -> set[str]:
        words = set(tokens(question))
        parts = asked_parts(words, words - measure, question, labels)
        return {m for _, m in parts.options[0]} if parts.options else set()

    assert first("PepsiCo FLNA revenue in 2024", {"revenue"}) == {"pep:FritoLayNorthAmericaMember"}
    assert first("PepsiCo diluted EPS in 2024", {"diluted", "eps"}) == set()


def test_a_name_all_of_the_measures_words_names_no_part():
    """Linde registers its common stock and notes as classes: "repurchases of common stock"
    names the measure, not the CommonStockMember (whose figure it has none of)."""
    def fact(n: int, member: str) -> Fact:
        return Fact(f"f{n}", "dei:Security12bTitle", Decimal(n), "shares", date(2024, 12, 31),
                    None, (("us-gaap:StatementClassOfStockAxis", member),))

    labels = FactLabels.of([fact(1, "us-gaap:CommonStockMember"),
                            fact(2, "lin:A1.625NotesDue2025Member")], lambda f: ("", ""))
    question = "What were Linde's repurchases of common stock in 2024?"
    words = set(tokens(question))
    parts = asked_parts(words, words - {"repurchase", "common", "stock"}, question, labels)
    assert not parts.options


def test_a_member_ending_in_other_is_the_rest_and_a_remainder_word_alone_names_none():
    """us-gaap:ManufacturedProductOtherMember (Vertex prints it "Other product revenues") is
    the rest of the products, named only by "other": "product revenues" is never its 781.5.
    "held by non-affiliates" (the public float's words) names no "Non-US" member, nor asks
    for a part at all; "OEM and Other" stays the OEM line's."""
    def fact(n: int, axis: str, member: str) -> Fact:
        return Fact(f"f{n}", "us-gaap:Revenues", Decimal(n), "USD", date(2024, 12, 31),
                    date(2024, 1, 1), ((axis, member),))

    products, places = "srt:ProductOrServiceAxis", "srt:StatementGeographicalAxis"
    labels = FactLabels.of([fact(1, products, "us-gaap:ManufacturedProductOtherMember"),
                            fact(2, places, "syk:NonUsMember"),
                            fact(3, products, "x:OEMAndOtherMember")], lambda f: ("", ""))

    def parts(question: str, measure: set[str]):
        words = set(tokens(question))
        return asked_parts(words, words - measure, question, labels)

    def first(question: str, measure: set[str]) -> set[str]:
        got = parts(question, measure)
        return {m for _, m in got.options[0]} if got.options else set()

    assert first("Vertex product revenues in 2024", {"revenue"}) == set()
    assert first("Vertex other product revenues in 2024", {"revenue"}) == \
        {"us-gaap:ManufacturedProductOtherMember"}
    held = parts("market value of voting stock held by non-affiliates", {"market", "value"})
    assert not held.options and not held.unknown
    assert first("Revenue of its OEM line in 2024", {"revenue"}) == {"x:OEMAndOtherMember"}


@pytest.mark.parametrize("question, value", [
    ("How much did Apple make from iPhone in fiscal 2024?", "201183"),
    ("How much did NVIDIA earn from its Graphics segment in fiscal 2025?", "14304"),
])
def test_what_a_company_earned_from_a_part_it_names_is_that_parts_revenue(answerer, question,
                                                                          value):
    assert ask(answerer, question).short_answer == value


def test_what_a_company_took_in_is_never_a_cost():
    """"How much did it generate from operations": the filing's "Total operating expenses"
    row holds the words, and had been the answer."""
    cost = Fact("f1", "us-gaap:OperatingExpenses", Decimal(1), "USD", date(2025, 1, 26),
                date(2024, 1, 29), ())
    why = withheld("How much did NVIDIA generate from operations in fiscal 2025?", "million",
                   [cost], False)
    assert why is not None and "cost or expense" in why
    assert withheld("How much did NVIDIA spend on operating expenses in fiscal 2025?",
                    "million", [cost], False) is None


def test_what_it_came_from_must_all_name_the_part(answerer):
    """"Automotive leasing" is Tesla's line: NVIDIA's Automotive platform is named by one of
    its words, and its revenue is no answer. "Graphics segment": the cue word is neither the
    part's nor a measure's ("Other segment items" had answered)."""
    got = ask(answerer, "How much did Nvidia earn from Automotive leasing in FY25, in $ millions?")
    assert got.short_answer is None
    got = ask(answerer, "How much did NVIDIA earn from its Graphics segment in fiscal 2025?")
    assert got.short_answer == "14304", got.prose()


@pytest.mark.parametrize("question, value", [
    ("Which product line had more net sales at Apple in fiscal 2024, iPhone or Services?",
     "iPhone"),
    ("Which had higher revenue in fiscal 2025, NVIDIA's Compute & Networking segment or its "
     "Graphics segment?", "Compute & Networking"),
    ("What were the combined net sales of Apple's iPhone and Mac in fiscal 2024?", "231167"),
    # in the order named: Graphics less Compute & Networking (14,304 - 116,193)
    ("How much more revenue did NVIDIA's Graphics segment have than its Compute & Networking "
     "segment in fiscal 2025?", "-101889"),
])
def test_two_parts_of_one_company_are_compared_each_from_its_own_fact(answerer, question, value):
    got = ask(answerer, question)
    assert got.short_answer == value, got.prose()
    assert len(got.citations) == 2


@pytest.mark.parametrize("question, value", [
    # Products (294,866) is iPhone, Mac, iPad and Wearables together: no peer of theirs
    ("Which product line had more net sales at Apple in fiscal 2024?", "iPhone"),
    ("Which product line had the least net sales at Apple in fiscal 2024?", "iPad"),
    ("Which segment had the highest revenue at NVIDIA in fiscal 2025?", "Compute & Networking"),
    ("Which NVIDIA segment had the lower operating income in fiscal 2024?", "Graphics"),
    # a geographic axis mixes countries, regions and their rest: no set of peers
    ("Which region had the highest net sales at Apple in fiscal 2024?", None),
])
def test_which_part_a_figure_is_of_is_a_name_never_a_figure(answerer, question, value):
    """Apple's 294,866 of Products had answered "Which product line had more net sales?"."""
    got = ask(answerer, question)
    assert got.short_answer == value, got.prose()


@pytest.mark.parametrize("question", [
    "Which year had higher net sales at Apple, fiscal 2023 or fiscal 2024?",
    "Was Apple's net income higher in fiscal 2024 or fiscal 2023?",
])
def test_a_choice_between_what_the_question_names_is_never_one_figure(answerer, question):
    """Apple's fiscal 2024 net sales (391,035) had answered which year's were higher."""
    got = ask(answerer, question)
    assert got.short_answer is None and "which of what it names" in got.missing


@pytest.mark.parametrize("question, value", [
    # each company's own kind of period: Apple's nine months (25,684) of its 10-Q,
    # NVIDIA's year (12,914)
    ("Which spent more on R&D: Apple in the first nine months of fiscal 2025, or NVIDIA in "
     "fiscal 2025?", "Apple"),
    # "showed" is how the cover gives it, no word of the measure
    ("Which company showed more shares outstanding on its cover: Apple or NVIDIA?", "NVIDIA"),
    # the part as the question writes it, "of" and all, not its first word
    ("Was Rest of Asia Pacific or Japan the bigger segment by net sales in Apple's fiscal "
     "2024?", "Rest of Asia Pacific"),
    # what a part sold is its net sales: Mac 29,984, iPad 26,694
    ("Which product line sold more in Apple's fiscal 2024: Mac or iPad?", "Mac"),
])
def test_what_is_compared_is_read_at_its_own_period_and_named_as_written(answerer, question,
                                                                         value):
    assert ask(answerer, question).short_answer == value
