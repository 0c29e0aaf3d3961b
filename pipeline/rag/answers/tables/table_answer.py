"""Answer a question from a parsed table: find the operand cells, then compute.

Rows are found by the words of their labels (and their section's) in the question, columns
by the years or header words the question names. Nothing is guessed: when an operand is
missing, or a row matches too weakly, the answer is None and the caller says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from decimal import Decimal

from pipeline.rag.answers.arithmetic import NoAnswer, compute, plain
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.question import Question
from pipeline.rag.answers.tables.cell_kinds import MixedKinds, check_same_kind
from pipeline.rag.answers.tables.operand_rows import best_row, one_row_two_columns
from pipeline.rag.answers.tables.table_cells import figure, figure_columns, header_words, is_year_figure
from pipeline.rag.answers.tables.table_rows import (
    ROW_LIST_BASE,
    SECTION_BONUS,
    extreme_row,
    label_tokens,
    listed_rows,
    row_labels,
)
from pipeline.rag.answers.tables.table_totals import measure_parts, section_parts
from retriever_trt.documents.tables import Cell, Table, detect_scale

# A lookup that names no period or column must match its row this well: most such
# questions are about the text ("What are distribution customers?").
MIN_PLAIN_LOOKUP = 0.9
_EXPLICIT_SUM = re.compile(r"\bsum\b|\bcombined\b|\baltogether\b|\bin total\b|\btotal (?:of|amount of)\b|"
                           r"\bboth\b|\ball (?:\w+ )?(?:years|periods)\b|\bbetween\b", re.I)
_UNSCALED = re.compile(r"per (?:common |ordinary |diluted |basic )?share|per unit|\bcents?\b|"
                       r"\beps\b|\bratio\b|\bdays\b|\bnumber of\b|\bheadcount\b|"
                       r"\bemployees\b|\bpence\b|\bmultiple\b|\(x\)|\btimes\b", re.I)
# A header naming a comparison, not a period: "% Change 2018 to 2019", "2019 vs 2018".
_COMPARISON = re.compile(r"change|variance|\bvs\.?\b|versus|increase|decrease|\bto\b", re.I)
# A header naming an adjustment or a pro-forma figure under a date: "As of February 28,
# 2019 | ASC 606 Adjustments", "... Without ASC 606 Adoption". Not the period's figure,
# unless the question asks for it in those words.
_ADJUSTMENT = re.compile(r"\badjust\w*|\bwithout\b|\bimpacts?\b|\beffects?\b", re.I)
# What a years-past-a-threshold answer loses in its match when the threshold does not split
# the row's years (matches are 0..~1.2): more than any two tables' matches differ.
UNSPLIT_PENALTY = 0.5
_SCALE_WORDS = {"thousand": Decimal(1000), "million": Decimal(10) ** 6,
                "billion": Decimal(10) ** 9}


@dataclass
class TableAnswer:
    short_answer: str | list[str]
    scale: str
    answer_type: str
    derivation: str | None
    cells: list[Cell] = field(default_factory=list)
    score: float = 0.0
    table_index: int = 0
    # The answers of other tables whose rows, columns and years fit the question exactly as
    # well and that say otherwise: the caller names them rather than pick one silently.
    tied: list[TableAnswer] = field(default_factory=list)


def _year_columns(table: Table, question: Question) -> list[int]:
    asked = question.text.lower()
    return [j for j in range(1, len(table.column_headers)) if table.column_years[j]
            and not _COMPARISON.search(table.column_headers[j])
            and all(m.group(0).lower() in asked
                    for m in _ADJUSTMENT.finditer(table.column_headers[j]))]


def _column_for_year(table: Table, year: int, question: Question) -> list[int]:
    candidates = [j for j in _year_columns(table, question) if year in table.column_years[j]]
    if len(candidates) <= 1:
        return candidates
    words = set(question.words)
    wants_percent = question.percent_operand

    def rank(j: int) -> tuple[bool, int, int]:
        # A percent column answers only a question that asks a percent: "the average total
        # cost of revenue" is the Amount column's, not "% of total revenue", whose header
        # words the question happens to use.
        head = header_words(table.column_headers[j])
        pct = "%" in table.column_headers[j] or any(
            c.value and c.value.percent for c in table.cells if c.column_index == j)
        return (pct == wants_percent, len(head & words), -j)

    return sorted(candidates, key=rank, reverse=True)


def _columns(table: Table, question: Question, n: int | None = None) -> list[int] | None:
    """The columns of the periods the question names, in the question's order; without
    years, the columns whose header words it uses, else the `n` latest year columns."""
    span = question.year_range if question.operation.over_years else None
    if span:
        inside = [j for j in _year_columns(table, question)
                  if span[0] <= max(table.column_years[j]) <= span[1]]
        firsts = {max(table.column_years[j]): j for j in reversed(inside)}
        if len(firsts) > 2:  # "for fiscal years 2019 to 2017": in the order the question reads
            named = question.years_in_order
            return [firsts[y] for y in sorted(firsts, reverse=named[0] > named[-1])]
    if question.years:
        cols = []
        for y in question.years_in_order:
            found = _column_for_year(table, y, question)
            if not found:
                return None
            if found[0] not in cols:
                cols.append(found[0])
        return cols
    words = set(question.words)
    named = [j for j in range(1, len(table.column_headers))
             if header_words(table.column_headers[j]) & words]
    if named and (n is None or len(named) == n):
        return named
    years = _year_columns(table, question)
    if not years:
        numeric = figure_columns(table)
        return numeric[:n] if n and len(numeric) >= n else (numeric[:1] if n in (None, 1) else None)
    ordered = sorted(years, key=lambda j: max(table.column_years[j]), reverse=True)
    seen, picked = set(), []
    for j in ordered:
        y = max(table.column_years[j])
        if y not in seen:
            seen.add(y)
            picked.append(j)
    if n is None:
        return picked
    return picked[:n] if len(picked) >= n else None


def _names_column(table: Table, q: Question, cols: list[int]) -> bool:
    """Whether the question names the column by its header's words ("the gross carrying
    amount for current receivables": "Current"), which makes a lookup as specific as a year."""
    words = set(q.words)
    return any(header_words(table.column_headers[j]) & words for j in cols)


