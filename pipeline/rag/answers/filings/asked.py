"""What a question asks of one filing beyond its periods: the part of the company it names
(`qualifiers.asked_parts`), and the measure's candidates among the filing's own labels
(`measure_match`): those holding the words that narrow the measure ("Deferred revenue" for
"deferred revenue"), the payment where a balance item was paid for, else every label naming
the measure's words. The vocabulary's item stays first unless the question narrowed it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from pipeline.rag.answers.answer_checks import asks_count, asks_share_count
from pipeline.rag.answers.company_names import owned_names
from pipeline.rag.answers.filings.fact_answer import Asked
from pipeline.rag.answers.filings.fact_labels import FactLabels, split_name
from pipeline.rag.answers.filings.initialisms import spelled_initials, with_initials
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
from pipeline.rag.answers.filings.parts.part_compare import compared_parts
from pipeline.rag.answers.filings.parts.qualifiers import CUE_WORDS, Parts, asked_parts
from pipeline.rag.answers.filings.segment_measures import segment_measures, segment_operands
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import label_stems, tokens
from pipeline.rag.answers.text.asked_spans import STAFF_TERMS, asks_staff
from pipeline.rag.answers.vocabulary.definitions import stated_definitions
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, Kind, LineItem
from pipeline.rag.answers.vocabulary.metrics import Metric, Scale
from retriever_trt.documents.model import CoverField
from retriever_trt.search.filters import company_key

# What a company took in from a part of itself: "How much did Intuitive Surgical earn from
# Systems?" asks the Systems revenue ("generate from operations" names no part: no revenue).
_EARNED_FROM = re.compile(r"\b(?:earn(?:ed|s)?|make|made|generated?|bring in|brought in|"
                          r"take in|took in|derived?|receive[ds]?)\b[^?.;]*?\bfrom\s+(.+?)"
                          r"(?=\s+(?:in|for|during|over|between|as of|at|through|on)\b|"
                          r"[,?;(]|\.(?!\d)|$)", re.I)
_REVENUE_WORDS = frozenset(tokens("revenues sales"))
# "Which product line sold more: Mac or iPad?": what was sold of a part is its sales, when
# nothing else the question says names a measure.
_SOLD = re.compile(r"\b(?:sold|sells?)\b", re.I)
_RANGE_WORDS = frozenset(tokens("product line category business unit"))
def what_is_asked(query: Query, info: Any,
                  labels: FactLabels) -> tuple[Query, Asked, Parts]:
    """The query as this filing reads it, and what the filing's facts must match beyond the
    periods: the part named, and the measure's candidates from the filing's own labels. A
    question naming no measure that asks what the company earned from a part it names asks
    that part's revenue."""
    query = _initials_spelled(query, labels)
    asked, parts = _asked_of(query, info, labels)
    own = _tagged_metric(query, asked, parts)
    if own is not None:
        query = replace(query, measure=own)
        return query, *_asked_of(query, info, labels)
    earned = _EARNED_FROM.search(query.text) if query.measure is None else None
    # every word of what it came from names the part: "Automotive leasing" is no revenue of
    # NVIDIA's Automotive platform
    if earned and parts.options and \
            set(tokens(earned.group(1))) - _REVENUE_WORDS - CUE_WORDS <= parts.naming_words():
        query = replace(query, measure=BY_NAME["revenue"])
        return query, *_asked_of(query, info, labels)
    said = set(query.measure_words) - parts.naming_words(every=True) - CUE_WORDS - _RANGE_WORDS
    if query.measure is None and parts.options and _SOLD.search(query.text) and not said:
        query = replace(query, measure=BY_NAME["revenue"])
        return query, *_asked_of(query, info, labels)
    return query, asked, parts


