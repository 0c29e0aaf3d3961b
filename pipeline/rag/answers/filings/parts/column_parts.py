"""A part of the company read from a printed table whose columns are the parts and whose
row sections are the periods: Coca-Cola's operating segments note prints its segments
across ("Latin America", "North America", ..., "Consolidated") and a block of rows under
each "Year Ended December 31, 2024" heading. A column gives the part's figure of a line
item where every word of its header is one the question says and the part's words are
among them, on the row that is the item itself ("Total net operating revenues").
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.tables.column_periods import ColumnPeriod, header_rows, text_period
from pipeline.rag.answers.tables.row_items import match_row
from pipeline.rag.answers.vocabulary.line_items import LineItem
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.documents.tables import Table


def section_periods(table: Table, filing: DocumentMetadata) -> dict[int, ColumnPeriod]:
    """Each body row's period, from the heading row above it that names one and has no
    figures (a page of the note may hold one block only); {} when none does."""
    out: dict[int, ColumnPeriod] = {}
    current = None
    for i in range(header_rows(table), len(table.rows)):
        if not any(c.strip() for c in table.rows[i][1:]) and \
                (period := text_period(table.row_labels[i], filing)) is not None:
            current = period
        elif current is not None:
            out[i] = current
    return out


def column_part_cells(table: Table, item: LineItem, part: set[str],
                      said: frozenset[str]) -> Iterator[tuple[int, int]]:
    """The cells (row, column) showing `item` for the part named by the words `part`: the
    item's own rows, under a column whose header's words the question (`said`) all says."""
    first = header_rows(table)
    heads = {j: set(tokens(" ".join(table.rows[r][j] for r in range(first))))
             for j in range(1, len(table.column_headers))}
    for i in range(first, len(table.rows)):
        row = match_row(table.row_labels[i])
        if row is None or row.item is not item:
            continue
        for j, words in heads.items():
            if words and part <= words <= said:
                yield i, j
