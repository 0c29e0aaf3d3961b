"""A part of the company read from a printed table's row, for a filing with no tagged
facts (a PDF): with no dimensions, the row's label plays the member's part. "iPhone" of
Apple's "Net sales by category" table, "Americas" of a revenue-by-geography table, "Freight
revenues" of Union Pacific's income statement.

A row gives the part's figure of a line item when its label holds every word the question
names the part by (or its section's does and the row is the item itself: "Operating income"
under "Greater China:"), and the item is named by the table around the row: the row's label with
its section and the table's caption and column headers hold all the content words of one of
the item's names ("Revenue by geographic area"). A section that is itself another item
("Operating income:" above the segments' rows of a revenue and operating income table) or
a row that is another item ("Data Center cost of revenue") names no part of this one.
Columns and scale are read as the statements' are (`column_periods.py`, `table_facts.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from decimal import Decimal

from pipeline.rag.answers.filings.parts.column_parts import column_part_cells, section_periods
from pipeline.rag.answers.filings.printed.cell_facts import table_fact
from pipeline.rag.answers.filings.printed.statement_rows import (
    SCALE_POWER,
    statement_tables,
    whole_tables,
)
from pipeline.rag.answers.filings.printed.table_facts import is_statement
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.tables.column_groups import column_groups
from pipeline.rag.answers.tables.column_periods import ColumnPeriod, column_periods, header_rows
from pipeline.rag.answers.tables.row_items import content_words, match_row
from pipeline.rag.answers.vocabulary.line_items import Kind, LineItem
from retriever_trt.documents.model import Fact
from retriever_trt.documents.tables import Table, parse_table
from retriever_trt.store.document_store import Chunk, DocumentInfo

# Words of a section that say how a table is cut, not which part: "Total Revenues by
# Geography:", "Revenues by segment:".
# Words before an item's name in a caption read as narrowing it ("Wireless service revenue").
CAPTION_MODIFIERS = 2
# A header giving each figure as a share of a measure ("% of Sales", "Percent of Segment
# Sales") names that measure as the whole, not as what its table shows (Johnson & Johnson's
# research and development expense by segment, "Amount % of Sales*").
_SHARE_OF = re.compile(r"(?:%|\bper\s?cent(?:age)?)\s+of\b.*", re.I)
# A figure small enough to equal another at some scale by chance ("12" in thousands and
# "12,000" in units) is no evidence of a table's scale.
_SCALE_EVIDENCE = 100
# Words that cut a figure to a place ("United States", "International", "Non-U.S.").
_PLACE_CUT = frozenset({"united", "state", "us", "international", "domestic", "foreign",
                        "outside", "non"})
_SECTION_CUES = frozenset({"total", "geography", "geographic", "geographical", "region",
                           "segment", "area", "market", "consolidated", "worldwide", "global"})


def _names_item(text: str, item: LineItem) -> bool:
    """Whether `text` holds all the content words of one of the item's names."""
    have = set(content_words(text))
    return any(name and set(name) <= have for name in (content_words(p) for p in item.phrases))


def _other_item(label: str, item: LineItem) -> bool:
    """Whether a label reads as another line item than `item`."""
    row = match_row(label)
    return row is not None and row.item is not item


def _part_cells(table: Table, caption: str, item: LineItem, part: set[str],
                groups: list[frozenset[str]], said: frozenset[str]) -> Iterator[tuple[int, int]]:
    """The cells (row, column) of `table` that show `item` for the part named by the words
    `part`. The part is named by the row's label ("Americas"), by its section's where the
    row is the item itself ("Operating income" under "Greater China:") or the section is
    ("U.S." under "Franchised revenues:"), by the column's group (`column_groups.py`: "U.S."
    over "Total revenues"), or by both ("DARZALEX" under "U.S."); a column whose group names
    what the question does not ("Flexibles" over a region's row) narrows the row to another
    part."""
    first = header_rows(table)
    headers = " ".join(_SHARE_OF.sub("", c) for r in table.rows[:first] for c in r)
    # A caption naming the item names the part with each row ("Wireless service revenue for
    # our reportable segments" over "Consumer")
    titled = set(tokens(caption)) if _names_item(caption, item) else set()
    for i in range(first, len(table.rows)):
        label, section = table.row_labels[i], table.parents[i]
        if _other_item(section, item) or \
                not _names_item(f"{label} {section} {caption} {headers}", item):
            continue
        row = match_row(label)
        own_item = row is not None and row.item is item
        # A section naming the item ("Franchised revenues:") names the part with its rows
        named = (set() if row is not None and not own_item else set(tokens(label))) | \
            (set(tokens(section)) if own_item or _names_item(section, item) else set())
        if not (own_item or part & named) or _narrowed_to_a_place(label, said):
            continue
        if part & named:  # not to the item's own row: "Sales" under "... by Service Offering"
            named |= titled
        for j in range(1, len(groups)):
            if part <= named | groups[j] and groups[j] <= said:
                yield i, j


