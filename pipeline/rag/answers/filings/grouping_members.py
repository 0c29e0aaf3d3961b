"""Dimensions that only group a part of the company, read off the filing's own figures.

A filing may tag a segment's figures with the member of a wider grouping too: Johnson
Controls tags its Global Products segment's EBITA with its "Building Technologies &
Solutions" member of a primary-business axis beside the segment's member. A fact with a
dimension more than the part asked is a narrower figure as a rule (Chevron's Upstream
earnings in the United States), so that EBITA had answered no question naming the segment.

The filing says which extra dimension narrows nothing: where it tags a figure both with
and without it, the two values are equal (JCI's Global Products revenue, 5,071 either way).
A dimension every such pair agrees on, for the same other dimensions, is a grouping of
them, and is left out of their facts; one pair that differs (a major customer's share of a
segment's revenue), or another member of its axis beside them, keeps it.

A filing may also never tag the part without its grouping: Comcast tags every figure of its
Theme Parks segment with its Content & Experiences business unit, General Motors its GMNA
segment's with its Automotive business group, Merck its Gardasil sales with its
Pharmaceutical segment. Such a member is a parent (`parents`): of a business axis (a
segment axis or the company's own, never a place: "U.S. sales of a product" are a narrower
figure however often the filing breaks out only the U.S.), the one member of its axis ever
beside the part, and beside several parts of the part's axis. A region is a part too, of a
member of the segment axis: Colgate reports Latin America only within its Oral, Personal and
Home Care segment, and Chevron's United States, beside two segments, has no parent.
"""

from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

from pipeline.rag.answers.filings.fact_labels import SEGMENT_AXIS
from retriever_trt.documents.model import Fact

Dimension = tuple[str, str]
# (the other dimensions of a fact, the dimension that groups them)
Grouping = tuple[frozenset[Dimension], Dimension]


def _values(facts: list[Fact]) -> dict[tuple, Decimal]:
    """Each fact's value by what it is of: its concept, period and set of dimensions."""
    return {(f.concept, f.start, f.end, frozenset(f.dimensions)): f.value for f in facts}


def groupings(facts: list[Fact]) -> frozenset[Grouping]:
    """The (dimensions, grouping dimension) pairs the facts show both ways, always equal,
    where the grouping's axis has that one member beside those dimensions: Caterpillar's
    Energy & Transportation is tagged with three members of its consolidation axis (its
    sales to outside customers, with its inter-segment sales, the eliminations), each
    another figure, whatever one of them equals."""
    plain = _values(facts)
    agree: set[Grouping] = set()
    differ: set[Grouping] = set()
    members: dict[tuple[frozenset[Dimension], str], set[str]] = {}
    for f in facts:
        if len(f.dimensions) < 2:
            continue
        dims = frozenset(f.dimensions)
        for d in dims:
            rest = dims - {d}
            members.setdefault((rest, d[0]), set()).add(d[1])
            value = plain.get((f.concept, f.start, f.end, rest))
            if value is not None:
                (agree if value == f.value else differ).add((rest, d))
    return frozenset(g for g in agree - differ if len(members[g[0], g[1][0]]) == 1)


# The axes a parent of a part is a member of: the standard segment axis, or a company's own
# axis (its business units, groups); a standard axis of places, products or line items never.
_STANDARD_PREFIXES = ("us-gaap:", "srt:", "dei:", "country:", "ecd:")
# A company's own axis of places ("RegionAxis"), which narrows a figure as a standard one does.
_PLACE_AXIS = re.compile(r"geograph|region|countr|area|market", re.I)
# The axes of the parts a parent groups: segments and product lines.
_PART_AXES = frozenset({SEGMENT_AXIS, "srt:ProductOrServiceAxis"})
# A region may be a part of one segment (Colgate's Latin America, of its Oral, Personal and
# Home Care segment): its parent is a member of the segment axis alone.
_PLACE_PART_AXIS = "srt:StatementGeographicalAxis"
# A parent groups several parts: one beside a single part may as well narrow it.
MIN_GROUPED_PARTS = 2


def _business_axis(axis: str) -> bool:
    return axis == SEGMENT_AXIS or not axis.startswith(_STANDARD_PREFIXES) and \
        not _PLACE_AXIS.search(axis)


def _may_parent(part_axis: str, axis: str) -> bool:
    """Whether a member of `axis` may group the parts of `part_axis`: a business axis's
    groups segments and product lines, the segment axis's alone groups regions."""
    return axis == SEGMENT_AXIS if part_axis == _PLACE_PART_AXIS else _business_axis(axis)


def parents(facts: list[Fact]) -> frozenset[tuple[Dimension, Dimension]]:
    """The (part, parent) pairs of the facts: a member of a segment or product axis always
    tagged, when with any member of a business axis, with the same one, which sits beside
    several parts of that axis; and where the part's figure is tagged without it too, equal."""
    beside: dict[tuple[Dimension, str], set[str]] = {}  # (part, business axis) -> members
    grouped: dict[tuple[Dimension, str], set[str]] = {}  # (parent, part axis) -> parts
    for f in facts:
        for part in f.dimensions:
            if part[0] not in _PART_AXES and part[0] != _PLACE_PART_AXIS:
                continue
            for d in f.dimensions:
                if d[0] != part[0] and _may_parent(part[0], d[0]):
                    beside.setdefault((part, d[0]), set()).add(d[1])
                    grouped.setdefault((d, part[0]), set()).add(part[1])
    found = {(part, (axis, next(iter(members)))) for (part, axis), members in beside.items()
             if len(members) == 1}
    found = {(part, parent) for part, parent in found
             if len(grouped[parent, part[0]]) >= MIN_GROUPED_PARTS}
    return frozenset(found - _unequal_without(facts, found))


def _unequal_without(facts: list[Fact], pairs: set[tuple[Dimension, Dimension]]) -> \
        set[tuple[Dimension, Dimension]]:
    """The pairs whose part's figure the filing also tags without the parent, at another
    value: the parent narrows it there."""
    plain = _values(facts)
    out = set()
    for f in facts:
        dims = frozenset(f.dimensions)
        for part, parent in pairs:
            if part in dims and parent in dims:
                value = plain.get((f.concept, f.start, f.end, dims - {parent}))
                if value is not None and value != f.value:
                    out.add((part, parent))
    return out


def without_groupings(facts: list[Fact]) -> list[Fact]:
    """The facts with each dimension that only groups their other dimensions left out; a
    fact of a part under its parent also stands as the part's own, where the filing tags
    none without the parent (a question may name the parent too: "wholesale sales in the
    International segment")."""
    found = groupings(facts)
    above = parents(facts)
    if not found and not above:
        return facts
    keys = _values(facts)
    out = []
    for f in facts:
        dims = frozenset(f.dimensions)
        grouping = {d for d in dims if (dims - {d}, d) in found}
        if grouping:
            f = replace(f, dimensions=tuple(d for d in f.dimensions if d not in grouping))
        out.append(f)
        parent = {p for part, p in above if part in dims and p in dims}
        own = tuple(d for d in f.dimensions if d not in parent)
        if parent and (f.concept, f.start, f.end, frozenset(own)) not in keys:
            out.append(replace(f, dimensions=own))
    return out
