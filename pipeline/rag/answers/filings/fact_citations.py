"""The citations of an answer read from a filing's facts: each fact with its tag (for a
tagged filing), and the table cell, row, column and page that show it."""

from __future__ import annotations

from typing import Any

from pipeline.rag.answers.filings.fact_answer import FactResult
from pipeline.rag.answers.short_answer import ShortAnswer
from retriever_trt.documents.tables import parse_table


def cited_answer(result: FactResult, info: Any, computed: bool, tagged: bool,
                 chunks: dict[str, Any]) -> ShortAnswer:
    """The short answer of a figure read from facts, each fact cited with the table cell
    (and page) that shows it; `computed`: a derivation, not a span."""
    citations, cited = [], None
    for fact in result.facts:
        period = f"{fact.start.isoformat()} to " if fact.start else "at "
        cite = {"doc_id": info.doc_id, "value": fact.shown, "row": fact.concept,
                "column": period + fact.end.isoformat()}
        if tagged:  # a fact read from a printed table has no tag to cite
            cite["fact"] = {"id": fact.fact_id, "concept": fact.concept,
                            "value": f"{fact.value:f}", "unit": fact.unit,
                            "start": fact.start.isoformat() if fact.start else None,
                            "end": fact.end.isoformat()}
        where = info.fact_cells.get(fact.fact_id)
        chunk = chunks.get(where[0]) if where else None
        if chunk is not None and chunk.table:
            cell = parse_table(chunk.table).cell(where[1], where[2])
            cite.update(source_id=chunk.chunk_id, row_index=where[1], column_index=where[2],
                        row=cell.row if cell else chunk.table[where[1]][0],
                        column=cell.column if cell else "")
            if "page" in chunk.sources:
                cite["page"] = int(chunk.sources["page"])
            cited = cited or chunk
        citations.append(cite)
    value = f"{result.value:f}"
    derivation = result.derivation if computed else None
    return ShortAnswer(value, result.scale, "arithmetic" if computed else "span", derivation,
                       citations, cited, cited.table if cited else None, 0.0, 1.0, computed)