def _narrowed_to_a_place(label: str, said: frozenset[str]) -> bool:
    """Whether a row's label cuts its part to a place the question names none of:
    "Skyrizi United States" above "International" and "Total" (AbbVie's net revenues by
    product, the product's name printed on its first row) is not Skyrizi's revenue."""
    return bool(_PLACE_CUT & set(tokens(label)) - said) and not _PLACE_CUT & said


def _caption_modifiers(caption: str, item: LineItem) -> str:
    """The words a caption sets right before the item's name: "Fios" of "The following table
    provides Fios revenues for our two reportable segments", "Wireless service" of
    "Wireless service revenue for our reportable segments"."""
    low = caption.lower()
    for phrase in sorted(item.phrases, key=len, reverse=True):
        m = re.search(rf"((?:[\w&'-]+\s+){{1,{CAPTION_MODIFIERS}}}){re.escape(phrase)}s?\b", low)
        if m:
            return m.group(1)
    return ""


def _unasked(row: str, said: frozenset[str]) -> int:
    """How many words of a row's label, its section and its caption's modifiers of the item
    neither the question nor the item's names say: "Hardware Revenues:" narrows Oracle's
    revenue to a product line the question about "total revenues from the Asia Pacific
    region" does not name, "Small and Medium Business" and a "Fios revenues" caption narrow
    Verizon's Business segment; "Total Revenues by Geography:" does not. `said`: the
    question's words, the item's names', the part's and the cues."""
    return len(set(tokens(row)) - said)


def _least_narrowed(facts: list[Fact], narrowing: dict[str, tuple[int, int]]) -> list[Fact]:
    """Where rows give a period different figures, those whose label and section say no
    word the question does not (none when each says some), the fewest their caption says
    among them; a period whose rows agree keeps them all."""
    by_period: dict[tuple[object, object], list[Fact]] = {}
    for f in facts:
        by_period.setdefault((f.start, f.end), []).append(f)
    kept: set[str] = set()
    for group in by_period.values():
        if len({f.value for f in group}) > 1:
            fewest = min(narrowing[f.fact_id] for f in group)
            # rows whose label or section each narrow the figure in words the question
            # does not say ("Intersegment sales:" and "Sales including intersegment
            # sales:" over a segment's row) leave no row the question asks for
            group = [f for f in group if narrowing[f.fact_id] == fewest and fewest[0] == 0]
        kept.update(f.fact_id for f in group)
    return [f for f in facts if f.fact_id in kept]


def _scaled_alike(facts: list[Fact], unscaled: set[str]) -> list[Fact]:
    """A table naming no scale is in the scale under which one of its figures equals another
    table's of the same period (Meta's segment note repeats "(13,717)" of its MD&A table
    "in millions"); with none agreeing, its figures are dropped where a table with a scale
    gives the period, for a bare 13,717 is no amount in dollars."""
    scaled = {(f.start, f.end, f.value) for f in facts if f.fact_id not in unscaled}
    periods = {(start, end) for start, end, _ in scaled}
    power = next((p for p in SCALE_POWER.values() if p and any(
        (f.start, f.end, f.value.scaleb(p)) in scaled for f in facts
        if f.fact_id in unscaled and f.value)), None)
    out = []
    for f in facts:
        if f.fact_id in unscaled and power is not None:
            f = replace(f, value=f.value.scaleb(power))
        elif f.fact_id in unscaled and (f.start, f.end) in periods:
            continue
        out.append(f)
    return out