def _initials_spelled(query: Query, labels: FactLabels) -> Query:
    """The query with the initials it writes for a measure the filing spells out ("EBIT")
    as the label's words, so no part is looked for under them."""
    spelled = spelled_initials(query.measure_words, query.text, labels.texts,
                               labels.all_words())
    if spelled == query.measure_words:
        return query
    written = query.measure_words - spelled
    return replace(query, measure_words=spelled, words=query.words - written | spelled)


def _tagged_metric(query: Query, asked: Asked, parts: Parts) -> LineItem | None:
    """The filing's own concept for an amount the vocabulary would compute, when its name
    holds the metric's and no word the question does not say: "Adjusted EBITDA" is Comcast's
    AdjustedEBITDA fact, never operating income plus depreciation (the unadjusted figure)."""
    metric = query.measure
    if not isinstance(metric, Metric) or metric.formula is not None or \
            metric.scale is not Scale.AMOUNT or not asked.labelled:
        return None
    said = label_stems(query.measure_words - parts.naming_words(every=True) - CUE_WORDS)
    name = label_stems(tokens(metric.name))
    item = asked.labelled[0]
    # its name's initials spelled out: AMC's AdjustedEarningsBeforeInterestTaxes... is its
    # "Adjusted EBITDA"
    own = label_stems(with_initials(split_name(item.concepts[0]), frozenset(tokens(metric.name))))
    return item if name <= own <= said else None


def _asked_of(query: Query, info: Any, labels: FactLabels) -> tuple[Asked, Parts]:
    # The company's own name ("Nike" of "NIKE Brand") and the measure's words ("equipment"
    # of "purchases of property and equipment") name no part of it.
    own = set(company_key(info.metadata.company).split()) | owned_names(query.text)
    # a statement row quoted whole names its figure ("buying and occupancy costs")
    quoted = quoted_rows(query.text, labels)
    prefer = preference(query.text)
    text, defining = _outside_definition(query)
    # an operand's word said before the definition too names the part every operand is of
    # ("Riot's Bitcoin Mining margin, defined as (Bitcoin Mining revenue minus ...")
    operands = phrase_words(query.measure) - (frozenset(tokens(text)) if defining else frozenset())
    parts = asked_parts(set(query.words) - own - quoted - defining,
                        set(query.measure_words) - own - quoted - defining - operands, text, labels,
                        lambda: _label_words(query.measure_words - own - quoted, labels, info,
                                             prefer))
    # a letter alone names a class ("Class C"), no word of a label ("s" of "S&M"); parts set
    # against each other are all named, none of them the measure
    naming = parts.naming_words(every=bool(compared_parts(query, parts)))
    words = {w for w in query.measure_words - naming - CUE_WORDS - _sole_class(query.text, info)
             if len(w) > 1}
    labelled = labelled_items(frozenset(words), labels, info.facts, prefer,
                              counted=_counted(query.text))
    measure = query.measure
    if isinstance(measure, LineItem) and not any(f.concept in measure.concepts
                                                  for f in info.facts):
        # The vocabulary names the measure ("research and development expense" of "R&D")
        # but the filing tags it otherwise: its name meets the filing's labels.
        labelled += [i for i in labelled_items(frozenset(tokens(measure.name)), labels,
                                               info.facts, prefer) if i not in labelled]
    phrases = phrase_items(query.measure, labels, info.facts, frozenset(own),
                           parts.naming_words(every=True),
                           parts.options[0] if parts.options else frozenset())
    # a word naming any part the question may mean ("product" of "Prolia product sales",
    # ProductMember's) qualifies the part, not the measure
    # unless the question says it again before "within" the part, and nothing else of a
    # part's name there: "Pharmacy sales within the U.S. Retail Pharmacy segment" names a
    # product of the segment ("broadband revenues (the Broadband service line)" names one
    # part twice; "Fire & Security product revenue within its Global Products segment" names
    # the member Global Products Fire & Security before "within")
    naming = parts.naming_words(every=True)
    narrowing = query.modifiers - (naming - _said_again_within(query.text, naming)) - own
    held = holding(labelled, narrowing, labels) if narrowing else []
    if parts.options:
        phrases |= segment_operands(query.measure, labels, info)
    segment = segment_measures(query.text, frozenset(words), labels, info) \
        if parts.options else []
    if segment:  # the company's own segment measure, before the vocabulary's name for it
        vocabulary = [measure] if isinstance(measure, LineItem) else []
        return Asked(parts.options, (*segment, *vocabulary, *labelled), phrases, False), parts
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


