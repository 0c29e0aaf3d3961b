"""Self-checks that tell when a PDF statement was read wrong, from its own arithmetic.

A column read into the wrong place, a row lost at a page break or a wrapped label joined to
the wrong amounts all break sums a statement prints. Checked, per column period, across a
statement's parts (`statement_rows.statement_tables`):

- a balance sheet: total assets = total liabilities and equity (or total liabilities plus
  total equity where no such row is printed);
- a cash flow statement: the net change in cash = operating + investing + financing cash
  flows (+ the effect of exchange rates, where the change is printed after it, or + every
  row printed between the flows and the change: cash reclassified as held for sale);
- a statement of equity with its components as columns: in each column, a balance plus
  the changes below it is the next balance;
- any statement: a total that names its section ("Current assets:" ... "Total current
  assets") equals the sum of the section's rows above it, where it is a sum: it adds up in
  some columns (so it is a sum) and not in another (so a figure was misread).

A check is made only where its rows are all found; a statement that fails one is returned
with the reason, and its figures are not given as facts (`table_facts.py`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from pipeline.rag.answers.filings.printed.statement_rows import StatementRow, StatementTable, statement_rows
from retriever_trt.documents.pdf.pdf_statements import StatementKind

_TOTAL_ASSETS = re.compile(r"^total assets$", re.I)
_TOTAL_LIABILITIES_AND_EQUITY = re.compile(r"^total liabilities(?:,|\s+and\b).*\b(?:equity|deficit)",
                                           re.I)
_TOTAL_LIABILITIES = re.compile(r"^total liabilities$", re.I)
_TOTAL_EQUITY = re.compile(r"^total (?:[\w'’]+ )?(?:equity|deficit)$", re.I)
_NET_CASH = re.compile(r"^net cash\b.*\b(operating|investing|financing)\b", re.I)
_EXCHANGE = re.compile(r"\bexchange[- ]rate", re.I)
_NET_CHANGE = re.compile(r"^(?:net )?(?:\(?(?:increase|decrease|change)\)?[\s/]*)+"
                         r"(?:\(?(?:increase|decrease)\)?\s*)?in cash", re.I)
_TOTAL = re.compile(r"^total\b", re.I)
# Printed figures are rounded: a sum of k of them may be off by about k/2 in the last digit.
ROUNDING_PER_TERM = Decimal("0.5")


@dataclass(frozen=True)
class Failure:
    """A statement whose figures do not add up: which, where, and the sum that failed."""

    kind: StatementKind
    statement: int
    pages: str
    reason: str


def _tolerance(rows: list[StatementRow], terms: int) -> Decimal:
    unit = Decimal(1).scaleb(rows[0].scale) if rows else Decimal(1)
    return unit * (1 + ROUNDING_PER_TERM * terms)


def _by_period(rows: list[StatementRow]) -> dict[tuple, list[StatementRow]]:
    out: dict[tuple, list[StatementRow]] = defaultdict(list)
    for r in rows:
        out[(r.period.end, r.period.months if not r.period.shows_balances() else None)].append(r)
    return out


def _first(rows: list[StatementRow], pattern: re.Pattern[str]) -> Decimal | None:
    return next((r.value for r in rows if pattern.search(r.label)), None)


def _balance(rows: list[StatementRow]) -> str | None:
    for (end, _), col in _by_period(rows).items():
        assets = _first(col, _TOTAL_ASSETS)
        other = _first(col, _TOTAL_LIABILITIES_AND_EQUITY)
        if other is None:
            liabilities, equity = _first(col, _TOTAL_LIABILITIES), _first(col, _TOTAL_EQUITY)
            other = liabilities + equity if liabilities is not None and equity is not None else None
        if assets is not None and other is not None and abs(assets - other) > _tolerance(col, 2):
            return f"total assets {assets:,f} ≠ total liabilities and equity {other:,f} at {end}"
    return None


def _cash_flows(rows: list[StatementRow]) -> str | None:
    for (end, months), col in _by_period(rows).items():
        flows = {}
        for r in col:  # the last row of each: the total follows its continuing/discontinued parts
            if m := _NET_CASH.search(r.label):
                flows[m.group(1).lower()] = r.value
        change = _first(col, _NET_CHANGE)
        if len(flows) < 3 or change is None:
            continue
        fx = _first(col, _EXCHANGE) or Decimal(0)
        total = sum(flows.values(), Decimal(0))
        between = _reconciling(col)
        # the change printed with the effect of exchange rates, or before it (Home Depot), or
        # with every row printed between the flows and it (Amcor's cash "classified as held
        # for sale assets" beside the exchange rates' effect)
        if min(abs(total + fx - change), abs(total - change),
               abs(total + between - change)) > _tolerance(col, 4 + 2):
            return (f"operating + investing + financing cash flows {total:,f} ≠ the net change "
                    f"in cash {change:,f} ({months} months to {end})")
    return None


def _reconciling(col: list[StatementRow]) -> Decimal:
    """The sum of the rows a cash flow statement prints between its last net cash flow and
    its net change in cash."""
    last = max((i for i, r in enumerate(col) if _NET_CASH.search(r.label)), default=None)
    change = next((i for i, r in enumerate(col) if _NET_CHANGE.search(r.label)), None)
    if last is None or change is None or change <= last:
        return Decimal(0)
    return sum((r.value for r in col[last + 1:change]), Decimal(0))


def _section_sums(st: StatementTable) -> str | None:
    """A section total that adds up in some columns and not in another (see module doc)."""
    table = st.table
    values: dict[tuple[int, int], Decimal] = {
        (c.row_index, c.column_index): c.value.number for c in table.numeric_cells()
        if not c.value.percent}
    columns = sorted({j for _, j in values if j < len(st.periods) and st.periods[j]})
    for i in table.body():
        section = table.parents[i]
        if not section or _TOTAL.sub("", table.row_labels[i]).strip().lower() != section.lower():
            continue  # a sum only where it names its section: "Total current assets"
        terms = [k for k in range(table.n_header, i) if table.parents[k] == section
                 and not _TOTAL.search(table.row_labels[k])]
        if len(terms) < 2:
            continue
        adds, misses = [], []
        for j in columns:
            if (i, j) not in values:
                continue
            total = sum((values.get((k, j), Decimal(0)) for k in terms), Decimal(0))
            ok = abs(total - values[(i, j)]) <= 1 + ROUNDING_PER_TERM * len(terms)
            (adds if ok else misses).append((j, total))
        if adds and misses:
            j, total = misses[0]
            return (f"{table.row_labels[i]!r} {values[(i, j)]:,f} ≠ the sum of its rows {total:,f} "
                    f"(page {st.page}, column {j})")
    return None


def _roll_forward(rows: list[StatementRow]) -> str | None:
    """A statement of equity read by its rows (components as columns): in each column, the
    balance on one balance row plus the changes down to the table's next balance row
    (subtotals aside) is the balance there."""
    tables: dict[str, list[StatementRow]] = defaultdict(list)
    for r in rows:
        if r.component:
            tables[r.cell[0]].append(r)
    for table in tables.values():
        marks = sorted({r.cell[1] for r in table if r.period.months is None})
        cells = {(r.cell[1], r.cell[2]): r for r in table}
        for top, bottom in zip(marks, marks[1:], strict=False):
            for j in sorted({r.cell[2] for r in table}):
                before, after = cells.get((top, j)), cells.get((bottom, j))
                changes = [r.value for (i, k), r in cells.items() if k == j and top < i < bottom
                           and r.period.months and not _TOTAL.search(r.label)]
                if before is None or after is None or not changes:
                    continue
                total = before.value + sum(changes, Decimal(0))
                if abs(total - after.value) > _tolerance(table, len(changes) + 1):
                    return (f"{before.component!r}: {before.label} {before.value:,f} + its "
                            f"changes = {total:,f} ≠ {after.label} {after.value:,f} "
                            f"(page {after.page})")
    return None


def failed_statements(tables: list[StatementTable]) -> dict[int, Failure]:
    """Statement number -> why it fails its checks, for the statements that do."""
    parts: dict[int, list[StatementTable]] = defaultdict(list)
    for st in tables:
        parts[st.statement].append(st)
    out = {}
    for number, sts in parts.items():
        kind = sts[0].kind
        rows = [r for st in sts for r in statement_rows(st)]
        reason = next((why for st in sts if (why := _section_sums(st))), None)
        if reason is None and kind is StatementKind.BALANCE:
            reason = _balance(rows)
        if reason is None and kind is StatementKind.CASH_FLOWS:
            reason = _cash_flows(rows)
        if reason is None and kind is StatementKind.EQUITY:
            reason = _roll_forward(rows)
        if reason is not None:
            pages = "-".join(dict.fromkeys(str(st.page) for st in sts))
            out[number] = Failure(kind, number, pages, reason)
    return out
