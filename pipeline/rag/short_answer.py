"""The short answer of a question over the tables of the retrieved passages.

Each table is tried in retrieval order; the best-matching answer wins (ties: the earlier
table). None means no operand was found: the caller says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.rag.question import operation
from pipeline.rag.table_answer import TableAnswer, answer_from_table
from retriever_trt.tables import Table


def answer_question(question: str, tables: Sequence[Table],
                    paragraphs: Sequence[str] = ()) -> TableAnswer | None:
    """The computed or looked-up answer, with the index of its table in `.table_index`."""
    q = operation(question)
    best: TableAnswer | None = None
    for k, table in enumerate(tables):
        got = answer_from_table(table, q)
        if got is not None and (best is None or got.score > best.score):
            got.table_index = k
            best = got
    return best
