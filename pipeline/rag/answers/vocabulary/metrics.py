"""Financial metrics by definition, computed from line items (`line_items.py`).

A metric is a formula (formula.py) over line items, scaled to a percent or to days. The
vocabulary's are a sum of signed line items, optionally over a denominator line item (a
balance averaged over the period's start and end where `average` says so). A question that
gives its own definition ("defined as revenue / average PP&E", "365 * (average accounts
payable) / (COGS + change in inventory)") is parsed into a formula of its own
(definitions.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from enum import Enum

from pipeline.rag.answers.vocabulary.formula import (
    BinOp,
    Const,
    ItemMode,
    ItemTerm,
    Node,
    Op,
    multiplies_by_hundred,
)

DAYS_IN_YEAR = 365


class Scale(Enum):
    AMOUNT = "amount"      # dollars: free cash flow
    RATIO = "ratio"        # 1.07
    PERCENT = "percent"    # 46.2
    DAYS = "days"          # 62.3


@dataclass(frozen=True)
class Metric:
    name: str
    numerator: tuple[tuple[str, int], ...]   # (line item, +1 or -1)
    denominator: str | None = None
    scale: Scale = Scale.RATIO
    average: bool = False                    # the denominator averaged over start and end
    synonyms: tuple[str, ...] = ()
    formula: Node | None = None              # a question's own definition, in place of the above
    # The numerator from other line items, where the filing tags none of the first: gross
    # profit is revenue less cost of revenue (Amazon, Alphabet and Walmart tag no gross profit).
    otherwise: tuple[tuple[str, int], ...] = ()

    def alternatives(self) -> tuple[Metric, ...]:
        """This metric, then its numerator from other line items."""
        if not self.otherwise:
            return (self,)
        return (self, replace(self, numerator=self.otherwise, otherwise=()))

    @property
    def phrases(self) -> tuple[str, ...]:
        return (self.name, *self.synonyms)

    def expression(self) -> Node:
        """The formula: the question's, else numerator (over denominator)."""
        if self.formula is not None:
            return self.formula
        (first, _), *rest = self.numerator
        top: Node = ItemTerm(first)
        for name, sign in rest:
            top = BinOp(Op.ADD if sign > 0 else Op.SUB, top, ItemTerm(name))
        if self.denominator is None:
            return top
        mode = ItemMode.AVERAGE if self.average else ItemMode.VALUE
        return BinOp(Op.DIV, top, ItemTerm(self.denominator, mode))

    def scaled(self, days: Decimal = Decimal(DAYS_IN_YEAR)) -> Node:
        """The formula with its scale in it: * 100 for a percent (unless it says so
        itself), * `days` for a days ratio (the period's days; a year's for a metric that is
        a term of another, "CCC is defined as DIO + DSO - DPO")."""
        expr = self.expression()
        if self.scale is Scale.PERCENT and not multiplies_by_hundred(expr):
            return BinOp(Op.MUL, expr, Const(Decimal(100)))
        if self.scale is Scale.DAYS:
            return BinOp(Op.MUL, expr, Const(days))
        return expr


P, R, D, A = Scale.PERCENT, Scale.RATIO, Scale.DAYS, Scale.AMOUNT
METRICS: tuple[Metric, ...] = (
    Metric("gross margin", (("gross profit", 1),), "revenue", P,
           synonyms=("gross profit margin", "gross margin percentage"),
           otherwise=(("revenue", 1), ("cost of revenue", -1))),
    Metric("operating margin", (("operating income", 1),), "revenue", P,
           synonyms=("operating profit margin", "operating income margin")),
    Metric("net margin", (("net income", 1),), "revenue", P,
           synonyms=("net profit margin", "net income margin", "profit margin")),
    Metric("ebitda margin", (("operating income", 1), ("depreciation and amortization", 1)),
           "revenue", P, synonyms=("unadjusted ebitda margin",)),
    Metric("ebitda", (("operating income", 1), ("depreciation and amortization", 1)), None, A,
           synonyms=("unadjusted ebitda",)),
    Metric("free cash flow", (("operating cash flow", 1), ("capital expenditures", -1)), None, A,
           synonyms=("fcf",)),
    Metric("current ratio", (("total current assets", 1),), "total current liabilities", R),
    Metric("effective tax rate", (("income tax expense", 1),), "pretax income", P),
    Metric("fixed asset turnover", (("revenue", 1),), "property, plant and equipment", R, True,
           ("fixed asset turnover ratio",)),
    Metric("asset turnover", (("revenue", 1),), "total assets", R, True,
           ("total asset turnover",)),
    Metric("return on assets", (("net income", 1),), "total assets", P, True, ("roa",)),
    Metric("return on equity", (("net income", 1),), "total shareholders' equity", P, True,
           ("roe",)),
    Metric("inventory turnover", (("cost of revenue", 1),), "inventory", R, True),
    Metric("debt to equity", (("total liabilities", 1),), "total shareholders' equity", R,
           synonyms=("liabilities to equity", "debt-to-equity")),
    Metric("dividend payout ratio", (("dividends paid", 1),), "net income", P,
           synonyms=("payout ratio",)),
    Metric("capex as a percentage of revenue", (("capital expenditures", 1),), "revenue", P,
           synonyms=("capex as % of revenue", "capital expenditures as a percentage of revenue",
                     "capex to revenue", "capex as a percent of revenue")),
    Metric("r&d as a percentage of revenue", (("research and development expense", 1),),
           "revenue", P, synonyms=("r&d as % of revenue", "r&d intensity")),
)
# "Days X outstanding": the balance over its year's flow, times the days in a year.
DAYS_METRICS: tuple[Metric, ...] = (
    Metric("days payable outstanding", (("accounts payable", 1),), "cost of revenue", D,
           synonyms=("dpo",)),
    Metric("days sales outstanding", (("accounts receivable", 1),), "revenue", D,
           synonyms=("dso",)),
    Metric("days inventory outstanding", (("inventory", 1),), "cost of revenue", D,
           synonyms=("dio", "days of inventory")),
)
ALL_METRICS = METRICS + DAYS_METRICS
