"""Exact decimal arithmetic over table cells and tagged facts, with the derivation a reader
can check; the one percent change and the one rounding that every answer rule uses.

- Rounding is half-up (`rounded`): 2.345 to two places is 2.35, -2.345 is -2.35, as reports
  and analysts round a figure they show; Decimal's default, half-even (banker's rounding),
  is for sums of many rounded terms, which no answer is.
- A percent change divides by the base's absolute value (`percent_change`): a loss narrowing
  from -100 to -50 is +50%, a change whose sign says its direction, as analysts read it.
  TAT-QA's gold divides by the signed base; it differs on 7 of its 1,668 dev questions.

The derivation shows the operands as the table writes them ("(1,234)" becomes -1,234) so
each can be found in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from pipeline.rag.answers.operation import Operation

# What `compute` computes: a lookup and every computed operation.
OPERATIONS = (Operation.LOOKUP, *sorted(o for o in Operation if o.computed))


# Decimals a derivation shows of a computed operand (a ratio of 0.5115, a margin of 42.176).
DERIVATION_PLACES = 4


class NoAnswer(ValueError):
    """The operation cannot be computed (e.g. a division by zero)."""


@dataclass(frozen=True)
class Result:
    value: Decimal
    derivation: str


def rounded(value: Decimal, places: int) -> Decimal:
    """`value` to `places` decimals, half-up (away from zero on a tie)."""
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def percent_change(old: Decimal, new: Decimal) -> Decimal:
    """(new - old) / |old| * 100; NoAnswer from a base of zero."""
    if old == 0:
        raise NoAnswer("percentage change from zero")
    return (new - old) / abs(old) * 100


def operand(value: Decimal) -> str:
    """A value as a formula's derivation shows it: up to 4 decimals, no exponent."""
    return f"{rounded(value, DERIVATION_PLACES).normalize():f}"


def plain(value: Decimal) -> str:
    """'51.37', '-1200', '0.5': no separators, no trailing zeros, no exponent."""
    q = rounded(value, 2)
    text = format(q, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def shown(value: Decimal) -> str:
    """An operand as the derivation shows it: thousands separators, sign as '-'."""
    text = format(value, ",f")
    return text


def _wrap(value: Decimal) -> str:
    return f"({shown(value)})" if value < 0 else shown(value)


def compute(operation: str, values: list[Decimal], percent: bool = False) -> Result:
    """Apply `operation` to `values` (in the order the operation reads them: change and
    percent_change take [old, new]; ratio and proportion [numerator, denominator]).
    `percent` marks the result as a percentage in the derivation."""
    unit = "%" if percent else ""
    if operation == Operation.LOOKUP:
        (v,) = values
        return Result(v, f"{shown(v)}{unit}")
    if operation in (Operation.CHANGE, Operation.DIFFERENCE):
        a, b = (values[0], values[1]) if operation == Operation.DIFFERENCE else (values[1], values[0])
        r = a - b
        return Result(r, f"{shown(a)} - {_wrap(b)} = {plain(r)}{unit}")
    if operation == Operation.PERCENT_CHANGE:
        old, new = values
        r = percent_change(old, new)
        return Result(r, f"({shown(new)} - {_wrap(old)}) / |{shown(old)}| = {plain(r)}%")
    if operation == Operation.SUM:
        r = sum(values, Decimal(0))
        return Result(r, " + ".join(_wrap(v) for v in values) + f" = {plain(r)}{unit}")
    if operation == Operation.AVERAGE:
        r = sum(values, Decimal(0)) / len(values)
        terms = " + ".join(_wrap(v) for v in values)
        return Result(r, f"({terms}) / {len(values)} = {plain(r)}{unit}")
    if operation in (Operation.RATIO, Operation.PROPORTION):
        a, b = values
        if b == 0:
            raise NoAnswer("division by zero")
        if operation == Operation.RATIO:
            r = a / b
            return Result(r, f"{_wrap(a)} / {_wrap(b)} = {plain(r)}")
        r = a / b * 100
        return Result(r, f"{_wrap(a)} / {_wrap(b)} = {plain(r)}%")
    raise ValueError(f"unknown operation {operation!r}; one of {OPERATIONS}")