def _with_prior_year(table: Table, q: Question) -> list[int] | None:
    """The columns of the year before the one the question names and of that year."""
    this = _column_for_year(table, q.years[0], q)
    prior = _column_for_year(table, q.years[0] - 1, q)
    return [prior[0], this[0]] if this and prior else None


def _scale(table: Table, cells: list[Cell], question: Question) -> str:
    # A figure the question calls a percentage ("the change in percentage of sales
    # represented by gross profit") is one, though a "% of sales" table may print no sign.
    if question.percent_operand or any(c.value and c.value.percent for c in cells) or any(
            "%" in c.column for c in cells):
        return "percent"
    # A scale the operands' own labels name ("Number of Shares (thousands)") is theirs,
    # whatever the table's and even for a count.
    own = {detect_scale(c.column, c.row) for c in cells}
    if len(own) == 1 and "" not in own:
        return own.pop()
    text = " ".join([question.text] + [c.row for c in cells])
    unscaled = _UNSCALED.search(text) or all(is_year_figure(c) for c in cells)
    return "" if unscaled else table.scale


def _threshold_in_table_units(table: Table, cells: list[Cell], q: Question) -> Decimal:
    """The question's threshold as the row's cells are written: "$1 million" is 1,000 in a
    table in thousands, so a cell of 1,900 exceeds it. A percentage, or a row the table's
    scale does not apply to (per share, counts), is compared as written."""
    number, unit = q.threshold
    written = Decimal(number.replace(",", ""))
    scale = _scale(table, cells, q)
    if unit == "%" or scale == "percent":
        return written
    return written * _SCALE_WORDS.get(unit.lower(), Decimal(1)) / _SCALE_WORDS.get(scale, Decimal(1))


def _past_threshold(table: Table, cells: list[Cell], q: Question) -> list[Cell]:
    """The cells above the question's threshold (below it, for "less than"), read in the
    units of the cells with figures; a dash is nil."""
    limit = _threshold_in_table_units(table, [c for c in cells if c.value], q)
    return [c for c in cells if (figure(c) > limit) == q.higher]


def _by_year(table: Table, cols: list[int]) -> list[int]:
    """Columns oldest first (by the latest year each names)."""
    return sorted(cols, key=lambda j: max(table.column_years[j] or [0]))


