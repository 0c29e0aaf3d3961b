"""How a question's words name a part of the company among a filing's members, on the real
`FactLabels` of facts tagged as filings tag them: a place by its ISO code, a subsegment
within its segment, a part the rest of its whole shares words with, and the words of the
measure's own label (none of which names a part)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pipeline.rag.answers.filings.fact_labels import FactLabels, member_label, member_words
from pipeline.rag.answers.filings.parts.asked_countries import country_name_words
from pipeline.rag.answers.filings.parts.place_codes import place_name
from pipeline.rag.answers.filings.parts.qualifiers import asked_parts
from pipeline.rag.answers.filings.parts.unknown_names import unknown_names
from pipeline.rag.answers.question_words import tokens
from retriever_trt.documents.model import Fact

GEOGRAPHY = "srt:StatementGeographicalAxis"
SEGMENTS = "us-gaap:StatementBusinessSegmentsAxis"
SUBSEGMENTS = "us-gaap:SubsegmentsAxis"


def _fact(n: int, *dims: tuple[str, str], concept: str = "us-gaap:Revenues") -> Fact:
    return Fact(f"f{n}", concept, Decimal(n), "USD", date(2024, 12, 28), date(2024, 1, 1),
                tuple(dims))


def _options(labels: FactLabels, question: str, measure: frozenset[str] = frozenset(),
             company: str = "") -> list[set[str]]:
    words = set(tokens(question)) - set(tokens(company))
    parts = asked_parts(words, words - {"revenue"}, question, labels, lambda: measure)
    return [{m for _, m in option} for option in parts.options]


def test_a_place_code_reads_as_the_places_name():
    assert place_name("country:CN") == "China"
    assert place_name("country:KR") == "Korea"  # "Korea" asks for the south's, not "South ..."
    assert place_name("stpr:CA") == "California" and place_name("country:CA") == "Canada"
    assert place_name("country:ZZ") is None and place_name("us-gaap:EMEAMember") is None
    assert member_words("country:TW") == frozenset({"taiwan"})
    assert member_label("country:DE") == "Germany"
    assert member_words("currency:EUR") == frozenset()


def test_a_country_is_named_by_its_name_whatever_the_filing_prints_beside_it():
    """AMD prints country:CN as "China (including Hong Kong)": "China" is one word of four
    there, too few to name it, and its revenue had been answered with the company's total."""
    facts = [_fact(1, (GEOGRAPHY, "country:CN")), _fact(2, (GEOGRAPHY, "country:US")),
             _fact(3, (GEOGRAPHY, "country:SG"))]
    shown = {"f1": ("China (including Hong Kong)", ""), "f2": ("United States", ""),
             "f3": ("Singapore", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _options(labels, "What was AMD's revenue from China in 2024?") == \
        [{"country:CN"}]
    assert _options(labels, "AMD revenue in the United States, 2024") == [{"country:US"}]
    assert "china" in country_name_words(labels) and "singapore" in country_name_words(labels)


def test_a_country_the_filing_does_not_tag_is_a_part_it_does_not_report():
    facts = [_fact(1, (GEOGRAPHY, "country:CN")), _fact(2, (GEOGRAPHY, "country:JP"))]
    labels = FactLabels.of(facts, lambda f: ("", ""))
    assert _options(labels, "What was the revenue from Japan in 2024?") == [{"country:JP"}]
    question = "What was the revenue from Brazil in 2024?"
    assert _options(labels, question) == []
    # the name the filing's labels do not hold: the answer says so, never the total
    assert unknown_names(question, frozenset(tokens(question)) - {"revenue"},
                         country_name_words(labels)) == ["Brazil"]


def test_a_subsegment_is_answered_with_the_segment_it_is_tagged_within():
    """Abbott tags Key Emerging Markets on a subsegment axis, always beside its segment
    (Established Pharmaceutical Products): the fact of both is the subsegment's figure."""
    epd = (SEGMENTS, "abt:EstablishedPharmaceuticalProductsMember")
    key, other = (SUBSEGMENTS, "abt:KeyEmergingMarketsMember"), \
        (SUBSEGMENTS, "abt:OtherEmergingMarketsMember")
    facts = [_fact(1, epd, key), _fact(2, epd, other), _fact(3, epd),
             _fact(4, epd, key, (GEOGRAPHY, "country:US"))]
    labels = FactLabels.of(facts, lambda f: ("", ""))
    assert _options(labels, "Abbott's revenue in Key Emerging Markets in 2024") == \
        [{"abt:KeyEmergingMarketsMember", "abt:EstablishedPharmaceuticalProductsMember"}]
    # "emerging markets" are the key ones and the other ones together: neither alone
    assert _options(labels, "Abbott's revenue in emerging markets in 2024") == []


def test_a_place_is_never_taken_as_within_a_segment():
    """A country reported inside one segment only is that segment's country figure, not the
    company's: no question naming the country alone gets it."""
    seg = (SEGMENTS, "x:DevicesMember")
    labels = FactLabels.of([_fact(1, seg, (GEOGRAPHY, "country:US")), _fact(2, seg)],
                           lambda f: ("", ""))
    assert labels.within == {}


def test_the_measures_own_label_names_no_part():
    """"aggregate market value" is the public float's label: Abbott's Key Emerging Markets
    holds "markets", which alone had made the question one about a part it cannot name."""
    facts = [_fact(1, (SUBSEGMENTS, "abt:KeyEmergingMarketsMember")),
             _fact(2, concept="dei:EntityPublicFloat")]
    labels = FactLabels.of(facts, lambda f: ("", ""))
    question = "What was the aggregate market value of Abbott's common equity held by " \
        "non-affiliates?"
    words = set(tokens(question)) - {"abbott"}
    assert asked_parts(words, words, question, labels).unknown
    label = labels.concept_words["dei:EntityPublicFloat"]
    assert not asked_parts(words, words, question, labels, lambda: label).unknown


def test_a_part_is_named_as_the_filing_prints_it():
    """The prose names a part by its printed label ("iPhone", "Compute & Networking"), less a
    footnote's mark and a header's scale note, else by its member's name."""
    iphone = ("srt:ProductOrServiceAxis", "aapl:IPhoneMember")
    cnet = (SEGMENTS, "nvda:ComputeAndNetworkingMember")
    facts = [_fact(1, iphone), _fact(2, cnet), _fact(3, (SEGMENTS, "nvda:GraphicsMember"))]
    shown = {"f1": ("iPhone (1)", ""), "f2": ("Revenue", "Compute & Networking (In millions)"),
             "f3": ("", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert labels.name_of(iphone) == "iPhone"
    assert labels.name_of(cnet) == "Compute & Networking"
    assert labels.name_of((SEGMENTS, "nvda:GraphicsMember")) == "Graphics"


def test_a_part_named_by_its_initials_beats_one_a_row_printed_so_holds():
    """Disney prints a row "DPEP" whose fact is tagged with its DMED member (what DMED earns
    from DPEP): "DPEP segment revenue" had been answered with DMED's 14,004."""
    dmed = (SEGMENTS, "dis:DisneyMediaAndEntertainmentDistributionMember")
    dpep = (SEGMENTS, "dis:DisneyParksExperiencesAndProductsMember")
    facts = [_fact(1, dmed), _fact(2, dpep), _fact(3, dmed)]
    shown = {"f1": ("Disney Media and Entertainment Distribution", ""),
             "f2": ("Disney Parks, Experiences and Products", ""), "f3": ("DPEP", "")}
    labels = FactLabels.of(facts, lambda f: shown[f.fact_id])
    assert _options(labels, "DPEP segment revenue for Disney in the quarter?",
                    company="Disney")[0] == {dpep[1]}


def test_two_words_joined_by_and_are_named_by_their_ampersand_initials():
    """"E&T" is Energy and Transportation; "ET" alone, two capitals, names nothing."""
    et = (SEGMENTS, "acme:EnergyAndTransportationMember")
    ci = (SEGMENTS, "acme:ConstructionIndustriesMember")
    labels = FactLabels.of([_fact(1, et), _fact(2, ci)], lambda f: ("", ""))
    assert _options(labels, "Acme E&T revenue in 2024?", company="Acme") == [{et[1]}]
    assert _options(labels, "Acme ET revenue in 2024?", company="Acme") == []


def test_initials_read_off_the_printed_name_where_the_members_runs_words_together():
    """Caterpillar's member is EnergyandTransportationMember, printed "Energy &
    Transportation": "E&T" had named no part."""
    et = (SEGMENTS, "cat:EnergyandTransportationMember")
    ci = (SEGMENTS, "cat:ConstructionIndustriesMember")
    shown = {"f1": ("Energy & Transportation", ""), "f2": ("Construction Industries", "")}
    labels = FactLabels.of([_fact(1, et), _fact(2, ci)], lambda f: shown[f.fact_id])
    assert _options(labels, "Caterpillar E&T revenue in 2024?", company="Caterpillar") == \
        [{et[1]}]
