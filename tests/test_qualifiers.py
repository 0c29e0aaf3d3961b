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
)
from pipeline.rag.answers.filings.companies import per_company
from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.parts.qualifiers import asked_parts
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import tokens
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
