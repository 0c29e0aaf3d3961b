"""Answers from tagged facts: a filing's inline-XBRL numbers, found by line item and period,
computed exactly (Decimal) with the derivation, each operand cited with the table cell it
is shown in. When an operand has no fact, there is no number: `missing` says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, DivisionByZero, InvalidOperation

from pipeline.rag.formula import evaluate
from pipeline.rag.line_items import BY_NAME, Kind, LineItem
from pipeline.rag.metrics import DAYS_IN_YEAR, Metric, Scale
from pipeline.rag.operation import Operation
from pipeline.rag.query import PeriodKind, Query
from pipeline.rag.scope import END_SLACK
from retriever_trt.documents.model import Fact
from retriever_trt.store import DocumentInfo

SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9}
_WORD_OF = {3: "thousand", 6: "million", 9: "billion"}
DEFAULT_DECIMALS = {Scale.PERCENT: 2, Scale.RATIO: 2, Scale.DAYS: 1}
PER_SHARE_DECIMALS = 2
MONTHS_IN_YEAR = 12
# Operations whose answer reads several periods; any other reads the latest one named.
_MULTI_PERIOD = frozenset({Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE,
                           Operation.SUM, Operation.MULTI_LOOKUP})


@dataclass(frozen=True)
class Target:
    """A period to read: its end, and its length in months (None: a balance date)."""

    end: date
    months: int | None

    def label(self) -> str:
        if self.months is None:
            return f"at {self.end.isoformat()}"
        return f"{self.months} months ended {self.end.isoformat()}"


@dataclass
class FactResult:
    value: Decimal | None
    scale: str                      # "", "thousand", "million", "billion", "percent"
    derivation: str
    facts: list[Fact] = field(default_factory=list)
    missing: str | None = None      # what had no fact, when value is None
    per_share: bool = False


def _years_back(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year - years)
    except ValueError:  # 29 February
        return d.replace(year=d.year - years, day=28)


def targets(query: Query, info: DocumentInfo) -> list[Target]:
    """The periods to read in this filing, oldest first."""
    m = info.metadata
    if m.period_end is None:
        return []
    annual = m.form.is_annual
    own = 12 if annual else 3
    out = []
    for p in query.periods or ():
        if p.end is not None:
            out.append(Target(p.end, None if p.kind is PeriodKind.INSTANT else p.months or own))
        elif p.kind in (PeriodKind.QUARTER, PeriodKind.MONTHS) and m.fiscal_year is not None \
                and p.year is not None:
            out.append(Target(_years_back(m.period_end, m.fiscal_year - p.year), p.months or 3))
        elif p.year is not None and m.fiscal_year is not None and annual:
            out.append(Target(_years_back(m.period_end, m.fiscal_year - p.year), 12))
    if not out:
        out = [Target(m.period_end, own)]
    if query.operation.periods == 2 and len(out) == 1:
        out.insert(0, Target(_years_back(out[0].end, 1), out[0].months))
    return sorted(set(out), key=lambda t: t.end)


def find_fact(info: DocumentInfo, item: LineItem, target: Target) -> Fact | None:
    """The undimensioned fact of `item` for `target` (concepts in the vocabulary's order;
    one shown in a table first)."""
    for concept in item.concepts:
        found = []
        for f in info.facts:
            if f.concept != concept or f.dimensions or abs(f.end - target.end) > END_SLACK:
                continue
            if item.kind is Kind.BALANCE and f.start is not None:
                continue
            months = target.months or 12
            if item.kind is Kind.FLOW and (f.start is None or f.months != months):
                continue
            found.append(f)
        if found:
            return min(found, key=lambda f: f.fact_id not in info.fact_cells)
    return None


def _balance_target(item: LineItem, t: Target) -> Target:
    return Target(t.end, None) if item.kind is Kind.BALANCE else t


class _Reader:
    """Reads line items for targets, remembering each fact used and the first one missing."""

    def __init__(self, info: DocumentInfo) -> None:
        self.info, self.used, self.missing = info, [], None

    def value(self, item: LineItem, target: Target) -> Decimal | None:
        f = find_fact(self.info, item, _balance_target(item, target))
        if f is None:
            self.missing = self.missing or f"{item.name} ({_balance_target(item, target).label()})"
            return None
        self.used.append(f)
        return f.value


def _metric_value(reader: _Reader, metric: Metric, t: Target) -> tuple[Decimal | None, str]:
    """The metric for one period, and its formula with the values put in."""
    def read(name: str, years_back: int) -> Decimal | None:
        return reader.value(BY_NAME[name], Target(_years_back(t.end, years_back), t.months))

    days = Decimal(DAYS_IN_YEAR * (t.months or MONTHS_IN_YEAR)) / MONTHS_IN_YEAR
    return evaluate(metric.scaled(days.normalize()), read)


def _amount_scale(query: Query, facts: list[Fact]) -> int:
    if query.unit in SCALE_WORDS:
        return SCALE_WORDS[query.unit]
    shown = [f.scale for f in facts if f.scale in _WORD_OF]
    return shown[0] if shown else 0


def answer_from_facts(query: Query, info: DocumentInfo) -> FactResult | None:
    """The query's measure in this filing, or None when the query names no measure."""
    measure = query.measure
    if measure is None:
        return None
    reader = _Reader(info)
    ts = targets(query, info)
    if not ts:
        return FactResult(None, "", "", missing=f"the period of {info.title}")
    if query.operation not in _MULTI_PERIOD:
        ts = ts[-1:]  # its answer is the latest period's: an earlier one's gap must not void it
    shown: list[str] = []
    if isinstance(measure, Metric):
        pairs = [_metric_value(reader, measure, t) for t in ts]
        values, shown = [v for v, _ in pairs], [s for _, s in pairs]
        kind = measure.scale
    else:
        values = [reader.value(measure, t) for t in ts]
        kind = Scale.AMOUNT
    if any(v is None for v in values):
        return FactResult(None, "", "", reader.used, reader.missing or "a denominator of zero")
    return _finish(query, values, ts, kind, reader.used,
                   isinstance(measure, LineItem) and measure.per_share, shown)


