"""A part of the company under a wider business grouping, and a segment's measure the
question writes in capitals after its name. The facts are shaped as real filings tag them
(Comcast's 2023 10-K: each segment under a business unit; Merck's products under its
Pharmaceutical segment; Dow's "Operating EBIT" of a segment)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.grouping_members import parents, without_groupings
from pipeline.rag.answers.filings.parts.qualifiers import asked_parts
from pipeline.rag.answers.query import parse_query
from retriever_trt.documents.model import Fact

_SEGMENT = "us-gaap:StatementBusinessSegmentsAxis"
_UNIT = ("cmcsa:BusinessUnitAxis", "cmcsa:ContentAndExperiencesMember")
_PARKS = (_SEGMENT, "cmcsa:ThemeParksSegmentMember")
_STUDIOS = (_SEGMENT, "cmcsa:StudiosSegmentMember")
_PRODUCT = "srt:ProductOrServiceAxis"
_US = ("srt:StatementGeographicalAxis", "country:US")


def _fact(concept: str, value: str, *dimensions: tuple[str, str]) -> Fact:
    return Fact(f"{concept}{dimensions}", concept, Decimal(value), "USD",
                date(2023, 12, 31), date(2023, 1, 1), dimensions=dimensions)


def test_a_segment_never_tagged_without_its_business_unit_is_also_its_own_figure():
    """Comcast tags Theme Parks' Adjusted EBITDA only with Content & Experiences beside it:
    "Theme Parks Adjusted EBITDA" had no number. The tagged fact stays (a question may name
    the unit too) and a copy stands as the segment's own."""
    facts = [_fact("cmcsa:AdjustedEBITDA", "3345e6", _UNIT, _PARKS),
             _fact("cmcsa:AdjustedEBITDA", "1060e6", _UNIT, _STUDIOS)]
    assert parents(facts) == {(_PARKS, _UNIT), (_STUDIOS, _UNIT)}
    read = without_groupings(facts)
    assert [(f.dimensions, f.value) for f in read] == [
        ((_UNIT, _PARKS), Decimal("3345e6")), ((_PARKS,), Decimal("3345e6")),
        ((_UNIT, _STUDIOS), Decimal("1060e6")), ((_STUDIOS,), Decimal("1060e6"))]


def test_no_parent_where_it_narrows_the_part():
    pharma = (_SEGMENT, "mrk:PharmaceuticalMember")
    gardasil, keytruda = (_PRODUCT, "mrk:GardasilMember"), (_PRODUCT, "mrk:KeytrudaMember")
    # a product under its segment, beside several products: a parent
    assert parents([_fact("us-gaap:Revenues", "2500e6", pharma, gardasil),
                    _fact("us-gaap:Revenues", "6271e6", pharma, keytruda)]) == \
        {(gardasil, pharma), (keytruda, pharma)}
    # a place is no grouping: "U.S. sales" of each product are narrower than its sales,
    # however often the filing breaks out only the U.S.
    assert parents([_fact("us-gaap:Revenues", "1500e6", _US, gardasil),
                    _fact("us-gaap:Revenues", "4000e6", _US, keytruda)]) == frozenset()
    # beside a single part, the member may as well narrow it
    assert parents([_fact("us-gaap:Revenues", "2500e6", pharma, gardasil)]) == frozenset()
    # the part tagged without it too, at another value: it narrows
    assert parents([_fact("us-gaap:Revenues", "2500e6", pharma, gardasil),
                    _fact("us-gaap:Revenues", "2600e6", gardasil),
                    _fact("us-gaap:Revenues", "6271e6", pharma, keytruda)]) == \
        {(keytruda, pharma)}


def test_a_measure_written_in_capitals_after_the_segment_s_name_names_no_more_of_it():
    """"Packaging & Specialty Plastics Operating EBIT": "Operating EBIT" is Dow's concept's
    name, not more of the segment's (which would be a segment the filing does not have)."""
    plastics = (_SEGMENT, "dow:PackagingSpecialtyPlasticsMember")
    labels = FactLabels.of([_fact("dow:OperatingEBIT", "918e6", plastics),
                            _fact("us-gaap:Revenues", "14000e6")])

    def parts(question: str):
        q = parse_query(question)
        return asked_parts(set(q.words) - {"dow"}, set(q.measure_words) - {"dow"}, q.text,
                           labels)

    assert parts("Dow Packaging & Specialty Plastics Operating EBIT, Q2 2023 — $M.").options \
        == (frozenset({plastics}),)
    # words no concept holds still say more: a part the filing does not report
    assert parts("Dow Packaging & Specialty Plastics Films EBIT, Q2 2023 — $M.").unknown


def test_a_metric_the_filing_tags_under_the_name_asked_is_read_not_computed():
    """"Adjusted EBITDA" had been computed as operating income plus depreciation and
    amortization (Comcast's 37,650, the unadjusted figure) beside its tagged 37,633."""
    from types import SimpleNamespace

    from pipeline.rag.answers.filings.asked import what_is_asked
    from pipeline.rag.answers.vocabulary.line_items import LineItem

    facts = [_fact("cmcsa:AdjustedEBITDA", "37633e6"),
             _fact("us-gaap:OperatingIncomeLoss", "23314e6"),
             _fact("us-gaap:DepreciationDepletionAndAmortization", "14336e6")]
    info = SimpleNamespace(facts=facts, metadata=SimpleNamespace(company="Comcast Corp"))
    labels = FactLabels.of(facts)
    adjusted, _, _ = what_is_asked(parse_query("What was Adjusted EBITDA in 2023?"), info,
                                   labels)
    assert isinstance(adjusted.measure, LineItem)
    assert adjusted.measure.concepts == ("cmcsa:AdjustedEBITDA",)
    plain, _, _ = what_is_asked(parse_query("What was EBITDA in 2023?"), info, labels)
    assert not isinstance(plain.measure, LineItem)  # computed: no concept has that name alone


def test_a_place_s_own_figure_before_the_segments_total_of_it():
    """Merck tags its U.S. revenue (7,018) and, beside it, its segments' U.S. total (7,045,
    with the segments' consolidation member, corporate revenue left out): "revenue from the
    United States" had been the second, a wrong number. A segment's figure with that member
    stays its total, inter-segment sales included (Caterpillar's E&T)."""
    from types import SimpleNamespace

    from pipeline.rag.answers.filings.fact_answer import find_fact
    from pipeline.rag.answers.filings.fact_targets import Target
    from pipeline.rag.answers.vocabulary.line_items import BY_NAME

    segments = ("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember")
    energy = (_SEGMENT, "cat:EnergyAndTransportationMember")
    facts = [_fact("us-gaap:Revenues", "7045e6", segments, _US),
             _fact("us-gaap:Revenues", "7018e6", _US),
             _fact("us-gaap:Revenues", "13500e6", segments, energy),
             _fact("us-gaap:Revenues", "11012e6", energy)]
    shown = {f.fact_id: "cell" for f in facts if segments in f.dimensions}
    info = SimpleNamespace(facts=facts, fact_cells=shown)
    year = Target(date(2023, 12, 31), 12)
    revenue = BY_NAME["revenue"]
    assert find_fact(info, revenue, year, frozenset({_US})).value == Decimal("7018e6")
    assert find_fact(info, revenue, year, frozenset({energy})).value == Decimal("13500e6")
