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

from pipeline.rag.answers.answer_checks import asks_count, asks_date, asks_name, withheld
from pipeline.rag.answers.company_names import (
    as_named,
    find_companies,
    owned_names,
    shelf_aliases,
    written_name,
    written_short_names,
)
from pipeline.rag.answers.filings.asked import no_narrower, what_is_asked
from pipeline.rag.answers.filings.companies import (
    CompanyFigure,
    chooses,
    combine,
    per_company,
    stated,
)
from pipeline.rag.answers.filings.cover.cover_answer import answer_from_cover
from pipeline.rag.answers.filings.fact_answer import FactResult, answer_from_facts
from pipeline.rag.answers.filings.fact_citations import cited_answer
from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.finer_figure import as_stated_finer, prose_sentences
from pipeline.rag.answers.filings.grouping_members import without_groupings
from pipeline.rag.answers.filings.measure_match import (
    phrase_words,
)
from pipeline.rag.answers.filings.parts.asked_countries import country_name_words
from pipeline.rag.answers.filings.parts.business_names import businesses, company_of_business
from pipeline.rag.answers.filings.parts.part_answer import PartAnswers
from pipeline.rag.answers.filings.parts.part_compare import asks_which_part, compared_parts
from pipeline.rag.answers.filings.parts.part_share import asks_share_of_part
from pipeline.rag.answers.filings.parts.unknown_names import compared_name, unknown_names
from pipeline.rag.answers.filings.printed.table_facts import facts_from_tables
from pipeline.rag.answers.filings.scope import choose_filings
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import Query, parse_query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.short_answer import ShortAnswer
from pipeline.rag.answers.vocabulary.definitions import stated_definitions, stated_formula
from pipeline.rag.answers.vocabulary.line_items import LineItem
from pipeline.rag.answers.vocabulary.metrics import Metric, Scale
from retriever_trt.documents.pdf.pdf_statements import StatementKind, statement_kind
from retriever_trt.documents.tables import parse_table
from retriever_trt.search.filters import MetadataFilter, company_key

# The statements whose rows are a filing's canonical figures (not its equity statement's).
PRIMARY_STATEMENTS = frozenset({StatementKind.BALANCE, StatementKind.INCOME,
                                StatementKind.CASH_FLOWS})
# "Which year had higher net sales, fiscal 2023 or 2024?": a choice of what the question names
# (companies and parts are compared apart), never one figure of it.
_CHOOSES = "the question asks which of what it names is the higher or lower, not one figure"
# The filings of the company in scope tried, best first, for a measure the first lacks.
FILINGS_TRIED = 3


def _undefined(query: Query, info: Any) -> ShortAnswer:
    """No number: no measure the vocabulary or the filing's labels know; where the question
    defines its figure, why (a term of its formula the filing has no figure for)."""
    formula = stated_formula(stated_definitions(query.text)) if query.measure is None else None
    return ShortAnswer(missing=formula and (
        f"the question defines its figure as \u201c{formula}\u201d, and not every term "
        f"of that could be read as one of {info.title}'s figures"))