def _finish(query: Query, values: list[Decimal], ts: list[Target], kind: Scale,
            used: list[Fact], per_share: bool, shown_formulas: list[str]) -> FactResult:
    op = query.operation
    value = values[-1]
    how = "value"
    try:
        if op.periods == 2 and len(values) >= 2:
            old, new = values[0], values[-1]
            value = (new - old) / abs(old) * 100 if op == Operation.PERCENT_CHANGE else new - old
            how = "percent change" if op == "percent_change" else "change"
        elif op == Operation.AVERAGE and len(values) >= 2:
            value, how = sum(values, Decimal(0)) / len(values), "average"
        elif op == Operation.SUM and len(values) >= 2:
            value, how = sum(values, Decimal(0)), "sum"
    except (DivisionByZero, InvalidOperation):
        return FactResult(None, "", "", used, "a base of zero for the change")
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


def _round(value: Decimal, asked: int | None, default: int | None) -> Decimal:
    places = asked if asked is not None else default
    if places is None:  # an amount converted exactly: as many places as it has
        return value.normalize()
    return value.quantize(Decimal(1).scaleb(-places))


def _derive(values: list[Decimal], ts: list[Target], how: str, shown: Sequence[str] = ()) -> str:
    """How the answer was computed; a metric's value of each period with its formula,
    its values put in (`shown`)."""
    def fmt(v: Decimal) -> str:
        return f"{v.quantize(Decimal('0.0001')).normalize():f}"

    parts = [f"{fmt(v)} ({t.label()})" for v, t in zip(values, ts, strict=True)]
    if shown:
        parts = [f"{fmt(v)} ({t.label()}: {s})" for v, t, s in zip(values, ts, shown, strict=True)]
    if how == "percent change":
        return f"({fmt(values[-1])} - {fmt(values[0])}) / |{fmt(values[0])}| * 100; " + "; ".join(parts)
    if how == "change":
        return f"{fmt(values[-1])} - {fmt(values[0])}; " + "; ".join(parts)
    return f"{how}: " + "; ".join(parts)
