"""A compound annual growth rate the question names without defining it: "the compound
annual growth rate of Apple's total net sales from fiscal 2019 to fiscal 2021", "the
two-year revenue CAGR to FY2024".

The rate of a line item over the years from the first year named to the last, n of them:
(last / first) ^ (1 / n) - 1, in percent; the figure is the last year's, its base read n
years back (`ItemTerm.years_back`), so both come from the filing's own columns.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pipeline.rag.answers.vocabulary.formula import BinOp, Const, ItemTerm, Op
from pipeline.rag.answers.vocabulary.line_items import LineItem
from pipeline.rag.answers.vocabulary.metrics import Metric, Scale

_CAGR = re.compile(r"\bcagr\b|\bcompound(?:ed)? annual(?: growth)?(?: rate)?\b", re.I)


def asks_compound_growth(text: str) -> bool:
    return bool(_CAGR.search(text))


def compound_growth(item: LineItem, years: list[int]) -> Metric | None:
    """The rate of `item` from the earliest of `years` to the latest; None unless they
    span one year or more."""
    if len(years) < 2 or max(years) <= min(years):
        return None
    n = max(years) - min(years)
    ratio = BinOp(Op.DIV, ItemTerm(item.name), ItemTerm(item.name, years_back=n))
    root = BinOp(Op.POW, ratio, Const(Decimal(1) / Decimal(n)))
    return Metric("compound annual growth rate", (), scale=Scale.PERCENT,
                  formula=BinOp(Op.SUB, root, Const(Decimal(1))))
