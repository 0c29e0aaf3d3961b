"""A segment's own measure: the concept a company reports its segments' profit by ("segment
profit", "segment EBITA"), and the figures of a segment the filing also tags with a wider
grouping's member."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from ixbrl_sample import write_filing

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.filings.grouping_members import groupings, without_groupings
from retriever_trt.documents.model import Fact
from retriever_trt.indexing.ingest import ingest

_SEGMENTS = "us-gaap:StatementBusinessSegmentsAxis"
_PRODUCTS = ("us-gaap:StatementBusinessSegmentsAxis", "x:GlobalProductsMember")
_GROUP = ("x:PrimaryBusinessAxis", "x:BuildingSolutionsMember")
_CUSTOMER = ("srt:MajorCustomersAxis", "x:OilAndGasCustomerMember")
_ENERGY = (_SEGMENTS, "x:EnergyMember")


def _fact(concept: str, value: str, *dimensions: tuple[str, str]) -> Fact:
    return Fact(f"{concept}{len(dimensions)}", concept, Decimal(value), "USD",
                date(2024, 9, 30), date(2023, 10, 1), dimensions=dimensions)


def test_a_dimension_the_filing_tags_both_ways_alike_only_groups_the_part():
    """JCI's Global Products EBITA, tagged with its primary business's member too, had
    answered no question naming the segment; a major customer's share of a segment's
    revenue is another figure, kept so."""
    facts = [_fact("us-gaap:Revenues", "5071e6", _PRODUCTS),
             _fact("us-gaap:Revenues", "5071e6", _GROUP, _PRODUCTS),
             _fact("x:SegmentEBITA", "1403e6", _GROUP, _PRODUCTS),
             _fact("us-gaap:Revenues", "7219e6", _ENERGY),
             _fact("us-gaap:Revenues", "1760e6", _CUSTOMER, _ENERGY)]
    assert groupings(facts) == {(frozenset({_PRODUCTS}), _GROUP)}
    ebita = without_groupings(facts)[2]
    assert (ebita.concept, ebita.dimensions) == ("x:SegmentEBITA", (_PRODUCTS,))
    assert without_groupings(facts)[4].dimensions == (_CUSTOMER, _ENERGY)
    # an axis with several members beside the segment is no grouping, whatever one equals
    external = ("srt:ConsolidationItemsAxis", "x:ExcludingIntersegmentMember")
    total = ("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember")
    sales = [_fact("us-gaap:Revenues", "11012e6", _ENERGY),
             _fact("us-gaap:Revenues", "11012e6", external, _ENERGY),
             _fact("us-gaap:Revenues", "13500e6", total, _ENERGY)]
    assert groupings(sales) == frozenset()


def test_segment_profit_is_the_companys_own_segment_measure(tmp_path):
    """Smucker's "segment profit" had been read as the segment's net income, which it does
    not report: no number."""
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35, segment_profit=41)
    answerer = FilingAnswerer(ingest(tmp_path)[0])

    def ask(question: str):
        query = answerer.parse(question)
        return answerer.answer(query, answerer.scope(query, None))

    got = ask("What was Widget Corp's Cloud segment profit in 2024?")
    assert (got.short_answer, got.scale) == ("41", "million")
    assert got.citations[0]["fact"]["concept"] == "x:SegmentReportingSegmentProfit"
    # the company's profit is no segment's measure
    assert ask("What was Widget Corp's net income in 2024?").short_answer is None


def test_segment_profit_is_the_one_standard_profit_measure_the_segments_are_tagged_with():
    """Honeywell tags its segments' profit as OperatingIncomeLoss (Caterpillar as its pretax
    income), with no concept named "segment": "Aerospace segment profit" had been read as
    the segment's net income, which no fact gives (no number). With two such measures
    tagged per segment, neither is chosen for it."""
    from types import SimpleNamespace

    from pipeline.rag.answers.filings.asked import what_is_asked
    from pipeline.rag.answers.filings.fact_labels import FactLabels
    from pipeline.rag.answers.query import parse_query

    aero = (_SEGMENTS, "hon:AerospaceMember")
    facts = [_fact("us-gaap:OperatingIncomeLoss", "924e6", aero),
             _fact("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", "3341e6", aero),
             _fact("us-gaap:NetIncomeLoss", "1490e6")]

    def first(facts: list[Fact]) -> tuple[str, ...]:
        info = SimpleNamespace(facts=facts, metadata=SimpleNamespace(company="Honeywell"))
        query = parse_query("What was Aerospace segment profit for the quarter?")
        _, asked, _ = what_is_asked(query, info, FactLabels.of(facts))
        return asked.labelled[0].concepts if asked.labelled else ()

    assert first(facts) == ("us-gaap:OperatingIncomeLoss",)
    both = [*facts, _fact("us-gaap:NetIncomeLoss", "700e6", aero)]
    assert first(both) != ("us-gaap:OperatingIncomeLoss",)
