"""What a table cell measures, so that arithmetic never mixes kinds.

Adding dollars to a percent change, or averaging a share count with a percentage, gives a
number no reader can use; a table that lays such rows side by side ("Net sales", "% of net
sales", "Shares outstanding") makes the mistake easy when a question names two rows or a
header's columns differ. The operations that add or subtract figures (sum, average,
change, difference, percentage change) take operands of one kind; a ratio or proportion
may relate two kinds ("revenue per employee") and is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum

from pipeline.rag.answers.arithmetic import NoAnswer
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.vocabulary.line_items import PER_SHARE
from retriever_trt.documents.tables import Cell

# The operations whose operands must be of one kind: they add or subtract them.
SAME_KIND_OPERATIONS = frozenset({Operation.SUM, Operation.AVERAGE, Operation.CHANGE,
                                  Operation.DIFFERENCE, Operation.PERCENT_CHANGE})
_PERCENT_LABEL = re.compile(r"%|\bpercent(?:age)?\b|\bas a share of\b", re.I)
# A row or column of counts, not money: "Number of shares", "Weighted average shares
# outstanding", "Employees". A per-share amount is money ("Earnings per share").
_COUNT_LABEL = re.compile(r"\bnumber of\b|\bshares\b|\bheadcount\b|\bemployees\b|\bunits\b", re.I)


class CellKind(str, Enum):
    PERCENT = "a percentage"
    COUNT = "a count"
    AMOUNT = "an amount"

    __hash__ = str.__hash__


class MixedKinds(NoAnswer):
    """Operands of different kinds: the computation is refused, with the reason a reader
    is given (`reason`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def kind_of(cell: Cell) -> CellKind:
    """A percentage when its value, row or column says so; a count when its row or column
    counts shares, employees or units; else an amount."""
    labels = f"{cell.row} {cell.column}"
    if (cell.value is not None and cell.value.percent) or _PERCENT_LABEL.search(labels):
        return CellKind.PERCENT
    if _COUNT_LABEL.search(labels) and not PER_SHARE.search(labels):
        return CellKind.COUNT
    return CellKind.AMOUNT


def check_same_kind(operation: str, cells: Sequence[Cell]) -> None:
    """Raise MixedKinds when `operation` would add or subtract cells of different kinds."""
    if operation not in SAME_KIND_OPERATIONS:
        return
    kinds = [kind_of(c) for c in cells]
    if len(set(kinds)) <= 1:
        return
    shown = ", ".join(f"{c.row} ({c.column}) is {k.value}" for c, k in zip(cells, kinds, strict=True))
    raise MixedKinds(f"the figures it would take are of different kinds ({shown}), and "
                     f"a {str(operation).replace('_', ' ')} of them means nothing")
