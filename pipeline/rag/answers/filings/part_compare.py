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

from pipeline.rag.answers.filings.companies import (
    Combine,
    CompanyFigure,
    combination,
    combine,
    stated,
)
from pipeline.rag.answers.filings.qualifiers import Parts, written_part
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.short_answer import ShortAnswer

Option = frozenset[tuple[str, str]]
# What a comparison of parts may ask: which is larger or smaller, their difference or sum.
_COMPARING = (Combine.HIGHER, Combine.LOWER, Combine.DIFFERENCE, Combine.SUM)


# "Which segment had the highest revenue?", "What region delivered more?": a part's name is
# the answer, never a figure.
_WHICH_PART = re.compile(
    r"\bwhich\s+(?:[\w&'’-]+\s+){0,3}?(?:segments?|regions?|divisions?|businesses|"
    r"business (?:units?|lines?)|product (?:lines?|categor(?:y|ies))|geograph\w*|countr(?:y|ies))\b|"
    r"\bwhat (?:segment|region|division|product line|country)\s+(?:had|was|generated|"
    r"delivered|contributed|reported|produced|earned|grew)\b", re.I)


def asks_which_part(text: str) -> bool:
    """Whether the question asks which part of the company a figure belongs to."""
    return _WHICH_PART.search(text) is not None


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