def _scale_by_statements(table: Table, periods: list[ColumnPeriod | None],
                         known: set[tuple[object, Decimal]]) -> str:
    """The scale under which a figure of a table naming none equals a statement's figure of
    the same period end (Boeing's revenue-by-location note ends in "Total revenues
    $66,517", the income statement's total revenues in millions); "" when none does."""
    votes: dict[str, int] = {}
    for c in table.numeric_cells():
        period = periods[c.column_index] if c.column_index < len(periods) else None
        if period is None or c.value.percent or abs(c.value.number) < _SCALE_EVIDENCE:
            continue
        for word, power in SCALE_POWER.items():
            if power and (period.end, c.value.number.scaleb(power)) in known:
                votes[word] = votes.get(word, 0) + 1
    return max(votes, key=votes.__getitem__) if votes else ""


def part_facts(info: DocumentInfo, chunks: Iterable[Chunk], item: LineItem,
               part: set[str], asked: frozenset[str] = frozenset()) -> DocumentInfo:
    """A copy of `info` whose facts are `item`'s for the part named by the words `part`:
    from the primary statements' rows that show it, else from every table's, in page order.
    A statement is the filing's own figure, where an analysis table may set a change or a
    share beside it under a header a period is read from. Of rows giving a period different
    figures, those whose section says the fewest words the question (`asked`) does not."""
    chunks = list(chunks)
    located = {st.chunk_id for st in statement_tables(chunks, info.metadata)}
    facts: list[Fact] = []
    cells: dict[str, tuple[str, int, int]] = {}
    stated: set[str] = set()
    narrowing: dict[str, tuple[int, int]] = {}  # unsaid words: row and section, caption
    unscaled: set[str] = set()
    said = asked | {w for p in item.phrases for w in tokens(p)} | _SECTION_CUES
    known = {(f.end, f.value) for f in info.facts if f.value}
    for chunk in whole_tables(chunks):
        caption = chunk.sources.get("caption", "")
        statement = chunk.chunk_id in located or is_statement(caption)
        table = parse_table(chunk.table, [caption])
        periods = column_periods(table, caption, info.metadata)
        numbers = {(c.row_index, c.column_index): c for c in table.numeric_cells()}
        groups = column_groups(table, periods)
        modifiers = _caption_modifiers(caption, item)
        scale = table.scale or _scale_by_statements(table, periods, known)
        # columns of parts over blocks of rows, one a period ("Year Ended ...")
        by_row = {} if any(periods[1:]) else section_periods(table, info.metadata)
        found = column_part_cells(table, item, part, said | part) if by_row else \
            _part_cells(table, caption, item, part, groups, said | part)
        for i, j in found:
            cell, period = numbers.get((i, j)), periods[j] or by_row.get(i)
            if period is None or cell is None or cell.value.percent or not (
                    period.shows_balances() if item.kind is Kind.BALANCE else period.months):
                continue
            fact = table_fact(item, cell, period, scale, f"{chunk.chunk_id}:{i}:{j}", False)
            facts.append(fact)
            if not scale and not item.per_share:
                unscaled.add(fact.fact_id)
            cells[fact.fact_id] = (chunk.chunk_id, i, j)
            narrowing[fact.fact_id] = (
                _unasked(f"{table.parents[i]} {table.row_labels[i]}", said | part),
                _unasked(modifiers, said | part))
            if statement:
                stated.add(fact.fact_id)
    # the rows saying nothing the question does not first ("Service" over the income
    # statement's "Professional services and other"), then a statement's among them
    facts = _least_narrowed(_scaled_alike(facts, unscaled), narrowing)
    if any(f.fact_id in stated for f in facts):
        facts = [f for f in facts if f.fact_id in stated]
    cells = {f.fact_id: cells[f.fact_id] for f in facts}
    return DocumentInfo(info.doc_id, info.title, info.metadata, facts, cells, info.collection,
                        getattr(info, "unread", {}))
