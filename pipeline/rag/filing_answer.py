"""The filing side of /ask: parse the question once, scope it to its company's filing for
its period (within what the caller's filter allows), and answer from that filing's tagged
facts, each cited with the table cell (and page) that shows it. A filing without tagged
facts (a PDF) is answered from the facts its statement tables show (`table_facts.py`); a
question about the filing itself (its trading symbol, its period's end, its cover's state
of incorporation, address, exchange, ...) from its metadata (`cover_answer.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from pipeline.rag.cover_answer import answer_from_cover
from pipeline.rag.fact_answer import FactResult, answer_from_facts
from pipeline.rag.metrics import Metric
from pipeline.rag.operation import Operation
from pipeline.rag.query import Query, company_aliases, parse_query
from pipeline.rag.scope import choose_filings
from pipeline.rag.short_answer import ShortAnswer
from pipeline.rag.table_facts import facts_from_tables
from retriever_trt.filters import MetadataFilter
from retriever_trt.tables import parse_table


@dataclass
class Scope:
    """What retrieval searches (`filter`) and the filings that fit the question, best first."""

    filter: MetadataFilter | None = None
    doc_ids: list[str] = field(default_factory=list)


class FilingAnswerer:
    def __init__(self, store: Any) -> None:
        self.store = store
        self._generation: int | None = None
        self._refresh()

    def _refresh(self) -> None:
        """Read the store's documents again when it changed (an upload or a delete)."""
        generation = getattr(self.store, "generation", 0)
        if generation == self._generation:
            return
        with getattr(self.store, "lock", nullcontext()):
            self.info = dict(getattr(self.store, "info", {}) or {})
            self._chunks = {c.chunk_id: c for d in self.info for c in self.store.document(d)}
            self._generation = getattr(self.store, "generation", 0)
        self.aliases = company_aliases((d.metadata.company, d.metadata.ticker)
                                       for d in self.info.values())
        # doc_id -> its facts read from its tables; a changed store may have replaced them
        self._read: dict[str, Any] = {}

    def facts_of(self, doc_id: str) -> Any:
        """The document's info with its tagged facts, else with those its tables show
        (read once, on the first question about it)."""
        info = self.info[doc_id]
        if info.facts or not hasattr(self.store, "document"):
            return info
        if doc_id not in self._read:
            self._read[doc_id] = facts_from_tables(info, self.store.document(doc_id))
        return self._read[doc_id]

    def parse(self, question: str, caller: MetadataFilter | None = None) -> Query:
        """The question's company, measure and periods; only the companies of documents
        `caller` may see are known, so what another tenant indexed changes no answer."""
        self._refresh()
        if caller is None:
            return parse_query(question, self.aliases)
        return parse_query(question, company_aliases(
            (i.metadata.company, i.metadata.ticker) for d, i in self.info.items()
            if caller.matches(d, i)))

    def names_a_filing(self, query: Query) -> bool:
        """Whether the question is about the indexed filings: it names one of their
        companies, or a statement measure for a period."""
        return query.company is not None or (query.measure is not None and bool(query.periods))

    def scope(self, query: Query, caller: MetadataFilter | None) -> Scope:
        """The caller's filter narrowed to the question's filing(s) where it names them;
        never wider than what the caller allowed."""
        allowed = {d: i for d, i in self.info.items() if caller is None or caller.matches(d, i)}
        chosen = choose_filings(query, allowed)
        if chosen:
            return Scope((caller or MetadataFilter()).narrowed(tuple(chosen)), chosen)
        if query.company is not None:
            # The company is indexed, but none of its filings is the caller's to read (its
            # filter, or another tenant's collection): another company's filing is no
            # answer, so retrieval looks at that company's documents only, and finds none.
            return Scope(replace(caller or MetadataFilter(), company=(query.company,)))
        return Scope(caller)

    def answer(self, query: Query, scope: Scope) -> ShortAnswer:
        """The computed answer from the best filing's facts; empty when the question names
        no measure or no filing, with `missing` set when an operand has no fact."""
        if not scope.doc_ids:
            return ShortAnswer()
        if query.measure is None:  # maybe a field of the cover: the symbol, the incorporation
            doc_id = scope.doc_ids[0]
            return answer_from_cover(query, self.info[doc_id], self.store.document(doc_id)) \
                or ShortAnswer()
        tagged = bool(self.info[scope.doc_ids[0]].facts)
        info = self.facts_of(scope.doc_ids[0])
        if not info.facts:
            return ShortAnswer()
        result = answer_from_facts(query, info)
        computed = isinstance(query.measure, Metric) or query.operation in (
            Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE, Operation.SUM)
        if result is None or result.value is None:
            what = result.missing if result else None
            where = "tagged figure" if tagged else "figure in its statement tables"
            return ShortAnswer(wanted_arithmetic=computed, missing=what and
                               f"{info.title} has no {where} for {what}, so nothing was "
                               "computed")
        return self._short(result, info, computed, tagged)

    def _short(self, result: FactResult, info: Any, computed: bool, tagged: bool) -> ShortAnswer:
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
            chunk = self._chunks.get(where[0]) if where else None
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

    def filing_of(self, short: ShortAnswer, passages: Sequence[Any], scope: Scope) -> dict | None:
        """The filing the answer used: the cited one, else the question's, else the top
        passage's; None for documents without metadata."""
        cited = short.cited.doc_id if short.cited is not None else None
        for doc_id in (cited, *scope.doc_ids[:1], *(p.doc_id for p in passages[:1])):
            if doc_id in self.info:
                return self.info[doc_id].header()
        return None
