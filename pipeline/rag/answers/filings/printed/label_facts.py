"""Facts of a printed statement's rows that name no line item of the vocabulary, for a
filing with no tagged facts (a PDF): "Goodwill", "Interest expense", "Stock-based
compensation". Each row's figures stand under a concept named by its label ("Goodwill" ->
`pdf:Goodwill`), which the filing's own labels then match as an inline-XBRL filing's
concepts are (`measure_match.labelled_items`), save that a label may hold no word the
question does not say.

A row read as an item with a word narrowing it ("Total automotive revenues", a row of revenue
whose figure is not the company's revenues) gives its label's fact too, for a question naming
it so. Only the primary statements give them (a balance sheet's rows are balances, an income or
cash flow statement's flows; a statement of equity's rows are neither), and only figures
whose sign is not in doubt: a printed "(1,269)" may be a deduction the taxonomy tags as a
positive amount (interest expense, treasury stock) or a negative figure (a loss), so a
negative cell gives none, save an income statement's expense or cost and a cash flow
statement's payment, which the taxonomy tags positive (read without the parentheses).
Rows naming shares (counts) or a par value or with a figure in their label ("net of tax of
$22") give none either: their cells are not what the label's words name. Nor does a label
printed twice in the statement ("Deferred revenue" under current and under non-current
liabilities): each row is a part of what its name asks.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from pipeline.rag.answers.filings.fact_labels import split_name
from pipeline.rag.answers.filings.measure_match import PRINTED
from pipeline.rag.answers.filings.printed.cell_facts import table_fact
from pipeline.rag.answers.filings.printed.statement_rows import StatementTable, clean_label
from pipeline.rag.answers.measure_modifiers import measure_modifiers
from pipeline.rag.answers.tables.column_periods import header_rows
from pipeline.rag.answers.tables.row_items import EXPENSES_SECTION, match_row, per_share_row
from pipeline.rag.answers.vocabulary.line_items import Kind, LineItem
from retriever_trt.documents.model import Fact
from retriever_trt.documents.pdf.pdf_statements import StatementKind

KINDS = {StatementKind.BALANCE: Kind.BALANCE, StatementKind.INCOME: Kind.FLOW,
         StatementKind.COMPREHENSIVE: Kind.FLOW, StatementKind.CASH_FLOWS: Kind.FLOW}
_WORD = re.compile(r"[A-Za-z]+")
_EXPENSE = re.compile(r"\b(?:expenses?|costs?)\b", re.I)
_NOT_EXPENSE = re.compile(r"\b(?:income|gains?|benefits?|revenues?|credits?)\b", re.I)
_PAYMENT = re.compile(r"^\s*(?:payments?|purchases?|repurchases?|repayments?|dividends paid|"
                      r"acquisitions?|additions?|capital expenditures)\b", re.I)
_UNREAD = re.compile(r"\d|\bshares\b|\bpar value\b", re.I)
# The id of a row's label fact where the row is read as an item too: its cell gives both.
LABEL_SUFFIX = ":label"


def label_concept(label: str, section: str = "") -> str | None:
    """The concept a row's label names ("Interest expense (Note 6)" -> pdf:InterestExpense).
    A row under an expenses section is an expense its label need not say: eBay's "Sales and
    marketing" under "Operating expenses:" is pdf:SalesAndMarketingExpense, as the taxonomy
    names it."""
    words = _WORD.findall(re.sub(r"\([^)]*\)", " ", clean_label(label)))
    if words and EXPENSES_SECTION.search(section) and not _EXPENSE.search(label) and \
            not _NOT_EXPENSE.search(label):
        words.append("Expense")
    return PRINTED + "".join(w.capitalize() for w in words) if words else None


def _outflow(kind: StatementKind, label: str) -> bool:
    """Whether a row is an amount the taxonomy tags positive however it is printed: an
    income statement's expense or cost (not "Other income (expense), net"), a cash flow
    statement's payment ("Purchases of ...", "Repayments of ...", "Dividends paid",
    "Acquisitions of wireless licenses")."""
    if kind is StatementKind.INCOME:
        return bool(_EXPENSE.search(label)) and not _NOT_EXPENSE.search(label)
    return kind is StatementKind.CASH_FLOWS and bool(_PAYMENT.match(label))


def label_facts(st: StatementTable) -> Iterator[tuple[Fact, tuple[str, int, int]]]:
    """(fact, its cell) for each row of the statement table that names no vocabulary item."""
    kind = KINDS.get(st.kind)
    if kind is None:
        return
    table = st.table
    cells = {(c.row_index, c.column_index): c for c in table.numeric_cells()}
    body = range(header_rows(table), len(table.rows))
    printed = Counter(label_concept(table.row_labels[i], table.parents[i]) for i in body)
    for i in body:
        label, section = table.row_labels[i], table.parents[i]
        concept = label_concept(label, section)
        row = match_row(label, section)
        if concept is None or printed[concept] > 1 or _UNREAD.search(label) or \
                per_share_row(label, section) or row is not None and \
                not measure_modifiers(clean_label(label), row.item):
            continue
        outflow = _outflow(st.kind, split_name(concept))
        item = LineItem(clean_label(label).lower(), (concept,), kind, outflow=outflow)
        for j, period in enumerate(st.periods):
            cell = cells.get((i, j))
            if period is None or cell is None or cell.value.percent or \
                    cell.value.number < 0 and not outflow:
                continue
            if not (period.shows_balances() if kind is Kind.BALANCE else period.months):
                continue
            fact_id = f"{st.chunk_id}:{i}:{j}" + (LABEL_SUFFIX if row is not None else "")
            yield table_fact(item, cell, period, table.scale, fact_id, False), \
                (st.chunk_id, i, j)
