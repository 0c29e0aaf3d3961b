"""The answers to questions naming a part of one filing's figure: parts compared or ranged
over (`part_compare.py`), each answered as a question naming it alone; a printed filing's
part read from the table rows that name it (`part_rows.py`); a part's share of the whole
(`part_share.py`). Each is cited as any answer from the filing's facts is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pipeline.rag.answers.answer_checks import withheld
from pipeline.rag.answers.filings.fact_answer import Asked, FactResult, answer_from_facts
from pipeline.rag.answers.filings.fact_citations import cited_answer
from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.measure_match import phrase_words
from pipeline.rag.answers.filings.parts.part_compare import compare_parts, pick_part, ranged_parts
from pipeline.rag.answers.filings.parts.part_rows import part_facts
from pipeline.rag.answers.filings.parts.part_share import as_lookup, share
from pipeline.rag.answers.filings.parts.qualifiers import SEGMENT_CUE, Parts
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.short_answer import ShortAnswer
from pipeline.rag.answers.vocabulary.line_items import LineItem
from retriever_trt.search.filters import company_key

# Words of row labels that name no part of a figure ("total", "net", "consolidated"): a
# "Worldwide" row is the whole of the rows above it, so "worldwide sales of DARZALEX" asks
# for the product, not a region of it.
GENERIC_ROW_WORDS = frozenset("""total net consolidated worldwide global other income expense
revenue sale cost operating operation gross amount balance cash share stock common per
shareholder stockholder shareowner owner""".split())
# Generic among a row's words, but asked before a measure ("other products revenue") it
# names the rest of a whole, which no total is.
_OTHER = "other"


def _agrees(result: FactResult, shown: Any) -> bool:
    """Whether the printed rows show one figure for each period the answer reads."""
    periods = {(f.start, f.end) for f in result.facts}
    return len({f.value for f in shown.facts if (f.start, f.end) in periods}) <= len(periods)


class PartAnswers:
    """The part answers of one store generation's filings: `chunks` cite their cells,
    `labels_of` gives a filing's labels and `shown_at` the row and column a fact's cell is
    printed under (the answerer's, which reads each once)."""

    def __init__(self, store: Any, chunks: dict[str, Any], labels_of: Callable[[Any], FactLabels],
                 shown_at: Callable[[Any, Any, dict[str, Any]], tuple[str, str] | None]) -> None:
        self.store = store
        self.chunks = chunks
        self.labels_of = labels_of
        self.shown_at = shown_at
        self._row_words: dict[str, set[str]] = {}  # doc_id -> its tables' row-label words

    def several(self, query: Query, info: Any, asked: Asked, parts: Parts,
                compared: list[frozenset[tuple[str, str]]], tagged: bool) -> ShortAnswer:
        """The parts the question compares (`part_compare`): those it names, else every one
        of the axis it asks "which" of."""
        def figure(option: frozenset[tuple[str, str]]) -> ShortAnswer:
            return self._figure(query, info, replace(asked, options=(option,)), tagged)

        if compared:
            return compare_parts(query, parts, compared, figure)
        labels = self.labels_of(info)
        return pick_part(query, ranged_parts(query.text, labels), labels, figure)

    def _figure(self, query: Query, info: Any, asked: Asked, tagged: bool) -> ShortAnswer:
        """One compared part's own figure, looked up as a question naming it alone."""
        alone = replace(query, question=replace(query.question, operation=Operation.LOOKUP),
                        decimals=None)
        result = answer_from_facts(alone, info, asked)
        if result is None or result.value is None:
            return ShortAnswer(missing=result.missing if result else "no measure named")
        return cited_answer(result, info, False, tagged, self.chunks)

    def words(self, query: Query, info: Any, result: FactResult) -> list[str]:
        """A printed filing has no dimensions: a line item asked with words that name
        another row of its tables ("iPhone" of Apple's net sales by product) asks for a part
        of the figure its statements give whole, so that figure is no answer. Those words."""
        if info.doc_id not in self._row_words:
            self._row_words[info.doc_id] = {
                w for c in self.store.document(info.doc_id) if c.table
                for row in c.table for w in tokens(row[0] if row else "")}
        cited = {w for f in result.facts for w in tokens(self._cited_row(info, f))}
        named = set(query.measure_words) - phrase_words(query.measure) - cited - \
            set(company_key(info.metadata.company).split()) - GENERIC_ROW_WORDS
        cues = {w for m in SEGMENT_CUE.finditer(query.text) for w in tokens(m.group(0))}
        # "other products revenue": the rest of a whole, which the cited row is not
        rest = {_OTHER} & set(query.measure_words) - phrase_words(query.measure) - cited
        return sorted((named - cues | rest) & self._row_words[info.doc_id])

    def _cited_row(self, info: Any, fact: Any) -> str:
        shown = self.shown_at(info, fact, {})
        return shown[0] if shown else ""

    def answer(self, query: Query, info: Any, part: list[str], computed: bool,
               ratio: bool) -> ShortAnswer | None:
        """The part's figure from the table rows that show it (`part_rows.py`), or None:
        also where two rows show different figures for a period the answer reads."""
        assert isinstance(query.measure, LineItem)
        shown = part_facts(info, self.store.document(info.doc_id), query.measure, set(part),
                           query.words)
        result = answer_from_facts(query, shown, Asked()) if shown.facts else None
        if result is None or result.value is None or \
                withheld(query.text, result.scale, result.facts, ratio):
            return None
        if not _agrees(result, shown):
            return None
        return cited_answer(result, shown, computed, False, self.chunks)

    def share(self, query: Query, info: Any, asked: Asked, tagged: bool) -> ShortAnswer | None:
        """A part's share of the whole (`part_share.py`): its member's fact, or the printed
        rows naming it, over the company's figure of the same period."""
        assert isinstance(query.measure, LineItem)
        lookup = as_lookup(query)
        whole = answer_from_facts(lookup, info, Asked())
        if whole is None or whole.value is None:
            return None
        if tagged:
            # a part of a part ("Biotechnology segment sales ... to Western Europe") is a share
            # of the outer part, not of the company: which one is the whole, the words alone
            # do not say, so no number (the company's whole had been divided)
            single = asked.options and all(len(option) == 1 for option in asked.options)
            got = share(query, answer_from_facts(lookup, info, Asked(asked.options)), whole) \
                if single else None
            return None if got is None else cited_answer(got, info, True, True, self.chunks)
        words = self.words(query, info, whole)
        if not words:
            return None
        shown = part_facts(info, self.store.document(info.doc_id), query.measure, set(words),
                           query.words)
        part = answer_from_facts(lookup, shown, Asked()) if shown.facts else None
        got = share(query, part, whole) if part is not None and _agrees(part, shown) else None
        if got is None:
            return None
        return cited_answer(got, replace(shown, fact_cells={**info.fact_cells, **shown.fact_cells}),
                            True, False, self.chunks)
