"""How a table's cells and headers read: a dash is nil, a header's unit words name no column.

Read by the table rules (table_answer.py).
"""

from __future__ import annotations

import re
from decimal import Decimal

from pipeline.rag.answers.question_words import tokens
from retriever_trt.documents.filing.metadata import MONTHS
from retriever_trt.documents.tables import Cell, Table
from retriever_trt.documents.years import YEAR_DIGITS

# Words a header uses for its units ("2018 (In thousands, except percentages)", "2019 €m"):
# they say how figures are written, not which column a question names.
UNIT_WORDS = frozenset({"thousand", "million", "billion", "except", "percentage", "data",
                        "m", "bn", "k", "000"})
# Words a header uses for its period ("Three months ended December 31", "Fiscal year"): they
# say when its figures are, not what they measure.
PERIOD_WORDS = frozenset(MONTHS) | frozenset({"year", "month", "quarter", "ended", "ending",
                                              "fiscal", "fy", "three", "six", "nine", "twelve"})
# How a report writes nil in a figure's place.
_NIL = frozenset({"-", "—", "–", "--", "nil"})


def header_words(header: str) -> set[str]:
    """A column header's words that can name it, its unit words left out."""
    return set(tokens(header)) - UNIT_WORDS


def measure_words(header: str) -> set[str]:
    """A column header's words that say what its figures measure ("Allowance for Losses",
    "USD denominated"): its units, period words and numbers left out."""
    return {w for w in header_words(header) if not w.isdigit()} - PERIOD_WORDS


def is_nil(cell: Cell | None) -> bool:
    """A dash where a figure would be ("—", "$ —"): reports write nil so, not "0"."""
    return cell is not None and cell.value is None and cell.text.replace("$", "").strip() in _NIL


def figure_cells(table: Table) -> dict[tuple[int, int], Cell]:
    """The cells that print a figure, by (row, column): a number (not a percent) or nil."""
    return {(c.row_index, c.column_index): c for c in table.cells
            if (c.value is not None and not c.value.percent) or is_nil(c)}


def figure(cell: Cell) -> Decimal:
    """The cell's number, nil (a dash) as zero."""
    return cell.value.number if cell.value is not None else Decimal(0)


# A year written as a figure ("2027", "2039"): an expiration or maturity date, not an amount.
_YEAR_TEXT = re.compile(YEAR_DIGITS)


def is_year_figure(cell: Cell) -> bool:
    """Whether the cell holds a year ("Last Fiscal Year of Expiration | 2027"), not an amount."""
    return cell.value is not None and bool(_YEAR_TEXT.fullmatch(cell.text.strip()))


def figure_columns(table: Table) -> list[int]:
    """The columns with figures, in order; a column of years only (dates) is not one."""
    by_column: dict[int, list[Cell]] = {}
    for c in table.numeric_cells():
        by_column.setdefault(c.column_index, []).append(c)
    return [j for j in sorted(by_column) if not all(is_year_figure(c) for c in by_column[j])]
