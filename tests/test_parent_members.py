"""A part of the company under a wider business grouping, and a segment's measure the
question writes in capitals after its name. The facts are shaped as real filings tag them
(Comcast's 2023 10-K: each segment under a business unit; Merck's products under its
Pharmaceutical segment; Dow's "Operating EBIT" of a segment)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from types import SimpleNamespace

from pipeline.rag.answers.filings.asked import _asked_of
from pipeline.rag.answers.filings.fact_labels import FactLabels, split_name
from pipeline.rag.answers.filings.grouping_members import parents, without_groupings
from pipeline.rag.answers.filings.measure_match import quoted_rows
from pipeline.rag.answers.filings.parts.qualifiers import asked_parts, spelled_out
from pipeline.rag.answers.filings.parts.unknown_names import unknown_names
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import tokens
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


_OPERATING = ("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember")
_ORAL = (_SEGMENT, "cl:OralPersonalAndHomeCareMember")
_LATAM = ("srt:StatementGeographicalAxis", "srt:LatinAmericaMember")
_EUROPE = ("srt:StatementGeographicalAxis", "srt:EuropeMember")


def test_a_region_reported_within_one_segment_has_that_segment_as_parent():
    """Colgate tags Latin America's operating profit with its Oral, Personal and Home Care
    segment beside it (and the operating-segments member): "Latin America operating profit"
    had no number. A region beside two segments (Chevron's United States) has none."""
    facts = [_fact("us-gaap:OperatingIncomeLoss", "363e6", _OPERATING, _LATAM, _ORAL),
             _fact("us-gaap:OperatingIncomeLoss", "134e6", _OPERATING, _EUROPE, _ORAL)]
    assert parents(facts) == {(_LATAM, _ORAL), (_EUROPE, _ORAL)}
    assert ((_OPERATING, _LATAM), Decimal("363e6")) in \
        [(f.dimensions, f.value) for f in without_groupings(facts)]
    upstream, downstream = (_SEGMENT, "cvx:UpstreamMember"), (_SEGMENT, "cvx:DownstreamMember")
    assert not {part for part, _ in parents([_fact("us-gaap:Revenues", "1e9", _US, upstream),
                                             _fact("us-gaap:Revenues", "2e9", _US, downstream),
                                             _fact("us-gaap:Revenues", "3e9", _LATAM, upstream)])
                if part == _US}


def _parts_of(question: str, facts: list[Fact]):
    labels = FactLabels.of(facts)
    q = parse_query(question)
    return asked_parts(set(q.words), set(q.measure_words), q.text, labels)


def test_the_consolidation_axis_corporate_and_a_business_group_are_parts():
    """Colgate tags its Corporate operating loss on the consolidation axis alone; GM its
    automotive SG&A on its own business-group axis alone. "Non" of the standard member's
    name names nothing ("held by non-affiliates")."""
    corporate = ("srt:ConsolidationItemsAxis", "us-gaap:CorporateNonSegmentMember")
    automotive = ("gm:BusinessGroupAxis", "gm:AutomotiveMember")
    facts = [_fact("us-gaap:OperatingIncomeLoss", "-172e6", corporate),
             _fact("us-gaap:SellingGeneralAndAdministrativeExpense", "2558e6", automotive),
             _fact("us-gaap:OperatingIncomeLoss", "974e6")]
    assert _parts_of("Colgate's Corporate operating profit (loss) in Q2 2023?",
                     facts).options == (frozenset({corporate}),)
    assert _parts_of("GM's automotive SG&A in Q2 2023?", facts).options == \
        (frozenset({automotive}),)
    assert _parts_of("The market value of stock held by non-affiliates?", facts).options == ()
    # a business group's few members sit on a segment table's measure rows: those rows name
    # no group (GM's Automotive had been named by "earnings before interest and taxes")
    printed = FactLabels.of(facts, lambda f: ("Earnings before interest and taxes-adjusted",
                                              "2023"))
    assert printed.members[automotive] == {"automotive"}


def test_a_name_spelled_out_before_its_acronym_names_the_acronym_s_member():
    """"GM North America's (GMNA)": every word of the name names gm:GmnaMember, none the
    measure; an acronym the words do not spell pairs with nothing."""
    gmna = (_SEGMENT, "gm:GmnaMember")
    got = _parts_of("What was GM North America's (GMNA) EBIT-adjusted in Q2 2023?",
                    [_fact("gm:EbitAdjusted", "3194e6", gmna)])
    assert got.options == (frozenset({gmna}),)
    assert {"north", "america", "gmna"} <= got.naming_words()
    assert spelled_out("Frito-Lay North America (FLNA) sales") == \
        [(frozenset({"frito", "lay", "north", "america"}), "flna")]
    assert spelled_out("Net sales in North America (EMEA)") == []


def test_an_owner_s_possessive_before_a_name_the_filing_knows_is_no_unknown_name():
    """Colgate prints "Pet Nutrition" for its Hill's Pet Nutrition segment: "Hill's" owns
    the name, and names no other part; "WhatsApp" alone still does."""
    known = {"pet", "nutrition", "operating", "profit"}
    words = frozenset({"hill", "pet", "nutrition", "whatsapp", "operating", "profit"})
    assert unknown_names("What operating profit did Colgate's Hill's Pet Nutrition segment "
                         "earn?", words, known) == []
    assert unknown_names("What was Meta's WhatsApp operating profit?", words, known) == \
        ["WhatsApp"]
    # the one possessive names the company: "Intel's Data Center" is no NVIDIA segment's
    assert unknown_names("What was Intel's Data Center revenue?", frozenset({"intel", "data"}),
                         {"data", "center"}) == ["Intel"]


def test_a_part_named_before_a_definition_qualifies_every_operand():
    """Riot's "Bitcoin Mining margin, defined as (Bitcoin Mining revenue minus Bitcoin Mining
    cost of revenue) divided by Bitcoin Mining revenue": the words of the part had been
    operand words, and "Bitcoin Mining revenue", a row of its cash flows, a quoted row."""
    mining = (_PRODUCT, "riot:MiningMember")
    facts = [_fact("us-gaap:Revenues", "188996e3", mining),
             _fact("us-gaap:CostOfRevenue", "96597e3", mining),
             _fact("us-gaap:Revenues", "280678e3"),
             _fact("riot:TotalSegmentAndConsolidatedCostOfRevenue", "300000e3"),
             _fact("riot:CryptocurrenciesMining", "188996e3")]
    rows = {"riot:CryptocurrenciesMining": "Bitcoin Mining revenue", "us-gaap:Revenues": "Total",
            "riot:TotalSegmentAndConsolidatedCostOfRevenue": "Total cost of revenue"}
    labels = FactLabels.of(facts, lambda f: ("Bitcoin Mining", "2023") if f.dimensions else
                           (rows[f.concept], "2023"), lambda f: not f.dimensions)
    assert quoted_rows("Riot Platforms' Bitcoin Mining revenue for 2023?", labels) == set()
    query = parse_query("Riot's Bitcoin Mining margin for 2023, defined as (Bitcoin Mining "
                        "revenue minus Bitcoin Mining cost of revenue) divided by Bitcoin "
                        "Mining revenue, percent to one decimal?")
    info = SimpleNamespace(facts=facts, metadata=SimpleNamespace(company="Riot Platforms"))
    asked, parts = _asked_of(query, info, labels)
    assert parts.options == (frozenset({mining}),)
    assert asked.phrases["phrase:bitcoin mining cost of revenue"].concepts == \
        ("us-gaap:CostOfRevenue",)


_FLOAT = "The aggregate market value of common equity held by non-affiliates?"


def test_a_major_customer_is_a_part_and_parts_named_in_full_stand_together():
    """General Dynamics tags its revenue from the U.S. government on the major-customers axis
    (gd:U.S.GovernmentMember, its dotted initials one word): "revenue from the U.S.
    government" had been its total, 10,152. Palantir's "U.S. government customers" names the
    United States and its Government segment in full (a "Customer I" only in part): no
    one of the two alone stands in for both (its U.S. total had been answered)."""
    assert split_name("gd:U.S.GovernmentMember") == "US Government Member"
    government = ("srt:MajorCustomersAxis", "gd:U.S.GovernmentMember")
    facts = [_fact("us-gaap:Revenues", "7291e6", government), _fact("us-gaap:Revenues", "10152e6")]
    assert _parts_of("What was Acme's revenue from the U.S. government in Q2 2023?",
                     facts).options == (frozenset({government}),)
    # "non-affiliates" names no "U.S. Government Non-Department of Defense" customer
    non_dod = ("srt:MajorCustomersAxis", "gd:U.S.GovernmentNonDepartmentofDefenseMember")
    printed = FactLabels.of([*facts, _fact("us-gaap:Revenues", "1181e6", non_dod)],
                            lambda f: ("Non-DoD", "2023") if f.dimensions else ("", ""))
    assert asked_parts(set(tokens(_FLOAT)), set(tokens(_FLOAT)) - {"market", "value"}, _FLOAT,
                       printed).options == ()
    segment = (_SEGMENT, "pltr:GovernmentMember")
    customer = ("srt:MajorCustomersAxis", "pltr:CustomerIMember")
    facts = [_fact("us-gaap:Revenues", "301e6", segment), _fact("us-gaap:Revenues", "328e6", _US),
             _fact("us-gaap:Revenues", "19e6", customer)]
    options = _parts_of("How much revenue did Acme earn from U.S. government customers in "
                        "Q2 2023?", facts).options
    assert options[0] == {segment, _US, customer} and options[1:] == (frozenset({segment, _US}),)
    # "U.S. government securities" are a kind of investment: "U.S." names no place there
    securities = _parts_of("Acme's U.S. government securities at year end?", facts).options
    assert not any(_US in option for option in securities)
