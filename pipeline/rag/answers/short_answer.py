"""The short answer of a question: computed or looked up in the retrieved tables, or cut
from the retrieved text, whichever the evidence says holds it.

Each retrieved passage's document may hold a table (the store keeps it on its table chunks;
its paragraphs give the scale when the header does not). Every such table is tried; the best
row match wins, earlier-retrieved documents first on ties. The answer cites its operand cells
by (source id, row, column) of a source that carries the table. None means no operand was
found: the caller says so instead of guessing.

A table lookup is not always the answer: "What was the amount of unrecognized compensation
expense related to RSUs as of December 31, 2019?" matches a table row (RSUs) weakly and a
sentence of the text nearly word for word. `choose` keeps the table's answer when the table
computed it or names the question's row well, and takes the text's extract (text_answer.py)
when a sentence has nearly all of the question's words and no row matched as well.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from pipeline.rag.answers.arithmetic import NoAnswer, compute, plain
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question import Question, operation
from pipeline.rag.answers.tables.table_answer import TableAnswer, answer_from_table
from pipeline.rag.answers.tables.table_cells import measure_words
from pipeline.rag.answers.tables.table_rows import SECTION_BONUS, label_tokens
from pipeline.rag.answers.text.text_answer import TextAnswer, answer_from_text, document_paragraphs
from pipeline.rag.answers.text.text_kind import TextKind
from retriever_trt.documents.tables import Cell, Table, parse_table, period_blocks, transpose

ARITHMETIC_OPERATIONS = (*(o for o in Operation if o.computed), Operation.COUNT)
# An answer from a later-retrieved table must match this much better to win.
RANK_PENALTY = 0.02
# Two tables fit a question equally when their row matches differ by less than this (the
# match's own resolution is WORD_TIE_BREAK, 0.01): only the retrieval order tells them apart.
TIE = 1e-6
# A table whose operand row's label the question quotes verbatim gains this much: users
# copy a label as the report prints it. Chosen on half a of TAT-QA dev (unscoped rules,
# against none: 0.03 and 0.05 +0, 0.1 +2, 0.2 +3, 0.3 +1, 0.5 +0; beyond 0.2 it overrides
# better row matches).
VERBATIM_BONUS = 0.2
MIN_QUOTED_LABEL = 4  # characters: a label like "Net" or "Tax" is in many questions by chance
# The other reports the prose names besides the one answering: "name both".
NAMED_TIES = 1
# Operations whose answer names no row, so every table fits them alike: no tie is said.
UNMATCHED = (Operation.YEARS_LIST, Operation.ROW_LIST, Operation.ROW_COUNT)
# The text's extract replaces a table lookup when its sentence has this share of the
# question's words (rarity-weighted; 0..1.1 with the years bonus) and the table's row match
# (TableAnswer.score) is below TABLE_SURE. Chosen on half a of TAT-QA dev, reported on half b
# (benchmarks/text_answer_eval.py --grid).
TEXT_MIN = 0.8
TABLE_SURE = 1.0
# Without a table answer, an extract needs this share: below it no sentence is about the
# question, and the model's prose (which may say so) answers instead.
TEXT_FLOOR = 0.3
# Extracts that are about the question whatever their sentence's share: a table's
# introduction, and a count or a place (cut only where the sentence names what was asked).
_SPANNED = (TextKind.COUNT, TextKind.PLACE, TextKind.NAME)
_ABOUT_IT = (TextKind.TABLE, *_SPANNED)
# Operations only a table answers (periods, row lists, computations): never replaced.
TABLE_ONLY = (Operation.YEARS_LIST, Operation.ROW_LIST, Operation.ROW_COUNT, Operation.WHICH_YEAR,
              *ARITHMETIC_OPERATIONS)
# The documents of the top passages whose paragraphs are searched for the extract: with the
# extracts' bounds cut past the question's words, 3 beat 2 on half a of TAT-QA dev (52.3
# against 51.6 EM, rules alone) and on held-out half b (42.9 against 42.5).
TEXT_DOCUMENTS = 3
# Computed from the amounts one sentence states for the periods asked ("$60.3 million and
# $80.5 million ... at September 30, 2019 and 2018, respectively"): order-free operations.
TEXT_OPERATIONS = (Operation.SUM, Operation.AVERAGE)
# The direction of a change a question asks for ("the decrease in X", "how much did X
# decrease by"): a sentence saying X changed that way states the change itself.
_CHANGE_WORD = re.compile(r"\b(increas|decreas|declin|grow|growth|reduc|ris|fell|fall)\w*", re.I)


def _states_change(question: str, text: TextAnswer) -> bool:
    """The extract is an amount from a sentence that changed the way the question asks
    ("Interest expense increased $621 million compared to 2018" for "the increase")."""
    asked = _CHANGE_WORD.search(question)
    return text.kind is TextKind.AMOUNT and asked is not None and \
        re.search(rf"\b{asked.group(1)}", text.sentence, re.I) is not None


def _transposed_answer(table: Table, q: Question,
                       refusals: list[str] | None = None) -> TableAnswer | None:
    """The answer from the table read with its periods as columns, cited by the original
    table's (row, column)."""
    flipped = transpose(table)
    got = answer_from_table(flipped, q, refusals) if flipped is not None else None
    if got is None:
        return None
    body = list(table.body())
    got.cells = [Cell(body[c.column_index - 1], c.row_index, c.column, "", c.row, c.text,
                      c.value) for c in got.cells]
    return got


