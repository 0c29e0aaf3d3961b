"""A part's share of its company's whole: "What share of Apple's fiscal 2024 net sales came
from iPhone?" is the part's figure (its member's fact, or the printed row naming it) over the
company's (the fact with no dimensions, or the statement's line), in percent, of the one
period asked; both figures cited. Either missing, there is no number: the part's amount is
never the answer to a share.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, DivisionByZero, InvalidOperation

from pipeline.rag.answers.arithmetic import operand
from pipeline.rag.answers.filings.fact_answer import DEFAULT_DECIMALS, FactResult
from pipeline.rag.answers.filings.measure_match import phrase_words
from pipeline.rag.answers.filings.parts.qualifiers import CUE_WORDS
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.vocabulary.line_items import LineItem
from pipeline.rag.answers.vocabulary.metrics import Scale

HUNDRED = Decimal(100)


# Words asking for a share, no measure's.
_SHARE_WORDS = frozenset(tokens("share percentage percent portion proportion part"))


def asks_share_of_part(query: Query, naming: frozenset[str] = frozenset(),
                       measures: frozenset[str] = frozenset()) -> bool:
    """A percentage of one line item ("what share of net sales came from ..."): a part's
    share when the question names a part (`naming`: the words that name it), and no other
    measure of the filing's (`measures`: its labels' words naming measures): "contribution
    margin (as a percentage of segment revenue)" is Palantir's Commercial contribution
    margin, never the segment's share of the company's revenue."""
    if query.operation is not Operation.PROPORTION or not isinstance(query.measure, LineItem):
        return False
    other = query.measure_words - phrase_words(query.measure) - naming - CUE_WORDS - _SHARE_WORDS
    return not other & measures


def as_lookup(query: Query) -> Query:
    """The same question asking for the one figure: the part's, or the whole's."""
    return replace(query, question=replace(query.question, operation=Operation.LOOKUP))


def share(query: Query, part: FactResult | None, whole: FactResult | None) -> FactResult | None:
    """part / whole * 100 of the latest period both were read for, or None."""
    if part is None or whole is None or not part.facts or not whole.facts:
        return None
    p, w = part.facts[-1], whole.facts[-1]
    if (p.start, p.end) != (w.start, w.end) or p.fact_id == w.fact_id:
        return None
    try:
        value = p.value / w.value * HUNDRED
    except (DivisionByZero, InvalidOperation):
        return None
    places = query.decimals if query.decimals is not None else DEFAULT_DECIMALS[Scale.PERCENT]
    derivation = (f"{operand(p.value)} / {operand(w.value)} * 100 (the part over the whole, "
                  f"{p.start.isoformat() + ' to ' if p.start else 'at '}{p.end.isoformat()})")
    return FactResult(round(value, places), "percent", derivation, [p, w])
