"""What a question asks of one filing beyond its periods: the part of the company it names
(`qualifiers.asked_parts`), and the measure's candidates among the filing's own labels
(`measure_match`): those holding the words that narrow the measure ("Deferred revenue" for
"deferred revenue"), the payment where a balance item was paid for, else every label naming
the measure's words. The vocabulary's item stays first unless the question narrowed it.
"""

from __future__ import annotations

from typing import Any

from pipeline.rag.answers.company_names import owned_names
from pipeline.rag.answers.filings.fact_answer import Asked
from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.measure_match import (
    holding,
    labelled_items,
    phrase_items,
    phrase_words,
    preference,
    printed_as_named,
    quoted_rows,
    rows_named_as,
)
from pipeline.rag.answers.filings.qualifiers import Parts, asked_parts
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.vocabulary.line_items import Kind, LineItem
from retriever_trt.search.filters import company_key


def what_is_asked(query: Query, info: Any, labels: FactLabels) -> tuple[Asked, Parts]:
    """What the filing's facts must match beyond the periods: the part named, and the
    measure's candidates from the filing's own labels."""
    # The company's own name ("Nike" of "NIKE Brand") and the measure's words ("equipment"
    # of "purchases of property and equipment") name no part of it.
    own = set(company_key(info.metadata.company).split()) | owned_names(query.text)
    # a statement row quoted whole names its figure ("buying and occupancy costs")
    quoted = quoted_rows(query.text, labels)
    parts = asked_parts(set(query.words) - own - quoted,
                        set(query.measure_words) - own - quoted - phrase_words(query.measure),
                        query.text, labels)
    prefer = preference(query.text)
    labelled = labelled_items(query.measure_words - parts.naming_words(), labels, info.facts,
                              prefer)
    measure = query.measure
    if isinstance(measure, LineItem) and not any(f.concept in measure.concepts
                                                  for f in info.facts):
        # The vocabulary names the measure ("research and development expense" of "R&D")
        # but the filing tags it otherwise: its name meets the filing's labels.
        labelled += [i for i in labelled_items(frozenset(tokens(measure.name)), labels,
                                               info.facts, prefer) if i not in labelled]
    phrases = phrase_items(query.measure, labels, info.facts)
    # a word naming any part the question may mean ("product" of "Prolia product sales",
    # ProductMember's) qualifies the part, not the measure
    narrowing = query.modifiers - parts.naming_words(every=True) - own
    held = holding(labelled, narrowing, labels) if narrowing else []
    own_row = printed_as_named(query.text, measure, labels, info.facts,
                               frozenset(own)) \
        if isinstance(measure, LineItem) and not narrowing else None
    if own_row is not None:  # the filing's own row of that name, before the vocabulary's
        return Asked(parts.options, (own_row, *labelled), phrases, False), parts
    if not held and isinstance(measure, LineItem) and measure.kind is Kind.BALANCE:
        # "What did Apple pay for property, plant and equipment": the payment, not the
        # balance the vocabulary's name is
        held = [i for i in labelled if prefer.holds(i.concepts[0])]
    if not held and isinstance(measure, LineItem) and labels.stated_rows:
        # the vocabulary's item, where its concepts have no fact: a tagged filing's row of
        # one of its names, or no number
        labelled = rows_named_as(measure, labels, labelled)
    return Asked(parts.options, tuple(held or labelled), phrases, not held,
                 narrowing if not held else frozenset()), parts


def no_narrower(query: Query, info: Any, words: frozenset[str]) -> str:
    """What the filing holds when the question narrows its measure past its labels."""
    return (f"{info.title} has no figure labelled {' '.join(sorted(words))} "
            f"{query.measure.name}; it reports {query.measure.name} as a whole")