# "Class A shares": the class of stock a question names.
_CLASS = re.compile(r"\bclass\s+([a-z])\b", re.I)


def _sole_class(text: str, info: Any) -> frozenset[str]:
    """{"class"} when the class of stock the question names is the one class the filing's
    cover registers: GameStop registers Class A alone and tags its count with no class
    member, so "Class A shares outstanding" is that count, not a balance sheet row holding
    "class"; else nothing."""
    asked = {m.group(1).upper() for m in _CLASS.finditer(text)}
    entry = info.metadata.cover.get(CoverField.SECURITIES) if asked else None
    registered = {m.group(1).upper() for m in _CLASS.finditer(entry.value)} if entry else set()
    return frozenset({"class"}) if asked and registered == asked else frozenset()


_WITHIN = re.compile(r"\bwithin\b", re.I)
def _said_again_within(text: str, naming: frozenset[str]) -> set[str]:
    """The words naming a part that the question says before "within" and again after it,
    where it says no other word of a part's name before "within"."""
    within = _WITHIN.search(text)
    if within is None:
        return set()
    said, before = tokens(text), [w for w in tokens(text[:within.start()]) if w in naming]
    again = {w for w in before if said.count(w) > 1}
    return again if again and len(again) == len(set(before)) else set()


# The units a count of shares is tagged in ("shares"), and a count of people ("employee").
_SHARE_UNITS = label_stems(["shares"])
_STAFF_UNITS = label_stems(STAFF_TERMS)


def _counted(text: str) -> frozenset[str] | None:
    """The units a count the question asks is tagged in: people for a staff count, shares
    for a count of shares, any count's for another; None when it asks no count."""
    if asks_staff(text):
        return _STAFF_UNITS
    if asks_share_count(text):
        return _SHARE_UNITS
    return frozenset() if asks_count(text) else None


def _outside_definition(query: Query) -> tuple[str, frozenset[str]]:
    """The question's text with the definition it states blanked, and the words only the
    definition says: they name its operands, not a part of the company ("net income
    attributable to common stock" names no class of stock)."""
    found = stated_definitions(query.text) if isinstance(query.measure, Metric) else []
    # each definition's formula, not the name it defines ("NVIDIA's Compute & Networking
    # operating margin, defined as ...")
    low = query.text.lower()
    at = [(i, i + len(d.text)) for d in found if (i := low.find(d.text.lower(), *d.span)) >= 0]
    if not at:
        return query.text, frozenset()
    start, end = min(a for a, _ in at), max(b for _, b in at)
    outside = f"{query.text[:start]}{' ' * (end - start)}{query.text[end:]}"
    return outside, frozenset(tokens(query.text[start:end])) - frozenset(tokens(outside))


def _label_words(words: frozenset[str], labels: FactLabels, info: Any,
                 prefer: Any) -> frozenset[str]:
    """The words of the label that names the measure best: "aggregate market value" of the
    public float's names no part of the company, though "Key Emerging Markets" holds one."""
    best = labelled_items(words, labels, info.facts, prefer)[:1]
    return labels.concept_words.get(best[0].concepts[0], frozenset()) if best else frozenset()


def no_narrower(query: Query, info: Any, words: frozenset[str]) -> str:
    """What the filing holds when the question narrows its measure past its labels."""
    return (f"{info.title} has no figure labelled {' '.join(sorted(words))} "
            f"{query.measure.name}; it reports {query.measure.name} as a whole")
