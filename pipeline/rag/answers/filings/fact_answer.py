"""Answers from tagged facts: a filing's inline-XBRL numbers, found by line item and period,
computed exactly (Decimal) with the derivation, each operand cited with the table cell it
is shown in. When an operand has no fact, there is no number: `missing` says which.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, DivisionByZero, InvalidOperation

from pipeline.rag.answers.arithmetic import NoAnswer, operand, percent_change, rounded
from pipeline.rag.answers.filings.fact_labels import SEGMENT_AXIS, describe_members, qualifiers
from pipeline.rag.answers.filings.fact_targets import Target, targets, years_earlier
from pipeline.rag.answers.filings.scope import END_SLACK
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.periods import MONTHS_IN_YEAR
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.vocabulary.formula import PHRASE, evaluate
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, Kind, LineItem
from pipeline.rag.answers.vocabulary.metrics import DAYS_IN_YEAR, Metric, Scale
from retriever_trt.documents.model import Fact
from retriever_trt.store.document_store import DocumentInfo

SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9}
_WORD_OF = {3: "thousand", 6: "million", 9: "billion"}
DEFAULT_DECIMALS = {Scale.PERCENT: 2, Scale.RATIO: 2, Scale.DAYS: 1}
PER_SHARE_DECIMALS = 2
# A figure is answered with its sign as tagged: a net loss is negative income, as analysts and
# the tag write it. An outflow ("how much cash did operations burn") or what was lost is
# answered with its size, and so is a loss whose size is asked ("how large was the net
# loss"). "losses" singularizes crudely to "losse".
OUTFLOW_WORDS = frozenset({"outflow", "burn", "burned", "burnt", "lost", "lose"})
LOSS_WORDS = frozenset({"loss", "losse"})
GAIN_WORDS = frozenset({"income", "profit", "earning", "gain"})
_ASKS_SIZE = re.compile(r"\bhow (?:large|big)\b|\bsize\b|\bmagnitude\b|\bpositive\b|\babsolute\b",
                        re.I)
# The cover's facts (public float, shares outstanding) are of the date the cover states,
# not of the period a question names.
COVER_PREFIX = "dei:"
# The periods the prose lists when a figure is missing: what the filing holds instead.
MAX_HELD_PERIODS = 6
# Operations whose answer reads several periods; any other reads the latest one named.
_MULTI_PERIOD = frozenset({Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE,
                           Operation.SUM, Operation.MULTI_LOOKUP})


@dataclass
class FactResult:
    value: Decimal | None
    scale: str                      # "", "thousand", "million", "billion", "percent"
    derivation: str
    facts: list[Fact] = field(default_factory=list)
    missing: str | None = None      # what had no fact, when value is None
    per_share: bool = False


def find_fact(info: DocumentInfo, item: LineItem, target: Target,
              members: frozenset[tuple[str, str]] = frozenset()) -> Fact | None:
    """The fact of `item` for `target` of exactly the part `members` names (none: the
    company's own figure, no segment's): for a part other than a segment, one without a
    neutral member first (Merck's U.S. revenue, 7,018, not its segments' U.S. total beside
    it, 7,045; a segment's figure with the segments' member is its total, inter-segment
    sales included, which a question may ask); then one shown in a table, whatever its
    concept (Salesforce tags a "$1.0 billion" of its prose DepreciationDepletionAndAmortization
    and prints DepreciationAndAmortization in its cash flows), then in the vocabulary's
    order."""
    order = {c: i for i, c in enumerate(item.concepts)}
    found = [f for f in info.facts if f.concept in order and _fits(f, item, target)
             and qualifiers(f) == members]
    plain_first = not any(axis == SEGMENT_AXIS for axis, _ in members)
    return min(found, key=lambda f: (plain_first and len(f.dimensions) > len(members),
                                     f.fact_id not in info.fact_cells, order[f.concept]),
               default=None)


def _fits(f: Fact, item: LineItem, target: Target) -> bool:
    if f.concept.startswith(COVER_PREFIX):
        # The cover states one date of its own: any period of its filing reads it, but a
        # date asked ("outstanding as of February 21, 2025") is that date's cover only.
        return not target.dated or abs(f.end - target.end) <= END_SLACK
    if abs(f.end - target.end) > END_SLACK:
        return False
    if item.kind is Kind.BALANCE or target.months is None:  # a balance date reads instants
        return f.start is None
    return f.start is not None and f.months == (target.months or MONTHS_IN_YEAR)


def _reported(info: DocumentInfo, item: LineItem, members: frozenset[tuple[str, str]]) -> bool:
    return any(f.concept in item.concepts and qualifiers(f) == members for f in info.facts)


def held(info: DocumentInfo, item: LineItem, members: frozenset[tuple[str, str]]) -> str:
    """What the filing does hold of `item` for that part: its periods, for the prose of a
    figure it lacks."""
    periods = sorted({Target(f.end, f.months or None) for f in info.facts
                      if f.concept in item.concepts and qualifiers(f) == members},
                     key=lambda t: (t.end, t.months or 0), reverse=True)
    part = f" of {describe_members(members)}" if members else ""
    if not periods:
        return f"{info.title} reports no {item.name}{part}"
    shown = ", ".join(t.label() for t in periods[:MAX_HELD_PERIODS])
    return f"{info.title} reports {item.name}{part} for {shown}"


def _balance_target(item: LineItem, t: Target) -> Target:
    return Target(t.end, None, t.dated) if item.kind is Kind.BALANCE else t


class _Reader:
    """Reads line items for targets, of the part the question names, remembering each fact
    used and the first one missing."""

    def __init__(self, info: DocumentInfo, members: frozenset[tuple[str, str]],
                 phrases: dict[str, LineItem] | None = None) -> None:
        self.info, self.members, self.used, self.missing = info, members, [], None
        self.phrases = phrases or {}
        self.missing_item: LineItem | None = None

    def item(self, name: str) -> LineItem | None:
        """A formula's operand: the item the filing's labels resolved it to (a phrase, or a
        vocabulary item the filing tags otherwise), else the vocabulary's."""
        found = self.phrases.get(name) or BY_NAME.get(name)
        if found is None and self.missing is None:
            self.missing = f"a figure labelled \"{name.removeprefix(PHRASE)}\""
        return found

    def value(self, item: LineItem, target: Target) -> Decimal | None:
        f = find_fact(self.info, item, _balance_target(item, target), self.members)
        if f is None:
            if self.missing is None:
                part = f" of {describe_members(self.members)}" if self.members else ""
                self.missing = f"{item.name}{part} ({_balance_target(item, target).label()})"
                self.missing_item = item
            return None
        self.used.append(f)
        return f.value


