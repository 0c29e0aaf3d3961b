"""Question templates of the filings question set, for benchmarks/filings_gold.py.

A template says what is asked (its operands: line items at periods), how the gold is
computed (a `Formula`, whose filled-in text is the record's derivation) and how it is
worded. Each candidate's wording is picked by a hash of its id among several phrasings
of the company, the line item, the period and the unit, so the set reads like questions
analysts type, and is the same on every run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from filings_vocab import ITEMS


class QType(Enum):
    LOOKUP = "lookup"
    CHANGE = "change"
    MARGIN = "margin"
    RATIO = "ratio"
    TEXT = "text"


class Formula(Enum):
    """The derivation's shape: {0}, {1}, ... are the operands' values in the asked unit."""

    VALUE = "{0}"
    CHANGE_PCT = "({0} - {1}) / {1} * 100"
    DIFFERENCE = "{0} - {1}"
    SHARE_PCT = "{0} / {1} * 100"
    RATIO = "{0} / {1}"
    AVERAGE_RATIO = "{0} / (({1} + {2}) / 2)"
    AVERAGE_RATIO_PCT = "{0} / (({1} + {2}) / 2) * 100"


PERCENT_DECIMALS = 1
RATIO_DECIMALS = 2


@dataclass(frozen=True)
class Operand:
    item: str     # a key of filings_vocab.ITEMS
    period: str   # a key of filings_periods.periods_of


@dataclass(frozen=True)
class Template:
    """`wording` holds format strings over {co} (the company's possessive), {co_plain} (its
    name), {p0}, {p1} (the operands' periods with a preposition: "in fiscal 2024"),
    {p0_bare}, {p1_bare} (without: "fiscal 2024"), {item}, {op1} (the first and second
    operands' names) and {unit} ("in USD millions")."""

    key: str
    type: QType
    operands: tuple[Operand, ...]
    formula: Formula
    wording: tuple[str, ...]
    percent: bool = False     # the answer is a percent (else: the operands' unit, or a ratio)


def pick(options: Sequence[str], salt: str, key: str) -> str:
    """One of `options`, the same for the same key and salt on every run."""
    digest = hashlib.sha256(f"{salt}|{key}".encode()).digest()
    return options[digest[0] % len(options)]


def lookup_templates(item: str, periods: Sequence[str]) -> list[Template]:
    verb, it = ("were", "they") if ITEMS[item].plural else ("was", "it")
    wording = (f"What {verb} {{co}} {{item}} {{p0}}? Answer {{unit}}.",
               f"{{co}} {{item}} {{p0}}: how much {verb} {it}, {{unit}}?",
               f"How much {verb} {{co}} {{item}} {{p0}}, {{unit}}?",
               "Give {co} {item} {p0} ({unit}).")
    return [Template(f"lookup-{item}-{p}", QType.LOOKUP, (Operand(item, p),), Formula.VALUE,
                     wording) for p in periods]


def change_templates(item: str, current: str, prior: str) -> list[Template]:
    ops = (Operand(item, current), Operand(item, prior))
    pct = ("By what percentage did {co} {item} change {p0} compared with {p1_bare}? "
           "Answer in percent, one decimal.",
           "What was the year-over-year percent change in {co} {item} {p0} versus {p1_bare}, "
           "rounded to one decimal?",
           "{co} {item} growth {p0} over {p1_bare}, in percent (one decimal)?")
    absolute = ("What was the change in {co} {item} {p0} compared with {p1_bare}, {unit}? "
                "A decrease is negative.",
                "By how much did {co} {item} change from {p1_bare} to {p0_bare}? Give the "
                "difference {unit}, negative for a decline.")
    return [Template(f"change_pct-{item}-{current}", QType.CHANGE, ops, Formula.CHANGE_PCT, pct,
                     percent=True),
            Template(f"change_abs-{item}-{current}", QType.CHANGE, ops, Formula.DIFFERENCE,
                     absolute)]


MARGINS = {"gross": "gross_profit", "operating": "operating_income", "net": "net_income"}


def margin_templates(period: str) -> list[Template]:
    out = []
    for name, item in MARGINS.items():
        wording = (f"What was {{co}} {name} margin {{p0}}? Answer as a percentage with one "
                   "decimal.",
                   f"What was {{co}} {name} margin {{p0}}, i.e. {{item}} as a percent of "
                   "revenue, rounded to one decimal?",
                   f"{{co}} {name} margin {{p0}} in percent (one decimal)?")
        out.append(Template(f"margin-{name}-{period}", QType.MARGIN,
                            (Operand(item, period), Operand("revenue", period)),
                            Formula.SHARE_PCT, wording, percent=True))
    return out


def ratio_templates(form: str, flow: str) -> list[Template]:
    """The ratio questions of a filing; `flow` is the period of its cash flow statement."""
    out = [
        Template("ratio-current-END", QType.RATIO,
                 (Operand("current_assets", "END"), Operand("current_liabilities", "END")),
                 Formula.RATIO,
                 ("What was {co} current ratio {p0}? Round to two decimals.",
                  "What was {co} current ratio (current assets / current liabilities) {p0}, "
                  "to two decimal places?")),
        Template("ratio-liabilities_to_equity-END", QType.RATIO,
                 (Operand("total_liabilities", "END"), Operand("equity", "END")), Formula.RATIO,
                 ("What was {co} debt-to-equity ratio {p0}, defined as total liabilities "
                  "divided by {op1}? Two decimals.",
                  "Compute {co} total liabilities to {op1} ratio {p0}, rounded to two "
                  "decimals.")),
        Template(f"ratio-fcf-{flow}", QType.RATIO,
                 (Operand("ocf", flow), Operand("capex", flow)), Formula.DIFFERENCE,
                 ("What was {co} free cash flow {p0}, defined as cash from operations minus "
                  "capital expenditures, {unit}?",
                  "How much free cash flow (operating cash flow less purchases of property "
                  "and equipment) did {co_plain} generate {p0}? Answer {unit}.")),
        Template(f"ratio-rnd_share-{flow}", QType.RATIO,
                 (Operand("rnd", flow), Operand("revenue", flow)), Formula.SHARE_PCT,
                 ("What was {co} research and development expense as a percentage of revenue "
                  "{p0}? One decimal.",), percent=True),
    ]
    if form != "10-K":
        return out
    return out + [
        Template("ratio-fixed_asset_turnover-FY", QType.RATIO,
                 (Operand("revenue", "FY"), Operand("ppe", "END"), Operand("ppe", "END-1")),
                 Formula.AVERAGE_RATIO,
                 ("What was {co} fixed asset turnover {p0}, defined as revenue / average net "
                  "PP&E (the average of the fiscal year's opening and closing balances)? "
                  "Round to two decimals.",)),
        Template("ratio-roe-FY", QType.RATIO,
                 (Operand("net_income", "FY"), Operand("equity", "END"),
                  Operand("equity", "END-1")), Formula.AVERAGE_RATIO_PCT,
                 ("What was {co} return on average equity {p0}, defined as {item} divided by "
                  "the average of opening and closing {op1}? Answer in percent, one decimal.",),
                 percent=True),
        Template("ratio-payout-FY", QType.RATIO,
                 (Operand("dividends", "FY"), Operand("net_income", "FY")), Formula.SHARE_PCT,
                 ("What was {co} dividend payout ratio {p0} (dividends paid / {op1}), in "
                  "percent to one decimal?",), percent=True),
    ]


def templates_for(form: str, has_ytd: bool) -> list[Template]:
    """Every candidate template for a filing of this form."""
    if form == "10-K":
        duration, flow, pairs = ("FY", "FY-1"), "FY", [("FY", "FY-1")]
    else:
        duration, flow = ("Q",) + (("YTD",) if has_ytd else ()), "YTD" if has_ytd else "Q"
        pairs = [("Q", "Q-1")] + ([("YTD", "YTD-1")] if has_ytd else [])
    out: list[Template] = []
    for key, item in ITEMS.items():
        if item.statement.name == "BALANCE":
            periods: tuple[str, ...] = ("END",)
        elif item.statement.name == "CASH_FLOW":
            periods = (flow,)
        else:
            periods = duration
        out += lookup_templates(key, periods)
    for item in ("revenue", "operating_income", "net_income", "eps_diluted", "gross_profit", "ocf"):
        for cur, old in pairs:
            if item != "ocf" or cur == flow:
                out += change_templates(item, cur, old)
    for period in duration[:1] + (("YTD",) if form != "10-K" and has_ytd else ()):  # not FY-1
        out += margin_templates(period)
    return out + ratio_templates(form, flow)
