"""A segment's own measure: the concept a company reports its segments' profit by, which a
question names as "segment profit", "segment EBITA" or "segment adjusted EBITDA", whether it
asks the figure or defines a ratio with it ("segment profit / net Aerospace sales")."""

from __future__ import annotations

from typing import Any

from pipeline.rag.answers.filings.fact_labels import SEGMENT_AXIS, FactLabels, split_name
from pipeline.rag.answers.filings.measure_match import labelled_items, preference
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.vocabulary.formula import PHRASE, terms
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, LineItem
from pipeline.rag.answers.vocabulary.metrics import Metric
from pipeline.rag.answers.vocabulary.phrasing import SEGMENT_MEASURE

_SEGMENT = "segment"
SEGMENT_WORDS = frozenset(tokens("segment segmental"))
# Words a segment measure's concept name holds beside the measure's own ("Segment Reporting
# Information Segment Profit"); any other ("Segment Earnings Other Income Expense") makes it
# another figure.
_SEGMENT_NAME_WORDS = frozenset(tokens("segment reporting information total loss"))
# The standard measures a filing may report its segments' profit by.
_SEGMENT_PROFITS = tuple(BY_NAME[n] for n in ("operating income", "pretax income", "net income"))
# The words that leave a segment's measure unnamed ("segment profit"): only then is it the one
# standard measure the segments are tagged with. "Segment EBITDA" or "segment operating
# income" names its own, which no other measure stands in for.
_UNNAMED = frozenset(tokens("profit income earnings result results"))


def segment_measures(text: str, words: frozenset[str], labels: FactLabels,
                     info: Any) -> list[LineItem]:
    """The filing's concepts named as a segment's measure the text names ("segment EBITA"):
    a concept whose name says "segment" and no other word than the measure's; for an unnamed
    one ("segment profit"), else the standard profit measure the segments are tagged with."""
    said = SEGMENT_MEASURE.search(text)
    if said is None:
        return []
    found = labelled_items(words | {_SEGMENT}, labels, info.facts, preference(text))
    own = [i for i in found if _SEGMENT in (named := set(tokens(split_name(i.concepts[0]))))
           and named <= words | _SEGMENT_NAME_WORDS]
    unnamed = said.group(1) is None and said.group(2).lower() in _UNNAMED
    return own or (_sole_segment_profit(info.facts) if unnamed else [])


def _sole_segment_profit(facts: list[Any]) -> list[LineItem]:
    """The one standard profit measure (operating, pretax or net income) the filing tags its
    segments' figures with: Honeywell's segment profit is its segments' OperatingIncomeLoss,
    Caterpillar's their pretax income. Two or more: the question's words must choose."""
    tagged = {f.concept for f in facts if f.start is not None and
              any(axis == SEGMENT_AXIS for axis, _ in f.dimensions)}
    found = [i for i in _SEGMENT_PROFITS if tagged & set(i.concepts)]
    return found if len(found) == 1 else []


def segment_operands(measure: Any, labels: FactLabels, info: Any) -> dict[str, LineItem]:
    """A defined ratio's operands that name a segment's measure ("segment profit / net
    Aerospace sales"), each as the segment's own measure when the question names a part:
    "segment" points at that part, so "segment Adjusted EBITDA" is the part's Adjusted
    EBITDA and "segment profit" its segment measure, never its net income. One the filing
    has no segment measure for is read as any operand is (`phrase_items`)."""
    if not isinstance(measure, Metric):
        return {}
    out = {}
    for term in terms(measure.expression()):
        phrase = term.item.removeprefix(PHRASE)
        if term.item == phrase or not SEGMENT_MEASURE.search(phrase):
            continue
        words = frozenset(tokens(phrase)) - SEGMENT_WORDS
        found = segment_measures(phrase, words, labels, info)
        if not found and not term.fallback:
            # no vocabulary item reads it ("segment Adjusted EBITDA"): the labels without
            # "segment", which points at the part
            found = labelled_items(words, labels, info.facts, stated_first=True)
        if found:
            out[term.item] = found[0]
    return out
