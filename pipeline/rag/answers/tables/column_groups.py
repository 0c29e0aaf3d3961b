"""The part of the company each column of a printed table shows, read from its header rows.

A segment or geography table may cut its columns, not its rows: Pfizer prints "Total
revenues" once, under "Worldwide", "U.S." and "International", each centred over three
years; Amcor prints "Flexibles" and "Rigid Packaging" over one year's columns. Such a
header names the part a column's figures belong to, as a row label does for a row (issue 47:
"a segment table's row and column headers play the member's part").

A column's group is the label a header row spreads over it, else its own header words that
name no period: a row holding two or more such labels over the dated columns (one label
over the whole table names no part of it: "Year Ended December 31," or a caption line) is
spread as the periods' labels are when it cuts them into equal groups (`column_periods.spread`:
k labels over a multiple of k columns cover equal groups in order).
"""

from __future__ import annotations

from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.tables.column_periods import (
    ColumnPeriod,
    header_rows,
    month_day,
    period_length,
    spread,
)
from retriever_trt.documents.tables import Table, parse_value
from retriever_trt.documents.years import years_in

# Header words that say what a column is without naming a part: its unit, or a change
# ("Increase/(decrease) excluding currency translation").
_NO_PART = frozenset("""millions million thousands dollars except per share amount amounts
unaudited note notes percent change increase decrease growth variance excluding currency
translation constant favorable unfavorable""".split())


def _names_a_part(text: str) -> bool:
    """Whether a header cell says something other than a period, a number or a unit."""
    if not text.strip() or parse_value(text) is not None or years_in(text) or \
            period_length(text) is not None or month_day(text) is not None:
        return False
    return bool(set(tokens(text)) - _NO_PART)


def column_groups(table: Table, periods: list[ColumnPeriod | None]) -> list[frozenset[str]]:
    """One entry a column: the words of the part its header names (empty where none)."""
    width = len(table.column_headers)
    dated = [j for j, p in enumerate(periods) if p is not None]
    if not dated:
        return [frozenset()] * width
    rows = table.rows[:header_rows(table)]
    own = {j: " ".join(r[j] for r in rows if j < len(r) and _names_a_part(r[j]))
           for j in dated}
    spread_over: dict[int, list[str]] = {}
    for r in rows:
        # labels beyond the dated columns head others ("% Change" over Worldwide again)
        marks = [(j, r[j]) for j in range(dated[0], min(dated[-1] + 1, len(r)))
                 if _names_a_part(r[j])]
        # only labels that cut the dated columns into equal groups: two labels over seven
        # columns head a few of them ("Increase/(decrease)" over the change columns)
        if len({text for _, text in marks}) >= 2 and len(dated) % len(marks) == 0:
            for j, text in spread(marks, dated).items():
                spread_over.setdefault(j, []).append(str(text))
    out = [frozenset[str]()] * width
    for j in dated:
        # a row of group labels over the columns first: a column's own cell may be a line
        # of caption over them all ("The following presents worldwide revenues by ...")
        text = " ".join(spread_over.get(j, ())) or own[j]
        out[j] = frozenset(tokens(text))
    return out