def answer_from_table(table: Table, question: Question,
                      refusals: list[str] | None = None) -> TableAnswer | None:
    """The answer from `table`, or None. An operand the question names that no table can
    have means None (a rule's bug raises: the pipeline's one safety net catches it). A
    computation refused because its operands are of different kinds adds its reason to
    `refusals`, for the prose to say."""
    if question.missing is not None:
        return None
    try:
        return _answer(table, question)
    except MixedKinds as exc:
        if refusals is not None:
            refusals.append(exc.reason)
        return None
    except NoAnswer:
        return None


def _answer(table: Table, q: Question) -> TableAnswer | None:
    op = q.operation
    if op == Operation.YEARS_LIST:
        years = [str(max(table.column_years[j])) for j in _year_columns(table, q)]
        years = list(dict.fromkeys(years))
        return TableAnswer(years, "", "multi-span", None) if years else None
    if op in (Operation.ROW_LIST, Operation.ROW_COUNT, Operation.WHICH_ROW):
        return _about_rows(table, q)
    if op in (Operation.WHICH_YEAR, Operation.COUNT):
        return _over_years(table, q)
    if op.two_rows and len(q.operands) == 2:
        if (across := one_row_two_columns(table, q)) is not None:
            return _finish(table, q, op, *across)
        cols = _columns(table, q, 1)
        if not cols:
            return None
        col = cols[-1] if len(cols) > 1 else cols[0]
        a = best_row(table, q.operands[0], [col])
        if a is None:
            return None
        b = best_row(table, q.operands[1], [col], exclude=(a[0],))
        if b is None:
            return None
        cells = [table.cell(a[0], col), table.cell(b[0], col)]
        return _finish(table, q, op, cells, min(a[1], b[1]))
    if op == Operation.SUM and q.of_all:
        parts = section_parts(table, q)
        return _finish(table, q, op, *parts) if parts else None
    if op == Operation.LOOKUP and len(q.years) >= 2:
        op = Operation.MULTI_LOOKUP  # "What was X in 2019 and 2018?"
    n = op.periods
    if op in (Operation.PROPORTION, Operation.RATIO, Operation.DIFFERENCE, Operation.TEXT):
        return None
    cols = _columns(table, q, n)
    if op in (Operation.CHANGE, Operation.PERCENT_CHANGE, Operation.AVERAGE) and len(q.years) == 1:
        # "the change in sales in 2019": from 2018; "the 2019 average receivables": of the
        # year's opening (2018's closing) and closing balances
        cols = _with_prior_year(table, q)
    if not cols or (n and len(cols) != n) or (op in (Operation.AVERAGE, Operation.SUM) and len(cols) < 2):
        return None
    if op == Operation.LOOKUP and (parts := measure_parts(table, q, cols)) is not None:
        return _finish(table, q, Operation.SUM, *parts)  # a total the table does not print
    # A dash is nil: "(228) | —" changed by -228 from nothing.
    row = best_row(table, q, cols, nil_ok=op == Operation.CHANGE)
    if row is None or (op == Operation.LOOKUP and not q.years and not _names_column(table, q, cols)
                       and row[1] < MIN_PLAIN_LOOKUP):
        return None
    if op in (Operation.CHANGE, Operation.PERCENT_CHANGE):
        cols = _by_year(table, cols) if all(table.column_years[j] for j in cols) else cols
    cells = [table.cell(row[0], j) for j in cols]
    if op == Operation.SUM and not _EXPLICIT_SUM.search(q.text) and re.search(r"\bTotal\b", q.text[1:]) \
            and "total" in label_tokens(cells[0].row):
        op = Operation.MULTI_LOOKUP  # "the Total operating expense in 2019 and 2018" quotes the row
    if op == Operation.MULTI_LOOKUP:
        return TableAnswer([plain(c.value.number) for c in cells], _scale(table, cells, q),
                           "multi-span", None, cells, row[1])
    return _finish(table, q, op, cells, row[1])


