"""How a table's cells and headers read: a dash is nil, a header's unit words name no column.

Shared by the table rules (table_answer.py) and the row aggregates (row_sums.py).
"""

from __future__ import annotations

from decimal import Decimal

from pipeline.rag.question import tokens
from retriever_trt.tables import Cell

# Words a header uses for its units ("2018 (In thousands, except percentages)", "2019 €m"):
# they say how figures are written, not which column a question names.
UNIT_WORDS = frozenset({"thousand", "million", "billion", "except", "percentage", "data",
                        "m", "bn", "k", "000"})
# How a report writes nil in a figure's place.
_NIL = frozenset({"-", "—", "–", "--", "nil"})


def header_words(header: str) -> set[str]:
    """A column header's words that can name it, its unit words left out."""
    return set(tokens(header)) - UNIT_WORDS


def is_nil(cell: Cell | None) -> bool:
    """A dash where a figure would be ("—", "$ —"): reports write nil so, not "0"."""
    return cell is not None and cell.value is None and cell.text.replace("$", "").strip() in _NIL


def figure(cell: Cell) -> Decimal:
    """The cell's number, nil (a dash) as zero."""
    return cell.value.number if cell.value is not None else Decimal(0)
