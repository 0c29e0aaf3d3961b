"""Totals a table does not print: the cells a question's total is the sum of.

"The sum of all tax credit carryforwards" adds the rows of the section it names; "the
total deferred revenue at the end of the period", in a table with "Deferred revenue
(current)" and "Deferred revenue (non-current)" but no total row, adds the rows whose labels
each name the whole measure. Read by the table rules (table_answer.py), which compute the sum.
"""

from __future__ import annotations

import re

from pipeline.rag.answers.question import Question, tokens
from pipeline.rag.answers.tables.table_cells import header_words, is_year_figure
from pipeline.rag.answers.tables.table_rows import ROW_LIST_BASE, SECTION_BONUS, label_tokens, listed_rows
from retriever_trt.documents.tables import Cell, Table

# The measure a total names: from "total" to the phrase of its period, column or place.
_TOTAL_OF = re.compile(r"\btotal\s+(.+?)(?=\s+(?:as|at|in|for|on|during|of the|from|between|"
                       r"by|under|within)\b|[?,]|$)", re.I)


def section_parts(table: Table, q: Question) -> tuple[list[Cell], float] | None:
    """The component rows of the section the question names, in the one column where each
    of them has a figure, and the match (as a row list's)."""
    found = listed_rows(table, q)
    if found is None:
        return None
    rows, hit = found
    for j in range(1, len(table.column_headers)):
        cells = [table.cell(i, j) for i in rows]
        if all(c is not None and c.value and not is_year_figure(c) for c in cells):
            return cells, ROW_LIST_BASE + SECTION_BONUS * hit
    return None


def measure_parts(table: Table, q: Question, cols: list[int]) -> tuple[list[Cell], float] | None:
    """The cells, in the one column asked, of the rows whose labels each hold every word of
    the measure "total X" names (less the words that name the column: "total USD
    denominated monetary assets" under "USD denominated"). None when a row is X itself or
    its total (the table prints it), or fewer than two rows name X."""
    found = _TOTAL_OF.search(q.text)
    if found is None or len(cols) != 1:
        return None
    named = set(tokens(found.group(1))) - header_words(table.column_headers[cols[0]])
    if not named:
        return None
    cells, seen = [], set()
    for i in table.body():
        label, cell = label_tokens(table.row_labels[i]), table.cell(i, cols[0])
        if not named <= label or cell is None or cell.value is None:
            continue  # a section's own row ("Assets") has no figure
        if "total" in label or label == named:
            return None
        if table.row_labels[i] not in seen:
            seen.add(table.row_labels[i])
            cells.append(cell)
    return (cells, ROW_LIST_BASE + SECTION_BONUS * len(named)) if len(cells) >= 2 else None
