"""A figure the filing tags rounder than the answer would show it, stated finer in its prose.

A filing tags a prose figure as written: "charges of $2.4 billion" is a fact to the hundred
million (decimals -8). Asked in millions, that fact would read 2,400, a precision it does
not have, and the filing often states the same figure finer elsewhere ("included the $2,440
million Content Impairment Charge"). A sentence's amount stands in for the fact when it
rounds to the fact at the fact's own precision, is not the fact's value itself, and its
sentence names every word of the measure asked; and only when one such amount is stated
(two different ones: the fact stays, as tagged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from pipeline.rag.answers.arithmetic import plain, rounded
from pipeline.rag.answers.filings.fact_answer import SCALE_WORDS, FactResult
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.short_answer import ShortAnswer
from pipeline.rag.answers.text.text_amounts import as_value, figures
from pipeline.rag.answers.text.text_answer import document_paragraphs, split_sentences
from retriever_trt.documents.model import Fact


@dataclass(frozen=True)
class FinerFigure:
    """A fact's value as a sentence of the filing states it finer (in the fact's unit)."""

    value: Decimal
    sentence: str


def shown_rounder(fact: Fact, power: int, places: int) -> bool:
    """Whether the fact is tagged to a coarser rounding than an answer in units of
    10**`power` with `places` decimals shows ($2.4 billion, decimals -8, as 2,400 million)."""
    return fact.decimals is not None and fact.decimals < places - power


def finer_figure(fact: Fact, sentences: Iterable[str],
                 words: frozenset[str]) -> FinerFigure | None:
    """The one finer statement of the fact among `sentences` that name every one of
    `words` (the measure asked); None when none or several disagree."""
    if fact.decimals is None or not words:
        return None
    half_step = Decimal(5).scaleb(-fact.decimals - 1)
    size = abs(fact.value)
    found: dict[Decimal, str] = {}
    for sentence in sentences:
        if not words <= set(tokens(sentence)):
            continue
        for m in figures(sentence):
            got = as_value(m)
            if got is None or got[1] not in SCALE_WORDS:
                continue
            value = abs(Decimal(got[0])).scaleb(SCALE_WORDS[got[1]])
            if value != size and abs(value - size) <= half_step:
                found.setdefault(value, sentence)
    if len(found) != 1:
        return None
    (value, sentence), = found.items()
    return FinerFigure(value if fact.value >= 0 else -value, sentence)


def prose_sentences(chunks: Sequence[Any]) -> list[str]:
    """The sentences of a document's prose (its table pieces left out)."""
    return [s for p in document_paragraphs(chunks) for s in split_sentences(p.text)]


def as_stated_finer(short: ShortAnswer, result: FactResult, query: Query,
                    sentences: Callable[[], list[str]]) -> ShortAnswer:
    """`short`, one fact's figure, or that figure as the filing's prose states it finer,
    when the fact is tagged rounder than `short` shows it (`sentences`: the filing's)."""
    if short.answer_type != "span" or len(result.facts) != 1 or result.value is None or \
            result.scale not in SCALE_WORDS:
        return short
    fact, power = result.facts[0], SCALE_WORDS[result.scale]
    places = query.decimals if query.decimals is not None else \
        max(0, -result.value.normalize().as_tuple().exponent)
    if not shown_rounder(fact, power, places):
        return short
    finer = finer_figure(fact, sentences(), query.measure_words)
    if finer is None:
        return short
    shown = finer.value.scaleb(-power)
    if query.decimals is not None:
        shown = rounded(shown, query.decimals)
    return replace(short, short_answer=plain(shown), quote=finer.sentence)
