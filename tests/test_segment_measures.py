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


def _asked(question: str, facts: list[Fact]):
    from types import SimpleNamespace

    from pipeline.rag.answers.filings.asked import what_is_asked
    from pipeline.rag.answers.filings.fact_labels import FactLabels
    from pipeline.rag.answers.query import parse_query

    info = SimpleNamespace(facts=facts, metadata=SimpleNamespace(company="Honeywell"))
    return what_is_asked(parse_query(question), info, FactLabels.of(facts))[1]


_AERO = (_SEGMENTS, "hon:AerospaceMember")
_HONEYWELL = [_fact("us-gaap:OperatingIncomeLoss", "924e6", _AERO),
              _fact("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", "3341e6", _AERO),
              _fact("us-gaap:NetIncomeLoss", "1490e6")]


def test_a_ratio_defined_with_segment_profit_reads_the_segment_measure():
    """"Aerospace segment margin (segment profit / net Aerospace sales)" had read segment
    profit as net income, which no segment's fact gives: no number. It is the segment
    measure a question asking segment profit alone reads."""
    asked = _asked("Honeywell Aerospace segment margin for Q2 2023 (segment profit / net "
                   "Aerospace sales), %, one decimal.", _HONEYWELL)
    assert asked.phrases["phrase:segment profit"].concepts == ("us-gaap:OperatingIncomeLoss",)
    # "segment Adjusted EBITDA" is the part's Adjusted EBITDA: "segment" points at the part
    ebitda = [_fact("x:AdjustedEBITDA", "3345e6", _AERO), *_HONEYWELL]
    asked = _asked("Aerospace Adjusted EBITDA margin for 2023 (segment Adjusted EBITDA / "
                   "segment revenue), %, one decimal.", ebitda)
    assert asked.phrases["phrase:segment adjusted ebitda"].concepts == ("x:AdjustedEBITDA",)


def test_a_named_segment_measure_is_never_the_standard_profit_measure():
    """Only an unnamed "segment profit" is the one standard measure the segments are tagged
    with: "segment EBITDA" of a filing that tags its segments' operating income is not that
    operating income (a wrong number), and with no EBITDA tagged there is none."""
    asked = _asked("What was Aerospace segment EBITDA for the quarter?", _HONEYWELL)
    assert ("us-gaap:OperatingIncomeLoss",) not in [i.concepts for i in asked.labelled]


def test_the_column_a_question_points_at_is_no_word_of_its_measure():
    """"Adjusted EBITDA of Studios in 2022 (prior-year column of the 2023 10-K)": "prior"
    and "column" say where the figure is printed; as measure words no label held them, and
    the filing's AdjustedEBITDA was not found."""
    from pipeline.rag.answers.query import parse_query

    query = parse_query("What was Adjusted EBITDA of Comcast's Studios segment in 2022 "
                        "(prior-year column of the 2023 10-K)? $M.")
    assert not {"prior", "column"} & query.measure_words
