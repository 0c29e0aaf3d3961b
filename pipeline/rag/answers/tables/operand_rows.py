"""Which row of a table a question's operand names, and how well: the share of the label's
words the question uses, partly the share of its words the label uses, a section's words
as a bonus; a qualifier ("deferred", "other") makes a label another measure.

Read by the table rules (table_answer.py).
"""

from __future__ import annotations

from pipeline.rag.answers.question import OPERATION_WORDS, Question, tokens
from pipeline.rag.answers.tables.table_cells import header_words, is_nil
from pipeline.rag.answers.tables.table_rows import SECTION_BONUS, label_tokens
from retriever_trt.documents.tables import Cell, Table

# A row must have at least this share of its label's words in the question.
MIN_COVERAGE = 0.4
# A row's match: LABEL_SHARE of the share of its label's words the question uses, plus
# QUESTION_SHARE of the share of the question's words the label uses (long labels are
# rarely quoted in full); SECTION_BONUS for its section's words, and WORD_TIE_BREAK per word
# matched, so that of two equal shares the longer match wins.
LABEL_SHARE, QUESTION_SHARE = 0.6, 0.4
WORD_TIE_BREAK = 0.01
# Words that make a row label another measure than the bare one: "Deferred revenue" is not
# revenue, nor "Other assets" assets. A row is a match only if the question says them too.
MEASURE_QUALIFIERS = frozenset({"deferred", "unearned", "unbilled", "accrued", "prepaid",
                                "other", "accumulated"})


def _row_score(table: Table, i: int, words: set[str]) -> tuple[float, int]:
    """Mostly the share of the label's words the question uses, partly the share of the
    question's words the label uses (long labels are rarely quoted in full)."""
    own = label_tokens(table.row_labels[i])
    parent = label_tokens(table.parents[i])
    # A qualifier of the row's own label makes it another measure; its section's does not
    # ("Inventories" under "Deferred tax assets" is inventories).
    if not words or (own & MEASURE_QUALIFIERS) - words:
        return 0.0, 0
    # A one-word label ("Total", "Other") may need its section to say what it is; one that
    # names a line item ("Inventories") is quoted alone as well: the better of the two.
    labels = [own, own | parent] if len(own) <= 1 else [own]
    score, hit = max((_label_share(label, words) for label in labels if label),
                     default=(0.0, 0))
    if not hit:
        return 0.0, 0
    bonus = SECTION_BONUS * len(parent & words) / len(parent) if parent else 0.0
    return score + WORD_TIE_BREAK * hit + bonus, hit


def _label_share(label: set[str], words: set[str]) -> tuple[float, int]:
    hit = len(label & words)
    return LABEL_SHARE * hit / len(label) + QUESTION_SHARE * hit / len(words), hit


def _numeric_rows(table: Table, columns: list[int], nil_ok: bool = False) -> list[int]:
    """Rows with a figure in every column; with `nil_ok`, a dash counts as one (zero) in
    all but one of them."""
    rows = []
    for i in table.body():
        cells = [table.cell(i, j) for j in columns]
        nil = sum(is_nil(c) for c in cells) if nil_ok else 0
        if nil < max(len(cells), 1) and \
                sum(c is not None and c.value is not None for c in cells) + nil == len(cells):
            rows.append(i)
    return rows


def best_row(table: Table, phrase: str | Question, columns: list[int], exclude: tuple[int, ...] = (),
             nil_ok: bool = False) -> tuple[int, float] | None:
    """(the row `phrase` names best among those with figures in `columns`, its match); a
    whole question's words are its own, tokenized once."""
    words = set(phrase.words if isinstance(phrase, Question) else tokens(phrase)) - OPERATION_WORDS
    best = None
    for i in _numeric_rows(table, columns, nil_ok):
        if i in exclude:
            continue
        score, hit = _row_score(table, i, words)
        if hit and score >= MIN_COVERAGE and (best is None or score > best[1]):
            best = (i, score)
    return best


def one_row_two_columns(table: Table, q: Question) -> tuple[list[Cell], float] | None:
    """"The difference between total net receivables and current net receivables": one row
    ("Net receivables") in the two columns the operands' other words name ("Total",
    "Current"); None unless each operand names one column and the rest of both is the same."""
    picked, rests = [], []
    for operand in q.operands:
        words = set(tokens(operand))
        named = [j for j in range(1, len(table.column_headers))
                 if header_words(table.column_headers[j]) & words]
        if len(named) != 1:
            return None
        picked.append(named[0])
        rests.append(words - header_words(table.column_headers[named[0]]))
    if picked[0] == picked[1] or not rests[0] or rests[0] != rests[1]:
        return None
    row = best_row(table, " ".join(sorted(rests[0])), picked)
    if row is None:
        return None
    return [table.cell(row[0], j) for j in picked], row[1]