def _metric_value(reader: _Reader, metric: Metric, t: Target) -> tuple[Decimal | None, str]:
    """The metric for one period, and its formula with the values put in."""
    def read(name: str, years_back: int) -> Decimal | None:
        item = reader.item(name)
        return None if item is None else \
            reader.value(item, Target(years_earlier(t.end, years_back), t.months))

    days = Decimal(DAYS_IN_YEAR * (t.months or MONTHS_IN_YEAR)) / MONTHS_IN_YEAR
    return evaluate(metric.scaled(days.normalize()), read)


def _amount_scale(query: Query, facts: list[Fact]) -> int:
    if query.unit in SCALE_WORDS:
        return SCALE_WORDS[query.unit]
    shown = [f.scale for f in facts if f.scale in _WORD_OF]
    return shown[0] if shown else 0


@dataclass(frozen=True)
class Asked:
    """What a filing's facts must match besides the query's periods: the parts of the
    company the question may mean (`options`, best first, from `qualifiers.asked_parts`;
    none: the company's own figure) and the measure's candidates from the filing's own
    labels (`measure_match.labelled_items`), tried after the vocabulary's."""

    options: tuple[frozenset[tuple[str, str]], ...] = ()
    labelled: tuple[LineItem, ...] = ()
    # a defined metric's operands the vocabulary lacks, by their phrase (formula.PHRASE)
    phrases: dict[str, LineItem] = field(default_factory=dict)
    # False when the question narrows the vocabulary's item ("deferred revenue") and the
    # filing's labels hold it: those labels answer, not the item's concepts
    vocabulary: bool = True
    # the words narrowing the measure that neither a label nor a part of the filing holds
    unmatched: frozenset[str] = frozenset()


