"""Facts read from a filing's printed tables, for a filing that has no tagged ones (a PDF).

Each table row that reads as a line item (`row_items.py`) gives one fact a column whose
period the header shows (`column_periods.py`): a flow item from a column with a period
length, a balance item from a balance-date column, or from any column on a closing row
("Total stockholders' equity, ending balances", "Cash ..., end of period": the balance at
the column's end), its value as `cell_facts.py` reads it. A primary statement's rows that
no item names give facts under their labels' own concepts (`label_facts.py`), ranked last.
Each fact cites its cell (chunk id, row, column), as a tagged fact does.

Where several rows could give an item's figure, the first listed wins (`fact_answer.
find_fact` takes the first): rows of the primary statements (a caption naming "balance
sheets" or "statements of operations/income/earnings/cash flows/...", not a note's "as
presented in the consolidated statements of cash flows"), then the better label match,
then a section's total row ("Total operating revenues" before the "Freight revenues" part
above it, both revenue by their words), then a row "attributable to" the company's
shareholders before the consolidated one, then page order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from pipeline.rag.answers.filings.cover.cover_counts import cover_share_count
from pipeline.rag.answers.filings.printed.cell_facts import table_fact
from pipeline.rag.answers.filings.printed.label_facts import label_facts
from pipeline.rag.answers.filings.printed.statement_checks import failed_statements
from pipeline.rag.answers.filings.printed.statement_rows import (
    CLOSING,
    SCALE_POWER,
    statement_tables,
    whole_tables,
)
from pipeline.rag.answers.tables.column_periods import ColumnPeriod, column_periods, header_rows
from pipeline.rag.answers.tables.row_items import RowItem, match_row
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, Kind
from retriever_trt.documents.model import Fact
from retriever_trt.documents.pdf.pdf_statements import StatementKind
from retriever_trt.documents.tables import Cell, Table, parse_table
from retriever_trt.store.document_store import Chunk, DocumentInfo

TAX, PRETAX, NET = (BY_NAME[n] for n in ("income tax expense", "pretax income", "net income"))
_STATEMENT = re.compile(
    r"\b(?:balance sheets?|statements? of (?:consolidated )?(?:operations|income|earnings|"
    r"comprehensive (?:income|loss|earnings)|cash flows?|financial (?:position|condition)|"
    r"(?:changes in )?(?:share|stock)holders['’]? equity|(?:changes in )?equity))", re.I)
_QUALIFIERS = re.compile(r"(?:\b(?:condensed|consolidated)\s*)+$", re.I)
# A statement's name after these words is a mention in a note's sentence, not a title.
_REFERRING = frozenset({"the", "our", "in", "on", "within", "its", "company's", "company’s"})
# A section's total row ("Total operating revenues"): the item's figure where its section's
# parts name the item as well ("Freight revenues", IBM's "Sales" under "Revenue:").
_TOTAL = re.compile(r"^\W*total\b", re.I)
# A figure written to the cent ("$0.12", "1.94"): a rate a share, where amounts are whole.
_CENTS = re.compile(r"(?<![\d,])\d{1,3}\.\d{2}(?!\d)")
# The ranks of a fact's table after a primary statement's (0): a segment note or a caption
# naming a statement, any other table, a statement of a part of the group, and last a
# statement row no vocabulary item names (`label_facts.py`).
NOTE_TIER, OTHER_TIER, ENTITY_TIER, LABELLED_TIER = 1, 2, 3, 4
# A payment an equity statement prints ranks after the primary statements', before a note's.
EQUITY_TIER = 0.5
# Statements of a part of the group, not the company's consolidated figures: the parent
# alone (AES's "Schedule I Condensed Financial Information of Parent"), the guarantors
# (Amcor's "Obligor Group", "Deed of Cross Guarantee").
_ANOTHER_ENTITY = re.compile(r"\bschedule i\b|\b(?:of|for) (?:the )?(?:parent|registrant)\b|"
                             r"\bobligor group\b|\bcross guarantee\b|\bguarantor", re.I)


def is_statement(caption: str) -> bool:
    """Whether a caption names a primary financial statement (not a note that mentions one:
    "as presented in the consolidated statements of cash flows")."""
    text = " ".join(caption.split())
    for m in _STATEMENT.finditer(text):
        before = _QUALIFIERS.sub("", text[:m.start()]).split()
        if not before or before[-1].lower() not in _REFERRING:
            return True
    return False


def _deductions(rows: dict[int, RowItem], cells: dict[tuple[int, int], Cell]) -> set[tuple[int, int]]:
    """Income tax cells a statement prints as negatives it adds ("Earnings before income
    taxes 20,071; Provision for income taxes (4,829); Net earnings 15,242"): the expense is
    the opposite. Told by the arithmetic, since a tax benefit prints the same way."""
    # Each item's best-matched row, the first of equals: "Other income, net" half-names net
    # income above the "Net income" row the arithmetic must end on.
    first: dict[str, int] = {}
    for i, row in sorted(rows.items(), key=lambda r: (-r[1].cover, r[0])):
        first.setdefault(row.item.name, i)
    tax, pretax, net = (first.get(name) for name in (TAX.name, PRETAX.name, NET.name))
    if tax is None or pretax is None or net is None:
        return set()
    out = set()
    for (i, j), cell in cells.items():
        before, after = cells.get((pretax, j)), cells.get((net, j))
        if i == tax and before and after and cell.value.number < 0 and \
                before.value.number + cell.value.number == after.value.number:
            out.add((i, j))
    return out


def _agreed_scale(facts: list[tuple[RowItem, Fact, tuple[str, int, int]]],
                  scaled: set[tuple[str, object, object, object]]) -> str:
    """The scale a table that names none is in, where one of its figures equals, in that
    scale, another table's of the same item and period: Apple's five-year summary prints
    2019's net income 55,256 as its income statement does "in millions"."""
    for scale, power in SCALE_POWER.items():
        if power and any((row.item.name, f.start, f.end, f.value.scaleb(power)) in scaled
                         for row, f, _ in facts if not row.item.per_share and f.value):
            return scale
    return ""


def _a_rate(row: RowItem, cell: Cell, scale: str) -> bool:
    """Whether an amount row's cell is a rate a share: a figure in cents in a table of
    whole dollars ("Cash dividend $0.12" of a five-year summary is no dividends paid)."""
    return not row.item.per_share and not scale and bool(_CENTS.search(cell.text))


def _table_facts(chunk: Chunk, table: Table, periods: list[ColumnPeriod | None],
                 ) -> Iterable[tuple[RowItem, Fact, tuple[str, int, int]]]:
    """(the row's match, fact, its cell) for each item row and dated column of one table."""
    cells = {(c.row_index, c.column_index): c for c in table.numeric_cells()}
    rows = {i: row for i in range(header_rows(table), len(table.rows))
            if (row := match_row(table.row_labels[i], table.parents[i])) is not None}
    deductions = _deductions(rows, cells)
    for i, row in rows.items():
        closing = row.item.kind is Kind.BALANCE and bool(CLOSING.search(table.row_labels[i]))
        for j, period in enumerate(periods):
            cell = cells.get((i, j))
            if period is None or cell is None or cell.value.percent or \
                    _a_rate(row, cell, table.scale):
                continue
            if not (period.shows_balances() or closing if row.item.kind is Kind.BALANCE
                    else period.months):
                continue
            fact = table_fact(row.item, cell, period, table.scale, f"{chunk.chunk_id}:{i}:{j}",
                              (i, j) in deductions)
            yield row, fact, (chunk.chunk_id, i, j)


def facts_from_tables(info: DocumentInfo, chunks: Iterable[Chunk]) -> DocumentInfo:
    """A copy of `info` with the facts its tables show, best candidates first; the tables
    of a statement that fails its self-checks give none, and are named in `unread`."""
    chunks = list(chunks)
    statements = statement_tables(chunks, info.metadata)
    failed = failed_statements(statements)
    located = {st.chunk_id: st for st in statements}
    unread = {st.chunk_id for st in statements if st.statement in failed}
    read = []
    for chunk in whole_tables(chunks):
        if chunk.chunk_id in unread:
            continue
        caption = chunk.sources.get("caption", "")
        st = located.get(chunk.chunk_id)
        table = st.table if st else parse_table(chunk.table, [caption])
        periods = st.periods if st else column_periods(table, caption, info.metadata)
        # a segment note's table is read as a statement but holds parts, not the company's
        # figure: Amcor's "Flexibles Segment" net sales must not stand for its net sales
        tier = ENTITY_TIER if _ANOTHER_ENTITY.search(caption) else \
            0 if st and st.kind is not StatementKind.SEGMENTS else \
            NOTE_TIER if st or is_statement(caption) else OTHER_TIER
        equity = bool(st) and st.kind is StatementKind.EQUITY
        read.append((chunk, table, periods, tier, equity, list(_table_facts(chunk, table, periods))))
    scaled = {(row.item.name, f.start, f.end, f.value) for *_, facts in read
              for row, f, _ in facts if not row.item.per_share}
    found: list[tuple[tuple[float, float, bool, bool, int], Fact, tuple[str, int, int]]] = []
    for chunk, table, periods, tier, equity, facts in read:
        scale = "" if table.scale else _agreed_scale(facts, scaled)
        if scale:
            facts = list(_table_facts(chunk, replace(table, scale=scale), periods))
        for row, fact, cell in facts:
            total = bool(_TOTAL.match(table.row_labels[cell[1]]))
            # a payment is the cash flow statement's: the equity statement's "Repurchases of
            # common stock" is the shares' value (Home Depot's 599 for the 649 paid)
            paid = EQUITY_TIER if equity and row.item.outflow else tier
            found.append(((paid, -row.cover, not total, not row.attributable, len(found)),
                          fact, cell))
    for st in statements:  # the rows no item names, after every item's
        if st.chunk_id not in unread:
            found += [((LABELLED_TIER, 0.0, True, True, len(found)), fact, cell)
                      for fact, cell in label_facts(st)]
    found.sort(key=lambda f: f[0])
    cover = cover_share_count(chunks)
    return DocumentInfo(info.doc_id, info.title, info.metadata,
                        [f for _, f, _ in found] + ([cover] if cover else []),
                        {f.fact_id: cell for _, f, cell in found}, info.collection,
                        {f.kind.value: f"page {f.pages}: {f.reason}" for f in failed.values()})