def _no_fact(result: FactResult, info: Any, tagged: bool, computed: bool) -> ShortAnswer:
    """No number: the measure is known but the filing has no figure for an operand (and
    which of its tables could not be read, if any)."""
    where = "tagged figure" if tagged else "figure in its statement tables"
    unread = "".join(f"; its {name} could not be read ({why})"
                     for name, why in getattr(info, "unread", {}).items())
    return ShortAnswer(wanted_arithmetic=computed, missing=result.missing and
                       f"{info.title} has no {where} for {result.missing}{unread}")


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
        # the names each filing writes its company by ("Disney"), read once a document
        known = getattr(self, "_written", {})
        self._written = {d: known[d] if d in known else written_short_names(
                             company_key(i.metadata.company),
                             (c.text for c in self.store.document(d)))
                         for d, i in self.info.items()} if hasattr(self.store, "document") else {}
        self.aliases = self._aliases(self.info)
        # doc_id -> its facts read from its tables; a changed store may have replaced them
        self._read: dict[str, Any] = {}
        self._sentences: dict[str, list[str]] = {}
        self._labels: dict[str, FactLabels] = {}
        self._parts = PartAnswers(self.store, self._chunks, self.labels_of, self._shown_at)
        self._businesses: dict[str, frozenset[frozenset[str]]] = {}  # doc_id -> its segments
        # company key -> the businesses of every document, once a question needs them
        self._known: dict[str, frozenset[frozenset[str]]] | None = None

    def facts_of(self, doc_id: str) -> Any:
        """The document's info with its tagged facts, each dimension that only groups its
        part left out (`grouping_members.py`), else with the facts its tables show (read
        once, on the first question about it)."""
        info = self.info[doc_id]
        if not info.facts and not hasattr(self.store, "document"):
            return info
        if doc_id not in self._read:
            self._read[doc_id] = replace(info, facts=without_groupings(info.facts)) \
                if info.facts else facts_from_tables(info, self.store.document(doc_id))
        return self._read[doc_id]

    def labels_of(self, info: Any) -> FactLabels:
        """The filing's concept and member labels (read once, on the first question)."""
        if info.doc_id not in self._labels:
            tables: dict[str, Any] = {}
            self._labels[info.doc_id] = FactLabels.of(
                info.facts, lambda f: self._shown_at(info, f, tables),
                lambda f: self._stated(info, f))
        return self._labels[info.doc_id]

    def _stated(self, info: Any, fact: Any) -> bool:
        """Whether a primary statement's table prints the fact (by its caption)."""
        chunk, _ = self._cell_of(info, fact)
        return chunk is not None and \
            statement_kind(chunk.sources.get("caption", "")) in PRIMARY_STATEMENTS

    def _cell_of(self, info: Any, fact: Any) -> tuple[Any, tuple[str, int, int] | None]:
        """The chunk a fact's cell is printed in, and the cell (chunk id, row, column)."""
        where = info.fact_cells.get(fact.fact_id)
        return (self._chunks.get(where[0]) if where else None), where

    def _shown_at(self, info: Any, fact: Any, tables: dict[str, Any]) -> tuple[str, str] | None:
        """The row label and column header a fact's cell is printed under."""
        chunk, where = self._cell_of(info, fact)
        if chunk is None or where is None or not chunk.table:
            return None
        if chunk.chunk_id not in tables:
            tables[chunk.chunk_id] = parse_table(chunk.table)
        cell = tables[chunk.chunk_id].cell(where[1], where[2])
        return (cell.row, cell.column) if cell is not None else None

    def _aliases(self, info: dict[str, Any]) -> dict[str, str]:
        """alias -> company key of the documents in `info`: their registrants' names (and
        former and co-registrants') and the names their own text writes them by."""
        out = shelf_aliases(i.metadata for i in info.values())
        for d, i in info.items():
            for name in self._written.get(d, ()):
                out.setdefault(name, company_key(i.metadata.company))
        return out

    def tagged(self, doc_ids: Sequence[str]) -> bool:
        """Whether the first filing in scope has tagged facts (inline XBRL)."""
        return bool(doc_ids) and doc_ids[0] in self.info and bool(self.info[doc_ids[0]].facts)

    def parse(self, question: str, caller: MetadataFilter | None = None) -> Query:
        """The question's company, measure and periods; only the companies of documents
        `caller` may see are known, so what another tenant indexed changes no answer. A
        question naming no company may name one by its business ("Optum")."""
        self._refresh()
        allowed = {d: i for d, i in self.info.items() if caller is None or caller.matches(d, i)}
        aliases = self.aliases if caller is None else self._aliases(allowed)
        query = parse_query(question, aliases)
        if query.company is not None:
            return query
        if caller is not None:
            known = self._businesses_of(allowed)
        else:  # every document's: read once a store generation, not once a question
            if self._known is None:
                self._known = self._businesses_of(allowed)
            known = self._known
        company = company_of_business(question, known)
        return query if company is None else replace(query, company=company,
                                                      companies=(company,))

    def _businesses_of(self, documents: dict[str, Any]) -> dict[str, frozenset[frozenset[str]]]:
        """company key -> the businesses its `documents` are tagged with (each document's
        read once)."""
        known: dict[str, frozenset[frozenset[str]]] = {}
        for doc_id, info in documents.items():
            if doc_id not in self._businesses:
                self._businesses[doc_id] = businesses(info.facts)
            if self._businesses[doc_id]:
                key = company_key(info.metadata.company)
                known[key] = known.get(key, frozenset()) | self._businesses[doc_id]
        return known

    def names_a_filing(self, query: Query) -> bool:
        """Whether the question is about the indexed filings: it names one of their
        companies, or a statement measure for a period."""
        return query.company is not None or (query.measure is not None and bool(query.periods))

    def scope(self, query: Query, caller: MetadataFilter | None) -> Scope:
        """The caller's filter narrowed to the question's filing(s) where it names them;
        never wider than what the caller allowed."""
        allowed = {d: i for d, i in self.info.items() if caller is None or caller.matches(d, i)}
        chosen = [d for c in query.companies or (query.company,)
                  for d in choose_filings(per_company(query, c) if c else query, allowed)]
        if chosen:
            return Scope((caller or MetadataFilter()).narrowed(tuple(chosen)), chosen)
        if query.company is not None:
            # The company is indexed, but none of its filings is the caller's to read (its
            # filter, or another tenant's collection): another company's filing is no
            # answer, so retrieval looks at that company's documents only, and finds none.
            return Scope(replace(caller or MetadataFilter(), company=(query.company,)))
        return Scope(caller)

    def answer(self, query: Query, scope: Scope) -> ShortAnswer:
        """The computed answer from the filings' facts; empty when the question names no
        measure or no filing, with `missing` set when an operand has no fact; several
        companies, each its own. A question choosing between what it names gets a name,
        never one figure of them."""
        if len(query.companies) > 1:
            return self._several(query, scope)
        got = self._of_one_company(query, scope)
        if chooses(query.text) and got.answer_type == "span" and got.is_number():
            return ShortAnswer(missing=_CHOOSES, citations=got.citations)
        return got

    def _of_one_company(self, query: Query, scope: Scope) -> ShortAnswer:
        """The first filing in scope answers, else the next that knows the measure (a
        cover's public float is in the 10-K, not the latest 10-Q)."""
        first = ShortAnswer()
        for doc_id in scope.doc_ids[:FILINGS_TRIED]:
            got = self._answer_in(query, doc_id)
            if got.short_answer is not None:
                return got
            if first.missing is None and not first.wanted_arithmetic:
                first = got
        return first

    def _several(self, query: Query, scope: Scope) -> ShortAnswer:
        figures = []
        aliases = find_companies(query.text, self.aliases)
        for company in query.companies:
            docs = [d for d in scope.doc_ids
                    if company_key(self.info[d].metadata.company) == company]
            got = self._of_one_company(per_company(query, company), Scope(scope.filter, docs))
            # the name the question gives it, in full: "IBM" asked is answered "IBM", "Thermo
            # Fisher" not "Thermo"
            name = next((written_name(query.text, n) for n in query.names if n.key == company),
                        None) or \
                next((n for a in aliases.get(company, ()) if (n := as_named(query.text, a))),
                     self.info[docs[0]].metadata.company if docs else company)
            figures.append(CompanyFigure(name, got))
        return combine(query, figures, stated)

    def _answer_in(self, query: Query, doc_id: str) -> ShortAnswer:
        """The answer from one filing's facts (or its cover)."""
        if query.measure is None:  # maybe a field of the cover: the symbol, the incorporation
            cover = answer_from_cover(query, self.info[doc_id], self.store.document(doc_id))
            if cover is not None:
                return cover
        if asks_date(query.text) or asks_name(query.text):
            # a date or a name is the prose's (or the cover's, read above)
            return ShortAnswer()
        tagged = bool(self.info[doc_id].facts)
        info = self.facts_of(doc_id)
        if not info.facts:
            return ShortAnswer()
        query, asked, parts = what_is_asked(query, info, self.labels_of(info))
        counted = asks_count(query.text)
        compared = compared_parts(query, parts)
        if asks_which_part(query.text) and not compared:
            return self._parts.several(query, info, asked, parts, compared, tagged)
        # "how many segments" names no part: a count. A printed filing's parts are its
        # tables' rows, read below (`PartAnswers.words`).
        if parts.unknown and not counted and tagged:
            return ShortAnswer(missing=self._no_part(info))
        if asked.unmatched and tagged:
            return ShortAnswer(missing=self._unknown_name(query, info) or
                               no_narrower(query, info, asked.unmatched))
        if compared:
            return self._parts.several(query, info, asked, parts, compared, tagged)
        result = answer_from_facts(query, info, asked)
        if result is None:  # no measure the vocabulary or the filing's labels know
            return _undefined(query, info)
        computed = isinstance(query.measure, Metric) or query.operation in (
            Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE, Operation.SUM)
        # an average of one period is of something else than periods ("average revenue
        # from its top twenty customers"), which the prose may state
        in_prose = counted or query.operation is Operation.PROPORTION or \
            query.operation is Operation.AVERAGE and len(query.periods) <= 1
        if result.value is None:  # a count or a share no fact gives may be stated in the prose
            return ShortAnswer() if in_prose else _no_fact(result, info, tagged, computed)
        ratio = query.operation is Operation.PERCENT_CHANGE or (
            isinstance(query.measure, Metric) and query.measure.scale is not Scale.AMOUNT)
        if asks_share_of_part(query, parts.naming_words(every=True),
                              self.labels_of(info).measure_vocabulary()):
            got = self._parts.share(query, info, asked, tagged)
            if got is not None:
                return got
        why = withheld(query.text, result.scale, result.facts, ratio)
        part = [] if why is not None or tagged or not isinstance(query.measure, LineItem) \
            else self._parts.words(query, info, result)
        if parts.unknown and not counted and not tagged and not part:
            return ShortAnswer(missing=self._no_part(info))
        if part:
            read = self._parts.answer(query, info, part, computed, ratio)
            if read is not None:
                return read
            why = (f"the question names {', '.join(part)}, a part of the figure that "
                   f"{info.title}'s statements give only whole")
        why = why or self._unknown_name(query, info) or \
            (no_narrower(query, info, asked.unmatched) if asked.unmatched else None)
        if why is not None:  # a count or a share no fact gives may be stated in the prose
            return ShortAnswer() if in_prose else ShortAnswer(wanted_arithmetic=computed,
                                                               missing=why)
        return as_stated_finer(cited_answer(result, info, computed, tagged, self._chunks),
                               result, query, lambda: self._sentences_of(info.doc_id))

    def _sentences_of(self, doc_id: str) -> list[str]:
        """The sentences of a document's prose (split once, on the first question needing
        them)."""
        if doc_id not in self._sentences:
            self._sentences[doc_id] = prose_sentences(self.store.document(doc_id))
        return self._sentences[doc_id]

    def _unknown_name(self, query: Query, info: Any) -> str | None:
        """Why no number: the question names something ("WhatsApp") that no label of the
        filing's figures holds, so its figure would be the company's whole."""
        labels = self.labels_of(info)
        known = labels.all_words() | phrase_words(query.measure) | \
            set(tokens(info.metadata.company)) | country_name_words(labels) | \
            owned_names(query.text)  # "Corp" of "Widget Corp's", "Google" of "Google parent"
        rival = compared_name(query.text)
        if rival is not None and not set(tokens(rival)) & known and \
                not find_companies(rival, self.aliases):
            # "than PG&E": a company not in scope, or no figure of this filing; this
            # company's own figure, or its change over a year, is no answer.
            return (f"the question compares with {rival}, which is neither a company in scope "
                    f"nor a figure {info.title} reports")
        names = unknown_names(query.text, query.measure_words, known)
        if not names:
            return None
        return f"the question names {', '.join(names)}: " + self._no_part(info)

    def _no_part(self, info: Any) -> str:
        """Why no number: the part asked is not one the filing reports."""
        reported = self.labels_of(info).segments_of()
        listed = f"; the parts it reports are {', '.join(reported)}" if reported else \
            "; it reports no segments, regions or product lines" if self.tagged([info.doc_id]) \
            else "; no row of its printed tables names it"
        return f"{info.title} reports no segment or region by the name asked{listed}"

    def filing_of(self, short: ShortAnswer, passages: Sequence[Any], scope: Scope) -> dict | None:
        """The filing the answer used: the cited one, else the question's, else the top
        passage's; None for documents without metadata."""
        cited = short.cited.doc_id if short.cited is not None else None
        for doc_id in (cited, *scope.doc_ids[:1], *(p.doc_id for p in passages[:1])):
            if doc_id in self.info:
                return self.info[doc_id].header()
        return None