def answer_from_facts(query: Query, info: DocumentInfo, asked: Asked = Asked()) -> \
        FactResult | None:
    """The query's measure in this filing, or None when neither the query nor the filing's
    labels name a measure. A figure of another period, part or measure is never taken in
    place of the one asked: with none, `missing` says what the filing does hold."""
    measure = query.measure
    items = ([measure] if isinstance(measure, LineItem) and asked.vocabulary else []) + \
        list(asked.labelled)
    if not isinstance(measure, Metric) and not items:
        return None
    ts = targets(query, info)
    if not ts:
        return FactResult(None, "", "", missing=f"the period asked in {info.title}")
    if query.operation not in _MULTI_PERIOD:
        ts = ts[-1:]  # its answer is the latest period's: an earlier one's gap must not void it
    if _average_of_one(query, ts):
        return FactResult(None, "", "", missing=f"an average of one period's {measure.name}")
    lacking = None
    for members in asked.options or (frozenset(),):
        got = _read_measure(query, info, ts, items, members, asked.phrases)
        if got.value is not None:
            return got
        lacking = lacking or got
    return lacking


def _average_of_one(query: Query, ts: list[Target]) -> bool:
    """Whether the question averages a flow over the one period it names: "the average
    revenue from its top twenty customers over the trailing twelve months" is an average per
    customer, which no fact gives; that period's revenue is no answer. A measure that is an
    average itself ("the average diluted share count") is its own figure."""
    measure = query.measure
    return query.operation is Operation.AVERAGE and len(ts) < 2 and \
        isinstance(measure, LineItem) and measure.kind is Kind.FLOW and \
        "average" not in measure.name


def _read_measure(query: Query, info: DocumentInfo, ts: list[Target], items: list[LineItem],
                  members: frozenset[tuple[str, str]],
                  phrases: dict[str, LineItem]) -> FactResult:
    """The measure of one part for the targets: a metric from its line items, else the
    first of `items` the filing has every period of."""
    if isinstance(query.measure, Metric):
        first = None
        for metric in query.measure.alternatives():
            reader = _Reader(info, members, phrases)
            pairs = [_metric_value(reader, metric, t) for t in ts]
            if all(v is not None for v, _ in pairs):
                return _finish(query, [v for v, _ in pairs], ts, metric.scale, reader.used,
                               False, [s for _, s in pairs])
            first = first or reader
        return _lacking(info, first)
    if isinstance(query.measure, LineItem) and _reported(info, items[0], members):
        items = items[:1]  # the filing reports it, just not for this period: no stand-in
    if ts and all(t.months is None for t in ts):  # a balance date: no flow answers it
        items = [i for i in items if i.kind is Kind.BALANCE or i is query.measure]
    first = None
    for item in items:
        reader = _Reader(info, members)
        values = [reader.value(item, t) for t in ts]
        if all(v is not None for v in values):
            return _finish(query, values, ts, Scale.AMOUNT, reader.used, item.per_share, [])
        first = first or reader
    if first is None:  # every candidate was a flow, and a balance's date was asked
        return FactResult(None, "", "", [], "a balance at the date asked")
    return _lacking(info, first)


def _lacking(info: DocumentInfo, reader: _Reader) -> FactResult:
    """No number: what had no fact, and what the filing holds of it instead."""
    what = reader.missing or "a denominator of zero"
    if reader.missing_item is not None:
        what = f"{what}; {held(info, reader.missing_item, reader.members)}"
    return FactResult(None, "", "", reader.used, what)