def _blocks_answer(table: Table, q: Question,
                   refusals: list[str] | None = None) -> TableAnswer | None:
    """The answer from the table read with its period sections as columns, cited by the
    original table's (row, column)."""
    pivoted = period_blocks(table)
    got = answer_from_table(pivoted[0], q, refusals) if pivoted is not None else None
    if got is None:
        return None
    origin = pivoted[1]
    got.cells = [table.cell(*origin[(c.row_index, c.column_index)]) or c for c in got.cells]
    return got


def _quotes_label(question: str, got: TableAnswer) -> bool:
    """Whether the question quotes an operand row's label as the table writes it, capitals
    and all ("the Total other (expense) income, net"): among reports whose rows fit it
    alike, the one whose label it copies."""
    labels = {c.row.strip(" :") for c in got.cells}
    return any(len(label) >= MIN_QUOTED_LABEL and
               re.search(rf"(?<!\w){re.escape(label)}(?!\w)", question) for label in labels)


def _column_fit(q: Question, got: TableAnswer) -> float:
    """SECTION_BONUS times the largest share of an answering column's measure words that
    the question names and its rows do not: a header names the measure as a section does
    ("the total Allowance for Losses in 2018": the "Total" row of an "Allowance for Losses"
    column fits as well as a "Total allowance for credit losses" row elsewhere)."""
    words = set(q.words)
    rows = {w for c in got.cells for w in label_tokens(c.row)}
    shares = [len(named & words) / len(named)
              for named in (measure_words(c.column) - rows for c in got.cells) if named]
    return SECTION_BONUS * max(shares, default=0.0)


def fit(q: Question, got: TableAnswer) -> float:
    """How well a table's answer fits the question, its retrieval rank aside: the row
    match, plus the bonuses for a label quoted as printed and a column naming the measure."""
    return got.score + VERBATIM_BONUS * _quotes_label(q.text, got) + _column_fit(q, got)


def answer_question(question: str | Question, tables: Sequence[Table],
                    refusals: list[str] | None = None) -> TableAnswer | None:
    """The computed or looked-up answer; `.table_index` says which of `tables` it is from.
    Computations refused for mixing kinds of figures add their reasons to `refusals`."""
    q = operation(question) if isinstance(question, str) else question
    best: TableAnswer | None = None
    best_score = 0.0
    found: list[TableAnswer] = []
    for k, table in enumerate(tables):
        got = answer_from_table(table, q, refusals) or _transposed_answer(table, q, refusals) \
            or _blocks_answer(table, q, refusals)
        if got is None:
            continue
        got.table_index = k
        found.append(got)
        ranked = fit(q, got) - RANK_PENALTY * k
        if best is None or ranked > best_score:
            best, best_score = got, ranked
    if best is not None and q.operation not in UNMATCHED:
        best.tied = [g for g in found if g is not best and
                     abs(g.score - best.score) < TIE and g.short_answer != best.short_answer]
    return best