def _over_years(table: Table, q: Question) -> TableAnswer | None:
    """The year a row is highest / lowest in, or how many years it passes a threshold."""
    # Without years named, every year column is a candidate; the header words the question
    # uses ("Revenues" over only the first of its two years) choose among a year's columns.
    cols = (_columns(table, q) or []) if q.years else _year_columns(table, q)
    cols = [j for j in cols if table.column_years[j]]
    # one column a year: "2019 $" and "2019 %" are the same period
    per_year = {max(table.column_years[j]): j for j in reversed(cols)}
    # A column of a comparison header ("2019 vs 2018") has years but is no period.
    cols = [found[0] for y in sorted(per_year, reverse=True)
            if (found := _column_for_year(table, y, q))]
    # A year the row shows as a dash had none of it: nil is below any threshold.
    row = best_row(table, q, cols, nil_ok=True) if cols else None
    if row is None or len(cols) < 2:
        return None
    cells = [table.cell(row[0], j) for j in cols]
    if q.threshold:
        keep = _past_threshold(table, cells, q)
    else:
        pick = max if q.higher else min
        keep = [pick(cells, key=figure)]
    years = [str(max(table.column_years[c.column_index])) for c in keep]
    # A threshold no year of the row passes, or every year does, is likely another table's:
    # questions set it among the row's figures. The answer stands, but a table whose years
    # it splits wins.
    split = 0 < len(keep) < len(cells)
    score = row[1] - (UNSPLIT_PENALTY if q.threshold and not split else 0.0)
    if q.operation == Operation.COUNT:
        return TableAnswer(str(len(keep)), "", "count",
                           f"count of {', '.join(years) or 'none of the years'}", cells, score)
    return TableAnswer(years[0] if len(years) == 1 else years, "",
                       "span" if len(years) == 1 else "multi-span", None, cells, score)


def _about_rows(table: Table, q: Question) -> TableAnswer | None:
    """A row list, a row count, or the row highest / lowest in the period asked."""
    op = q.operation
    found = listed_rows(table, q, require_section=op != Operation.WHICH_ROW)
    if found is None:
        return None
    rows, hit = found
    score = ROW_LIST_BASE + SECTION_BONUS * hit
    if op == Operation.ROW_LIST:
        return TableAnswer(row_labels(table, rows), "", "multi-span", None, [], score)
    if op == Operation.ROW_COUNT and not q.threshold:
        labels = row_labels(table, rows)
        return TableAnswer(str(len(labels)), "", "count", f"count of {', '.join(labels)}", [],
                           score)
    cols = _columns(table, q, 1)
    if not cols:
        return None
    if op == Operation.ROW_COUNT:  # "How many segments in 2019 were above $50 million?"
        cells = [c for i in rows if (c := table.cell(i, cols[0])) is not None and c.value]
        if not cells:
            return None
        keep = [c.row for c in _past_threshold(table, cells, q)]
        return TableAnswer(str(len(keep)), "", "count",
                           f"count of {', '.join(keep) or 'none of the rows'}", cells, score)
    got = extreme_row(table, rows, cols[0], q.higher)
    if got is None:
        return None
    top, cells = got
    return TableAnswer(row_labels(table, [top.row_index])[0], "", "span", None, cells, score)


# A question asking what was paid or spent: a size, whatever sign the statement prints.
_ASKS_PAID = re.compile(r"\bhow much\b[^?]*\b(?:pay|paid|spend|spent)\b", re.I)


def _finish(table: Table, q: Question, op: str, cells: list[Cell], score: float) -> TableAnswer:
    check_same_kind(op, cells)
    values = [figure(c) for c in cells]
    if op == Operation.PROPORTION and values[0] * values[1] < 0:
        # a part the table prints as a deduction ("Depreciation (111)") is still that share
        # of its whole (EBITDA 372): 29.84%, not -29.84%
        values = [abs(v) for v in values]
    percent_cells = any(c.value and c.value.percent or "%" in c.column for c in cells)
    result = compute(op, values, percent=percent_cells)
    if q.magnitude and op in (Operation.CHANGE, Operation.DIFFERENCE) and result.value < 0:
        cells, values = cells[::-1], values[::-1]  # the larger first: the derivation shows it
        result = compute(op, values, percent=percent_cells)
    if op in (Operation.PERCENT_CHANGE, Operation.PROPORTION):
        scale = "percent"
    elif op == Operation.RATIO:
        scale = ""
    else:
        scale = _scale(table, cells, q)
    kind = "span" if op == Operation.LOOKUP else "arithmetic"
    if op == Operation.LOOKUP and result.value < 0 and _ASKS_PAID.search(q.text):
        # "How much did Clorox pay in dividends?": what was paid, which a cash flow
        # statement prints as a deduction "(571)"
        result = replace(result, value=-result.value)
    return TableAnswer(plain(result.value), scale, kind,
                       None if op == Operation.LOOKUP else result.derivation, cells, score)

