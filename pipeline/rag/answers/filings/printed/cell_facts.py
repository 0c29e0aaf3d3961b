"""A printed table cell read as a fact (a PDF's figures have no tags): the cell's number
times the table's scale ("(In millions, except ... per-share amounts)": per-share items
are not scaled), dated by its column's period, under the line item's first concept.
Payments the XBRL taxonomy tags as positive amounts (capital expenditures, dividends,
buybacks) are read without the cash flow statement's parentheses.
"""

from __future__ import annotations

from datetime import date

from pipeline.rag.answers.filings.printed.statement_rows import SCALE_POWER
from pipeline.rag.answers.tables.column_periods import ColumnPeriod
from pipeline.rag.answers.vocabulary.line_items import Kind, LineItem
from retriever_trt.documents.model import Fact
from retriever_trt.documents.tables import Cell


def _start(item: LineItem, p: ColumnPeriod) -> date | None:
    """A flow's first day (None for a balance)."""
    return None if item.kind is Kind.BALANCE else p.first_day()


def table_fact(item: LineItem, cell: Cell, period: ColumnPeriod, scale: str, fact_id: str,
               deduction: bool) -> Fact:
    """The fact `cell` shows for `item`; `deduction`: an expense printed as a negative the
    statement adds (its opposite is the expense)."""
    power = 0 if item.per_share else SCALE_POWER.get(scale, 0)
    value = cell.value.number.scaleb(power)
    if item.outflow:  # tagged positive, printed "(1,257)" as a deduction
        value = abs(value)
    elif deduction:
        value = -value
    return Fact(fact_id, item.concepts[0], value, "USD/shares" if item.per_share else "USD",
                period.end, _start(item, period), (), None, power, cell.text)