# One plain number, signed, maybe with thousands separators and decimals.
_PLAIN_NUMBER = re.compile(r"-?[\d,]*\.?\d+")

@dataclass
class ShortAnswer:
    """The fields of the /ask contract that come from the tables."""

    short_answer: str | list[str] | None = None
    scale: str = ""
    answer_type: str | None = None
    derivation: str | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    cited: Any = None          # the table chunk the citations point into
    cited_rows: list[list[str]] | None = None
    cited_score: float = 0.0   # its document's best retrieval score
    match: float = 0.0         # how well the question named the operand row(s), 0..~1.2
    wanted_arithmetic: bool = False
    quote: str | None = None   # the sentence an answer from the text is cut from
    missing: str | None = None  # why no number can be given (an operand no table has)
    cited_from: str = "the table"  # what the citations' rows and columns are of
    # (document title, answer) of other reports that fit the question as well as this one
    also: list[tuple[str, str]] = field(default_factory=list)

    def is_number(self) -> bool:
        """Whether the short answer is one plain number ("-3259", "57.6", "1,234")."""
        return isinstance(self.short_answer, str) and \
            _PLAIN_NUMBER.fullmatch(self.short_answer) is not None

    def prose(self) -> str:
        """A sentence stating the answer and how it was computed, or that nothing was found;
        and the other reports that fit the question as well, when there are."""
        stated = self._stated()
        if not stated or not self.also:
            return stated
        others = "; ".join(f"{title}: {value}" for title, value in self.also)
        return (f"{stated} Another report fits the question as well, so name the report "
                f"you mean: {others}.")

    def _stated(self) -> str:
        if self.short_answer is None:
            if self.missing is not None:
                return f"I cannot give a number: {self.missing}."
            if self.wanted_arithmetic:
                return ("I could not find the figures needed to compute this in the retrieved "
                        "tables, so I cannot give a number.")
            return ""
        value = self.short_answer
        text = with_unit(value, self.scale)
        if self.quote is not None:
            # A span of words is read in its sentence, not said twice; a value is stated.
            said = f"The report says: \u201c{self.quote.rstrip('.')}.\u201d"
            if self.derivation:
                return f"{text}, computed from the amounts the report states: {self.derivation}. {said}"
            return said if isinstance(value, str) and len(value.split()) >= 4 else f"{text}. {said}"
        if self.answer_type == "arithmetic" and self.derivation:
            return f"{text}, computed from the cited table cells: {self.derivation}."
        if self.answer_type == "count" and self.derivation:
            return f"{text} ({self.derivation.removeprefix('count of ')})."
        if self.citations:
            cells = "; ".join(f"{c['row']} ({c['column']}): {c['value']}" for c in self.citations)
            return f"{text}. From {self.cited_from}: {cells}."
        return f"{text}."


def with_unit(value: str | list[str], scale: str) -> str:
    """'1.2 million', '41.2%', '7, 8%': a short answer as the prose states it."""
    unit = {"percent": "%", "": ""}.get(scale, f" {scale}")
    if isinstance(value, list):
        return ", ".join(value) + (unit if unit == "%" else "")
    return f"{value}{unit}"


