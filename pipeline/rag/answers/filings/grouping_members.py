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
"""

from __future__ import annotations

from dataclasses import replace

from retriever_trt.documents.model import Fact

Dimension = tuple[str, str]
# (the other dimensions of a fact, the dimension that groups them)
Grouping = tuple[frozenset[Dimension], Dimension]


def groupings(facts: list[Fact]) -> frozenset[Grouping]:
    """The (dimensions, grouping dimension) pairs the facts show both ways, always equal,
    where the grouping's axis has that one member beside those dimensions: Caterpillar's
    Energy & Transportation is tagged with three members of its consolidation axis (its
    sales to outside customers, with its inter-segment sales, the eliminations), each
    another figure, whatever one of them equals."""
    plain = {(f.concept, f.start, f.end, frozenset(f.dimensions)): f.value for f in facts}
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


def without_groupings(facts: list[Fact]) -> list[Fact]:
    """The facts with each dimension that only groups their other dimensions left out."""
    found = groupings(facts)
    if not found:
        return facts
    out = []
    for f in facts:
        dims = frozenset(f.dimensions)
        grouping = {d for d in dims if (dims - {d}, d) in found}
        out.append(replace(f, dimensions=tuple(d for d in f.dimensions if d not in grouping))
                   if grouping else f)
    return out
