"""Companies, cover facts and measures as questions name them, answered from real filings
(Apple's 10-K and 10-Q, NVIDIA's 10-K, in tests/data/filings): each company from its own
filing, each operand from its own side, a ratio's operands from the filing's labels, a
figure of another kind withheld, the cover's figures in its form's words."""

from __future__ import annotations

import pytest
from filing_shelf import ask, shelf_answerer

from pipeline.rag.answers.answer_checks import withheld
from pipeline.rag.answers.filings.parts.business_names import company_of_business
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import stems

SHELF = ("aapl-10-k-2024-11-01.html", "aapl-10-q-2025-08-01.html", "nvda-10-k-2025-02-26.html")


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return shelf_answerer(tmp_path_factory.mktemp("shelf"), SHELF)


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


def test_a_sentence_answers_only_about_the_measure_and_year_asked():
    from pipeline.rag.answers.compose import is_about as _is_about
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


def test_a_sentence_stating_its_period_s_length_states_the_one_asked():
    """"The six months" is no answer to the quarter asked, nor "the fourth quarter" to the
    year; a sentence naming both lengths, or none, may answer either."""
    from pipeline.rag.answers.compose import is_about as _is_about
    from pipeline.rag.answers.short_answer import ShortAnswer

    def said(sentence: str) -> ShortAnswer:
        return ShortAnswer("4754", "", "span", quote=sentence)

    quarter = parse_query("How many bitcoin did Acme sell in Q2 2023?")
    half = parse_query("How many bitcoin did Acme sell in the six months ended June 30, 2023?")
    year = parse_query("How many bitcoin did Acme sell in 2023?")
    six = said("Acme sold 4,754 bitcoin during the six months ended June 30, 2023.")
    assert not _is_about(six, quarter) and _is_about(six, half)
    both = said("Acme sold 1,854 and 4,754 bitcoin during the three and six months ended "
                "June 30, 2023, respectively.")
    assert _is_about(both, quarter) and _is_about(both, half) and not _is_about(both, year)
    fourth = said("Acme sold 1,854 bitcoin in the fourth quarter of 2023.")
    assert not _is_about(fourth, year) and _is_about(said("Acme sold 1,854 bitcoin in 2023."),
                                                     year)


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


@pytest.mark.parametrize("question, value", [
    # "Incorporated" of the name asks nothing ("UnitedHealth Group Incorporated"); the verb
    # in lower case does
    ("What was Apple Incorporated's public float per its 10-K cover?", "2628553000000"),
    ("Where is Apple incorporated?", "California"),
])
def test_a_word_of_the_companys_name_asks_no_cover_field(answerer, question, value):
    assert ask(answerer, question).short_answer == value