class TableSource:
    """Tables of retrieved passages, each parsed once.

    A table chunk is read as its own table (a filing has hundreds); a paragraph brings its
    document's table only where the document has one table (a TAT-QA report)."""

    def __init__(self, store: Any, cache_size: int = 256) -> None:
        self.store, self.cache_size = store, cache_size
        self._parsed: dict[tuple[str, str], tuple[Any, Table]] = {}

    def is_table_chunk(self, doc_id: str, chunk_id: str) -> bool:
        return any(c.chunk_id == chunk_id and c.table for c in self.store.document(doc_id))

    def table_of(self, doc_id: str, chunk_id: str | None = None) -> tuple[Any, Table] | None:
        """(the first chunk of the table, its parsed table), or None without one."""
        chunks = self.store.document(doc_id)
        hit = next((c for c in chunks if c.chunk_id == chunk_id and c.table), None)
        if hit is None:
            tables = {c.sources.get("table", "") for c in chunks if c.table}
            if len(tables) != 1:
                return None
            hit = next(c for c in chunks if c.table)
        key = (doc_id, hit.sources.get("table", ""))
        if key not in self._parsed:
            first = next(c for c in chunks if c.table and c.sources.get("table", "") == key[1])
            if len(self._parsed) >= self.cache_size:
                self._parsed.pop(next(iter(self._parsed)))
            # A report of one table reads its scale from its paragraphs too; a filing's
            # table from its caption ("in millions"), not from a hundred pages of prose.
            paragraphs = [c.text for c in chunks if not c.table] if chunk_id is None or \
                len({c.sources.get("table", "") for c in chunks if c.table}) == 1 else \
                [first.sources.get("caption", "")]
            self._parsed[key] = (first, parse_table(first.table, paragraphs))
        return self._parsed[key]


def short_answer_for(question: str | Question, passages: Sequence[Any],
                     tables: TableSource) -> ShortAnswer:
    """Compute or look up the answer from the tables of `passages`' documents."""
    q = operation(question) if isinstance(question, str) else question
    docs: list[tuple[Any, Table]] = []
    for p in passages:
        found = tables.table_of(p.doc_id, p.chunk_id)
        if found is not None and all(found[0].chunk_id != d[0].chunk_id for d in docs):
            docs.append(found)
    out = ShortAnswer(wanted_arithmetic=q.operation in ARITHMETIC_OPERATIONS, missing=q.missing)
    refusals: list[str] = []
    got = answer_question(q, [t for _, t in docs], refusals)
    if got is None:
        if out.missing is None and refusals:
            out.missing = refusals[0]  # the best-retrieved table's figures, of two kinds
        if out.missing is None and out.wanted_arithmetic and q.years and docs and not any(
                set(q.years) <= {y for ys in t.column_years if ys for y in ys} for _, t in docs):
            out.missing = (f"no retrieved table has a column for "
                           f"{' and '.join(str(y) for y in q.years)}")
        return out
    chunk, table = docs[got.table_index]
    # Cite the first retrieved piece of that table, else the table's first chunk.
    out.cited = next((p for p in passages if tables.is_table_chunk(p.doc_id, p.chunk_id) and
                      tables.table_of(p.doc_id, p.chunk_id)[0].chunk_id == chunk.chunk_id), chunk)
    out.cited_rows = table.rows
    out.cited_score = max(float(p.score) for p in passages if p.doc_id == chunk.doc_id)
    out.short_answer, out.scale, out.match = got.short_answer, got.scale, got.score
    out.answer_type, out.derivation = got.answer_type, got.derivation
    out.citations = [{"source_id": out.cited.chunk_id, "row": c.row, "column": c.column,
                      "value": c.text, "row_index": c.row_index, "column_index": c.column_index}
                     for c in got.cells]
    out.also = _other_reports(got, docs)
    return out


def _other_reports(got: TableAnswer, docs: Sequence[tuple[Any, Table]]) -> list[tuple[str, str]]:
    """(title, answer) of the other documents (NAMED_TIES at most, in retrieval order) whose
    table fits the question as well as the one answering it."""
    chosen = docs[got.table_index][0].doc_id
    seen, out = {chosen}, []
    for tied in got.tied:
        chunk = docs[tied.table_index][0]
        if chunk.doc_id in seen:
            continue
        seen.add(chunk.doc_id)
        out.append((chunk.title or chunk.doc_id, with_unit(tied.short_answer, tied.scale)))
    return out[:NAMED_TIES]


def text_short_answer(query: Query, passages: Sequence[Any], store: Any) -> TextAnswer | None:
    """The extract from the paragraphs of the first TEXT_DOCUMENTS documents of `passages`."""
    docs = list(dict.fromkeys(p.doc_id for p in passages))[:TEXT_DOCUMENTS]
    paragraphs = [par for d in docs for par in document_paragraphs(store.document(d))]
    return answer_from_text(query, paragraphs)