def _finish(query: Query, values: list[Decimal], ts: list[Target], kind: Scale,
            used: list[Fact], per_share: bool, shown_formulas: list[str]) -> FactResult:
    op = query.operation
    value = values[-1]
    how = "value"
    try:
        if op.periods == 2 and len(values) >= 2:
            old, new = values[0], values[-1]
            value = percent_change(old, new) if op == Operation.PERCENT_CHANGE else new - old
            how = "percent change" if op == "percent_change" else "change"
        elif op == Operation.AVERAGE and len(values) >= 2:
            value, how = sum(values, Decimal(0)) / len(values), "average"
        elif op == Operation.SUM and len(values) >= 2:
            value, how = sum(values, Decimal(0)), "sum"
    except (NoAnswer, DivisionByZero, InvalidOperation):
        return FactResult(None, "", "", used, "a base of zero for the change")
    if how == "value" and value < 0 and _asks_the_size(query):
        # "How large was the net loss": its size, as the statement prints it on its "Net
        # loss" line; the tag is signed as income (NetIncomeLoss -648)
        value, values, how = -value, [-v for v in values], "the loss, tagged negative as income"
    if how == "percent change":
        return FactResult(_round(value, query.decimals, 2), "percent",
                          _derive(values, ts, how), used)
    if kind is Scale.AMOUNT:
        if per_share:
            return FactResult(_round(value, query.decimals, PER_SHARE_DECIMALS), "",
                              _derive(values, ts, how), used, per_share=True)
        power = _amount_scale(query, used)
        shown = value.scaleb(-power)
        return FactResult(_round(shown, query.decimals, None), _WORD_OF.get(power, ""),
                          _derive([v.scaleb(-power) for v in values], ts, how, shown_formulas),
                          used)
    scale = "percent" if kind is Scale.PERCENT else ""
    return FactResult(_round(value, query.decimals, DEFAULT_DECIMALS[kind]), scale,
                      _derive(values, ts, how, shown_formulas), used)


# "a loss is negative", "negative for a loss", "with its sign": the signed figure asked.
_ASKS_SIGN = re.compile(r"\bnegative\b|\bsigned\b|\bwith (?:its|a|the) (?:minus )?sign\b",
                        re.I)


def _asks_the_size(query: Query) -> bool:
    """The measure is named as an outflow or as what was lost, or as a loss whose size is
    asked ("how large was the net loss"); not as the income or gain whose negative it is
    ("net income (loss)"), nor with its sign asked for."""
    words = query.measure_words
    named = bool(words & OUTFLOW_WORDS) or bool(words & LOSS_WORDS) and \
        _ASKS_SIZE.search(query.text) is not None
    return named and not words & GAIN_WORDS and not _ASKS_SIGN.search(query.text)


def _round(value: Decimal, asked: int | None, default: int | None) -> Decimal:
    places = asked if asked is not None else default
    if places is None:  # an amount converted exactly: as many places as it has
        return value.normalize()
    return rounded(value, places)


def _derive(values: list[Decimal], ts: list[Target], how: str, shown: Sequence[str] = ()) -> str:
    """How the answer was computed; a metric's value of each period with its formula,
    its values put in (`shown`)."""
    parts = [f"{operand(v)} ({t.label()})" for v, t in zip(values, ts, strict=True)]
    if shown:
        parts = [f"{operand(v)} ({t.label()}: {s})" for v, t, s in zip(values, ts, shown, strict=True)]
    if how == "percent change":
        old, new = operand(values[0]), operand(values[-1])
        return f"({new} - {old}) / |{old}| * 100; " + "; ".join(parts)
    if how == "change":
        return f"{operand(values[-1])} - {operand(values[0])}; " + "; ".join(parts)
    return f"{how}: " + "; ".join(parts)
