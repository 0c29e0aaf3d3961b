"""Which part of the company a question names, when more than one member could be meant: a
country by its code in capitals, the rest of a whole only when asked as such, a label printed
for a fact of two dimensions naming neither, a capitalized name before a generic word. On
Apple's and NVIDIA's 10-Ks (tests/data/filings) and on facts built here."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from filing_shelf import ask, shelf_answerer

from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.parts.qualifiers import asked_parts
from pipeline.rag.answers.question_words import tokens
from retriever_trt.documents.model import Fact

SHELF = ("aapl-10-k-2024-11-01.html", "nvda-10-k-2025-02-26.html", "v-10-k-2024-11-13.html")


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return shelf_answerer(tmp_path_factory.mktemp("shelf"), SHELF)


@pytest.mark.parametrize("question, value", [
    # country:US, whose code is too short to match as a word run, named "U.S." or "US"
    ("What were Apple's U.S. net sales in fiscal 2024?", "142196"),
    ("What were Apple's US net sales in fiscal 2024?", "142196"),
    # ... or written in full, where the filing prints the code
    ("What were Apple's net sales in the United States in fiscal 2024?", "142196"),
    # "us" in lower case is a pronoun: the company's total
    ("Can you tell us Apple's total net sales in fiscal 2024?", "391035"),
    # "OEM and Other" is the OEM line: a remainder word only at its start makes a remainder
    ("What was NVIDIA's OEM revenue in fiscal 2025?", "389"),
    ("What were Apple's net sales in other countries in fiscal 2024?", "181887"),
    # "product" names ProductMember, a part, not a narrower measure; "iPhone" is the name
    ("What were Apple's iPhone product net sales in fiscal 2024?", "201183"),
])
def test_a_member_named_as_a_reader_names_it(answerer, question, value):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, "million"), got.prose()


def test_the_rest_of_a_region_is_no_answer_for_the_region(answerer):
    """Apple reports "Rest of Asia Pacific", not Asia Pacific: two of its three words are no
    name for it, so the question asks for a part Apple does not report."""
    got = ask(answerer, "What were Apple's Asia Pacific net sales in fiscal 2024?")
    assert got.short_answer is None and "Rest Of Asia Pacific" in got.missing, got.prose()


def test_a_country_a_filing_does_not_tag_gets_no_number(answerer):
    """Visa tags no revenue by country: its total is no answer for its U.S. revenues ("U.S.
    GAAP" names no place)."""
    got = ask(answerer, "What were Visa's U.S. net revenues in fiscal 2024?")
    assert got.short_answer is None and "no segment or region" in got.missing, got.prose()
    got = ask(answerer, "What was Visa's net income under U.S. GAAP in fiscal 2024?")
    assert (got.short_answer, got.scale) == ("19743", "million"), got.prose()


def _fact(n: int, *dimensions: tuple[str, str]) -> Fact:
    return Fact(f"f{n}", "us-gaap:Revenues", Decimal(n), "USD", date(2024, 12, 31),
                date(2024, 1, 1), dimensions)


def _first(labels: FactLabels, question: str) -> set[str]:
    words = set(tokens(question))
    parts = asked_parts(words, words - {"revenue", "sale"}, question, labels)
    return {m for _, m in parts.options[0]} if parts.options else set()


def test_a_label_printed_for_two_dimensions_names_neither_member():
    """Boeing prints "U.S. government revenue" for a fact of its Global Services segment and
    a customer axis's member: the label names the customer, so "US revenue" is country:US,
    and "non-U.S." is NonUsMember (printed "International"), whose "Non" the question must
    say, or "outside" or "international"."""
    segment = ("us-gaap:StatementBusinessSegmentsAxis", "ba:GlobalServicesMember")
    facts = [_fact(1, segment, ("srt:MajorCustomersAxis", "ba:USGovernmentMember")),
             _fact(2, ("srt:StatementGeographicalAxis", "country:US")),
             _fact(3, ("srt:StatementGeographicalAxis", "us-gaap:NonUsMember")),
             _fact(4, segment)]
    shown = {"f1": ("U.S. government revenue", "Global Services"), "f2": ("United States", ""),
             "f3": ("International", ""), "f4": ("Global Services", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _first(labels, "What was Boeing's US revenue in 2024?") == {"country:US"}
    assert _first(labels, "What was Boeing's non-U.S. revenue in 2024?") == \
        {"us-gaap:NonUsMember"}
    assert _first(labels, "Boeing's revenue from outside the U.S. in 2024") == \
        {"us-gaap:NonUsMember"}
    assert _first(labels, "Boeing's international revenue in 2024") == {"us-gaap:NonUsMember"}


def test_continuing_operations_name_no_part_of_the_company():
    """RTX tags pension service cost with StatementOperatingActivitiesSegmentAxis's
    continuing-operations member: "from continuing operations" asks for the company's
    operating cash flow, not for a segment it has no cash flow of."""
    axis = ("us-gaap:StatementOperatingActivitiesSegmentAxis",
            "us-gaap:SegmentContinuingOperationsMember")
    labels = FactLabels.of([_fact(1, axis)], lambda f: ("Continuing operations", ""))
    question = "RTX's operating cash flow from continuing operations in 2024"
    words = set(tokens(question))
    parts = asked_parts(words, words - {"cash", "flow"}, question, labels)
    assert not parts.options and not parts.unknown and axis not in labels.members


def test_remainders_and_capitalized_names_rank_first():
    """Adobe's "Other" Americas (adbe:OtherAmericasMember) is not its Americas; Amgen's
    "Prolia product sales" names Prolia, not the ProductMember printed "Product sales"."""
    facts = [_fact(1, ("srt:StatementGeographicalAxis", "adbe:OtherAmericasMember")),
             _fact(2, ("srt:StatementGeographicalAxis", "srt:AmericasMember")),
             _fact(3, ("srt:ProductOrServiceAxis", "us-gaap:ProductMember")),
             _fact(4, ("srt:ProductOrServiceAxis", "amgn:ProliaMember"))]
    shown = {"f1": ("Other", ""), "f2": ("Total Americas", ""), "f3": ("Product sales", ""),
             "f4": ("Prolia", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _first(labels, "What was Adobe's Americas revenue in fiscal 2024?") == \
        {"srt:AmericasMember"}
    assert _first(labels, "What was Adobe's revenue from other Americas countries?") == \
        {"adbe:OtherAmericasMember"}
    assert _first(labels, "What were Amgen's Prolia product sales in 2024?") == \
        {"amgn:ProliaMember"}


def test_a_segment_named_with_a_country_code_and_parts_of_two_axes():
    """"Walmart US" is the Walmart U.S. segment, whose whole name the question says, before
    country:US; "Google Services" names the segment alone, not also the Google advertising
    product line whose "Google" it shares (its "revenue" is the measure's word)."""
    segment, product = "us-gaap:StatementBusinessSegmentsAxis", "srt:ProductOrServiceAxis"
    facts = [_fact(1, (segment, "wmt:WalmartUSMember")),
             _fact(2, ("srt:StatementGeographicalAxis", "country:US")),
             _fact(3, (segment, "goog:GoogleServicesMember")),
             _fact(4, (product, "goog:GoogleAdvertisingRevenueMember")),
             _fact(5, (segment, "goog:GoogleServicesMember"),
                   (product, "goog:GoogleAdvertisingRevenueMember"))]
    shown = {"f1": ("Walmart U.S.", ""), "f2": ("U.S. operations", ""),
             "f3": ("Google Services", ""), "f4": ("Google advertising", ""), "f5": ("", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _first(labels, "What was the Walmart US segment's revenue in fiscal 2025?") == \
        {"wmt:WalmartUSMember"}
    assert _first(labels, "What was Alphabet's Google Services revenue in 2024?") == \
        {"goog:GoogleServicesMember"}


def test_parts_of_two_axes_are_both_matched_or_no_number(answerer):
    """Apple tags no iPhone sales by region: the Americas' sales of every product (167,045)
    are no answer for its iPhone sales there."""
    got = ask(answerer, "What were Apple's iPhone net sales in the Americas in fiscal 2024?")
    assert got.short_answer is None and "Americas" in got.missing, got.prose()
    assert ask(answerer, "What were Apple's Americas net sales in fiscal 2024?").short_answer \
        == "167045"


def test_a_sum_is_rounded_once_not_each_operand(answerer):
    """Apple's 391,035 and NVIDIA's 60,922 (fiscal 2024) add to 451.957 billion: 452.0 to one
    decimal (shown "452"), where the rounded operands (391.0 + 60.9) would give 451.9."""
    got = ask(answerer, "What was the combined revenue of Apple and NVIDIA in fiscal 2024, in "
                        "billions to one decimal?")
    assert (got.short_answer, got.scale) == ("452", "billion"), got.prose()


def test_a_member_named_by_part_of_a_better_ones_words_is_no_fallback():
    """"United Kingdom" is country:GB; where GB has no revenue, country:US (named by
    "United" alone) is no answer for it."""
    facts = [_fact(1, ("srt:StatementGeographicalAxis", "country:GB")),
             _fact(2, ("srt:StatementGeographicalAxis", "country:US"))]
    shown = {"f1": ("United Kingdom", ""), "f2": ("United States", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    question = "What was the company's revenue in the United Kingdom in 2024?"
    words = set(tokens(question))
    parts = asked_parts(words, words - {"revenue"}, question, labels)
    assert [{m for _, m in o} for o in parts.options] == [{"country:GB"}]


def test_a_capitalized_name_saying_more_than_a_member_names_none():
    """"Financial Service segment" is no segment of a filing whose ServiceMember is printed
    "Sales of services": the name says "Financial", which that member's name lacks, so no
    services figure answers for it; "Global Services" names its member."""
    facts = [_fact(1, ("srt:ProductOrServiceAxis", "us-gaap:ServiceMember")),
             _fact(2, ("us-gaap:StatementBusinessSegmentsAxis", "ba:GlobalServicesMember"))]
    shown = {"f1": ("Sales of services", ""), "f2": ("Global Services", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _first(labels, "What was the revenue of Boeing's Financial Service segment?") == set()
    assert _first(labels, "What was the revenue of Boeing's Global Services segment?") == \
        {"ba:GlobalServicesMember"}


def test_a_country_joined_to_another_place_is_the_region_they_make():
    """Meta tags country:US ("United States") and its "United States and Canada (1)" region:
    the region is named whole (its footnote's mark is no word of its name), the country alone
    by its name."""
    facts = [_fact(1, ("srt:StatementGeographicalAxis", "country:US")),
             _fact(2, ("srt:StatementGeographicalAxis", "meta:USCanadaMember"))]
    shown = {"f1": ("United States", ""), "f2": ("United States and Canada (1)", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _first(labels, "What was Meta's revenue from United States and Canada in 2024?") == \
        {"meta:USCanadaMember"}
    assert _first(labels, "What was Meta's revenue from the United States in 2024?") == \
        {"country:US"}