def choose(question: str | Question, table: ShortAnswer, text: TextAnswer | None,
           passages: Sequence[Any], store: Any) -> ShortAnswer:
    """The table's answer, or the text's when the evidence says the answer is in the text."""
    if text is None or text.asked in _SPANNED and text.kind != text.asked:
        return table  # no sentence names the count or place asked: none stands in for it
    q = operation(question) if isinstance(question, str) else question
    if q.missing is not None:
        return table  # a sentence about another period is no answer for this one
    op = q.operation
    # "The increase in X in 2019" is computed from 2018 when no sentence states it: a
    # sentence that does is read like one for a lookup; so is one that states "the
    # increase in X" a question names no year of (two years: TAT-QA's signed difference).
    stated = op in (Operation.CHANGE, Operation.PERCENT_CHANGE) and (
        len(q.years) == 1 or not q.years and _states_change(q.text, text))
    # "What percentage of net sales went to its largest customer?" is answered by a sentence
    # stating the percentage ("were 25% of consolidated net sales"), not only computed
    stated = stated or (op is Operation.PROPORTION and text.kind is TextKind.AMOUNT
                        and text.scale == "percent")
    if op in TEXT_OPERATIONS and text.score >= TEXT_MIN and table.match < TABLE_SURE:
        computed = _computed_from_text(op, text, passages, store)
        if computed is not None:
            return computed
    if table.short_answer is not None:
        table_kind = op in TABLE_ONLY or table.answer_type in ("arithmetic", "count")
        # A count or a place found where the question asked one is about it (_ABOUT_IT):
        # a table's amount is no count of employees, its row no city.
        spanned = text.kind == text.asked and text.kind in _SPANNED
        if ((table_kind and not stated)
                or (text.score < TEXT_MIN and not spanned)
                or (table.match >= TABLE_SURE and not stated)
                or text.kind != text.asked):  # an amount was asked; the sentence has none
            return table
        if text.short_answer == table.short_answer:
            # A sentence restating a cell ("Net sales were $93,662") names no scale; the
            # table's header does ("in 000's"), and its citation is the cell.
            return table
    elif table.wanted_arithmetic and text.score < TEXT_MIN and not stated and \
            not (text.kind == text.asked and text.kind in _SPANNED):
        # "could not find the figures" rather than a loosely related sentence (a name asked
        # "of the 50% it did not own" wants no arithmetic)
        return table
    elif text.score < TEXT_FLOOR and text.kind not in _ABOUT_IT:
        # No sentence is about the question: the model answers in prose. The sentence
        # introducing a table is about "What does the table show?" with one word of it; a
        # count or a place was cut from a sentence naming what was asked (text_answer).
        return table
    return _from_text(text, text.short_answer, text.answer_type, None, passages, store,
                      table.wanted_arithmetic)


def _from_text(text: TextAnswer, value: str | list[str], answer_type: str, derivation: str | None,
               passages: Sequence[Any], store: Any, wanted_arithmetic: bool) -> ShortAnswer:
    chunk = next((c for c in store.document(text.doc_id) if c.chunk_id == text.chunk_id), None)
    scores = [float(p.score) for p in passages if p.doc_id == text.doc_id]
    return ShortAnswer(value, text.scale, answer_type, derivation,
                       [{"source_id": text.chunk_id, "quote": text.sentence}], chunk,
                       None, max(scores, default=0.0), 0.0, wanted_arithmetic, text.sentence)


def _computed_from_text(op: str, text: TextAnswer, passages: Sequence[Any],
                        store: Any) -> ShortAnswer | None:
    """The sum or average of the amounts (one scale) the extract found for the periods
    asked; None when it found fewer than two."""
    if not isinstance(text.short_answer, list) or len(text.short_answer) < 2:
        return None
    try:
        values = [Decimal(v) for v in text.short_answer]
        result = compute(op, values, percent=text.scale == "percent")
    except (InvalidOperation, NoAnswer):
        return None  # amounts as written (scales differ, another currency): not added up
    return _from_text(text, plain(result.value), "arithmetic", result.derivation, passages,
                      store, True)
