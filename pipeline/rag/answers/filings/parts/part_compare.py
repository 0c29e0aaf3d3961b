"""Questions that set two parts of one company against each other: "Which Thermo Fisher
segment delivered more segment income: Life Sciences Solutions or Laboratory Products and
Biopharma Services?", "How much more did Graphics earn than Compute & Networking?". Each
part is answered from its own member's fact, as a question naming it alone would be, then
the figures are compared or combined as several companies' are (`companies.combine`).
With one part's figure missing there is no comparison, and no number.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from itertools import combinations

from pipeline.rag.answers.filings.companies import (
    Combine,
    CompanyFigure,
    combination,
    combine,
    stated,
)
from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.parts.qualifiers import Parts, written_part
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.short_answer import ShortAnswer

Option = frozenset[tuple[str, str]]
# The most parts whose subsets are summed to find an aggregate among them (2^12 sums).
MAX_SUMMED = 12
# What a comparison of parts may ask: which is larger or smaller, their difference or sum.
_COMPARING = (Combine.HIGHER, Combine.LOWER, Combine.DIFFERENCE, Combine.SUM)


# "Which segment had the highest revenue?", "What region delivered more?": a part's name is
# the answer, never a figure.
_WHICH_PART = re.compile(
    r"\bwhich\s+(?:[\w&'’-]+\s+){0,3}?(?:segments?|regions?|divisions?|businesses|"
    r"business (?:units?|lines?)|product (?:lines?|categor(?:y|ies))|geograph\w*|countr(?:y|ies))\b|"
    r"\bwhat (?:segment|region|division|product line|country)\s+(?:had|was|generated|"
    r"delivered|contributed|reported|produced|earned|grew)\b", re.I)


# The axis a "which ..." question ranges over, by its cue: the business segments, else the
# product lines. Regions are left out: a filing's geographic axis mixes countries, regions
# and their rest ("Non-US"), which are no set of peers.
_RANGES = ((re.compile(r"\bsegments?\b|\bdivisions?\b|\bbusiness(?:es| units?)\b", re.I),
            "StatementBusinessSegmentsAxis"),
           (re.compile(r"\bproduct (?:lines?|categor(?:y|ies))\b", re.I), "ProductOrServiceAxis"))


def asks_which_part(text: str) -> bool:
    """Whether the question asks which part of the company has the higher (lower) figure
    ("In which country is ParsePort based?" asks a place of the text, no figure's part)."""
    return _WHICH_PART.search(text) is not None and \
        combination(text) in (Combine.HIGHER, Combine.LOWER)


# "...: Honeywell Building Technologies or Performance Materials and Technologies?": the
# question names the parts it sets against each other.
_NAMED_ALTERNATIVES = re.compile(r"\b[A-Z][\w&'’.-]*,?\s+or\s+(?:the\s+)?[A-Z]")


def ranged_parts(text: str, labels: FactLabels) -> list[Option]:
    """Every member of the axis a "which segment had the highest ..." question ranges over
    ("Rest of Asia Pacific" and "Other" segments too); none for a question naming no such
    axis, nor for one naming its alternatives (those not all found, the rest are no
    answer: a third segment may have the highest figure)."""
    if not asks_which_part(text) or _NAMED_ALTERNATIVES.search(text):
        return []
    axis = next((a for cue, a in _RANGES if cue.search(text)), None)
    members = sorted(m for m in labels.members if axis and m[0].endswith(axis))
    return [frozenset({m}) | labels.within.get(m, frozenset()) for m in members]


def pick_part(query: Query, options: list[Option], labels: FactLabels,
              answer_part: Callable[[Option], ShortAnswer]) -> ShortAnswer:
    """The part whose figure is the highest (lowest) of those the filing gives for the
    period asked, named as the filing names it, less the parts that are the sum of others
    (Apple's Products, its iPhone, Mac, iPad and Wearables together); no answer with fewer
    than two figures, nor for a part the rules do not range over ("which region")."""
    figures = [CompanyFigure(" and ".join(labels.name_of(m) for m in sorted(o)), answer_part(o))
               for o in options]
    given = [f for f in figures if f.answer.short_answer is not None]
    if len(given) > MAX_SUMMED:  # too many to tell the sums among them: no pick
        return ShortAnswer(missing="the question asks which part of the company a figure is "
                                   "of, among more parts than the rules compare")
    values = [_value(f.answer) for f in given]
    peers = [f for i, (f, v) in enumerate(zip(given, values, strict=True))
             if not _sum_of_others(v, values[:i] + values[i + 1:])]
    if len(peers) < 2:
        return ShortAnswer(missing="the question asks which part of the company a figure is "
                                   "of, and fewer than two parts' figures could be compared")
    return combine(query, peers, stated, whole="part")


def _value(answer: ShortAnswer) -> Decimal | None:
    try:
        return Decimal(str(answer.short_answer))
    except InvalidOperation:
        return None


def _sum_of_others(value: Decimal | None, others: list[Decimal | None]) -> bool:
    """Whether `value` is the sum of two or more of `others`."""
    known = [o for o in others if o is not None]
    return value is not None and any(
        sum(c) == value for n in range(2, len(known) + 1) for c in combinations(known, n))


def compared_parts(query: Query, parts: Parts) -> list[Option]:
    """The parts the question sets against each other: two or more members of one axis, each
    named by words of its own; none when it asks for no comparison or names one company's
    part alone ("Data Center revenue")."""
    if len(query.companies) > 1 or combination(query.text) not in _COMPARING:
        return []
    # each written as a name ("iPhone or Services"), not a cue ("product line")
    single = [o for o in parts.options
              if len(o) == 1 and written_part(query.text, parts.named[next(iter(o))])]
    axes = {axis for o in single for axis, _ in o}
    if len(single) < 2 or len(axes) != 1:
        return []
    words = [parts.named[next(iter(o))] for o in single]
    # each part said by words no other one is said by ("Compute" of "Compute & Networking"
    # is no second part)
    own = [w for i, w in enumerate(words)
           if w and not any(w <= other for j, other in enumerate(words) if j != i)]
    return single if len(own) == len(single) else []


def compare_parts(query: Query, parts: Parts, options: list[Option],
                  answer_part: Callable[[Option], ShortAnswer]) -> ShortAnswer:
    """The comparison or combination asked of the parts' figures, in the order the question
    names them ("how much more did A have than B": A less B), each named as the question
    writes it."""
    named = sorted((written_part(query.text, parts.named[m]) or (len(query.text), ""), o)
                   for o in options for m in o)
    figures = [CompanyFigure(name, answer_part(option)) for (_, name), option in named]
    return combine(query, figures, stated, whole="part")
