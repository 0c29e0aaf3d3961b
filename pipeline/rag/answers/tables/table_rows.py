"""Answers about a table's rows rather than one row's figures: which rows it lists ("What
are the components of X?"), how many ("How many types of X are there?") and which of them
is highest or lowest in a period ("Which segment had the highest revenue in 2019?").

All three read the same rows: those under the section the question names (every value row
when it names none), totals left out, since a total is their sum, not one of them.
"""

from __future__ import annotations

import re

from pipeline.rag.answers.question import Question, tokens
from retriever_trt.documents.tables import Cell, Table

# "(see Note 4)", "(Note (b))", "(1)", "(a)", and a mark set on the word itself: "Order
# intake1".
_FOOTNOTE = re.compile(r"\((?:see )?note[^()]*(?:\([^()]*\)[^()]*)?\)|\(\d\)|\([a-z]\)|"
                       r"(?<=[a-z]{3})\d{1,2}$", re.I)
# Words naming what is listed or counted, not which section: "the components of deferred
# tax assets" names the section "deferred tax assets".
_LISTING_WORDS = frozenset({"component", "item", "type", "segment", "region", "categorie",
                            "category", "element", "scope", "line", "financial", "listed",
                            "table", "consist", "making", "considered", "kind", "class",
                            "countrie", "country", "source", "major", "different"})
_NET_GROSS = frozenset({"net", "gross"})
# Rows that are no component of what a section sums: a deduction ("Less valuation
# allowance", "Allowance for doubtful accounts") or a roll-forward's closing balance ("At
# end of the period", whose components are the opening balance and the movements).
_CONTRA = re.compile(r"^\s*(?:less\b|allowances?\b)", re.I)
_CLOSING = re.compile(r"\b(?:at|as of|as at) (?:the )?end of\b|^\s*(?:closing|ending) balance\b|"
                      r"^\s*balance,? (?:at )?end\b", re.I)
# A section names the rows when the question uses this share of its words; the answer's
# match is ROW_LIST_BASE plus SECTION_BONUS per word of it.
MIN_SECTION_COVER = 0.5
ROW_LIST_BASE = 0.5
SECTION_BONUS = 0.1


def label_tokens(text: str) -> set[str]:
    """A label's content words, its footnote marks ("(1)", "(see Note 4)") left out."""
    return set(tokens(_FOOTNOTE.sub(" ", text)))


def listed_rows(table: Table, q: Question, require_section: bool = True) -> tuple[list[int], int] | None:
    """(the value rows under the section the question names, how many of its words the
    question used). When it names none: every value row if the table has no sections or
    `require_section` is false, else None (its words name something the rows are not)."""
    words = set(q.words) - _LISTING_WORDS
    sections = dict.fromkeys(table.parents[i] for i in table.body() if table.parents[i])
    best, best_hit, best_cover = None, 0, 0.0
    for sec in sections:  # table order: the first of equally good sections wins
        label = set(tokens(sec))
        hit = len(label & words)
        cover = hit / len(label) if label else 0.0
        if cover >= MIN_SECTION_COVER and (cover, hit) > (best_cover, best_hit):
            best, best_hit, best_cover = sec, hit, cover
    if best is None and words and sections and require_section:
        return None
    named = set(tokens(best or "")) | words
    rows, seen = [], set()
    for i in table.body():
        label = table.row_labels[i]
        # A label repeated under another period's block ("June 30, 2018") is the same row.
        if (best is not None and table.parents[i] != best) or label in seen or \
                not any(c.value is not None for c in table.cells if c.row_index == i):
            continue
        if _is_aggregate(label, named):
            # A section's components come before their total; what follows it within the
            # section ("Less valuation allowance", "Net deferred tax assets") adjusts the
            # total, it is no component.
            if best is not None and len(rows) >= 2:
                break
            continue
        if _CONTRA.search(label):
            continue
        seen.add(label)
        rows.append(i)
    return (rows, best_hit) if len(rows) >= 2 else None


def _is_aggregate(label: str, named: set[str]) -> bool:
    """A total of the rows, not one of them: "Total ...", or "Net deferred tax assets" /
    "Gross ... liabilities" under the section (or question) naming deferred tax."""
    words = label.lower().split()
    if "total" in label_tokens(label) or _CLOSING.search(label):
        return True
    return bool(words) and words[0] in _NET_GROSS and bool(label_tokens(" ".join(words[1:])) & named)


def row_labels(table: Table, rows: list[int]) -> list[str]:
    """The rows' labels as shown, without a closing period or colon ("Long-term debt .")."""
    return [_FOOTNOTE.sub("", table.row_labels[i]).strip().rstrip(" .:") for i in rows]


def extreme_row(table: Table, rows: list[int], column: int,
                higher: bool) -> tuple[Cell, list[Cell]] | None:
    """The cell of the highest (or lowest) of `rows` in `column`, and all their cells there;
    None unless at least two of the rows have a figure in it."""
    cells = [c for i in rows if (c := table.cell(i, column)) is not None and c.value is not None]
    if len(cells) < 2:
        return None
    pick = max if higher else min
    return pick(cells, key=lambda c: c.value.number), cells
