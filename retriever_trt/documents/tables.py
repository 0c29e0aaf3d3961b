"""Financial tables parsed into cells: row and column headers, exact values, the table's scale.

A TAT-QA table is a list of rows of strings whose leading rows are headers (years, periods,
labels; a label spanning several columns is written once, in its first column) and whose
body rows start with a label. Rows that carry a label and no values are section headers
(e.g. "Current assets:"): the rows under them get it as their `parent`. Values are kept as
`Decimal` so sums and differences are exact; "(1,234)" is -1234, "—" and "-" are empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from retriever_trt.documents.years import year_run, years_in

SCALES = ("", "thousand", "million", "billion")
# Scale words as reports write them: "(in thousands)", "$'000", "$m", "$ million", "in
# millions of euros", "(in 000’s)", "Number of shares (1,000)".
_SCALE_PATTERNS = (
    ("billion", re.compile(r"\bin\s*billions?\b|\(\s*billions?|(?<![a-z])(?:us)?[$£€]\s?bn\b|"
                           r"\bbillions\b|['’]\s?billion", re.I)),
    ("million", re.compile(r"\bin\s*millions?\b|\(\s*millions?|\bmillions\s+of\b|"
                           r"(?<![a-z])(?:us|a|c|hk|rmb|r)?[$£€]\s?m(?:illions?)?\b|\bmillions\b|"
                           r"['’]\s?million\b|\brmb\s?million\b|'000,000", re.I)),
    ("thousand", re.compile(r"\bin\s*thousands?\b|\(\s*thousands?|\bthousands\s+of\b|"
                            r"[$£€]?\s?['’‘]\s?000s?\b|\$\s?000s?\b|\bthousands\b|\b000['’]?s\b|"
                            r"(?<![$\d])\(\s*1,000s?\s*\)",
                            re.I)),
)
# A rate's denominator names no scale: "emissions per $ million of revenue", "cost per
# thousand impressions".
_PER_SCALE = re.compile(r"\bper\s+(?:(?:us)?[$£€]\s?)?(?:thousand|million|billion|m|bn|000)\b",
                        re.I)
# "$24.2 million of net income" beside a table cell 24,193: the table is in thousands.
_MENTION = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion)\b", re.I)
_STEP = {"thousand": 1, "million": 2, "billion": 3}
_EMPTY = {"", "-", "—", "–", "--", "— %", "—%", "n/a", "na", "nm", "n.m.", "*", "none", "nil"}
# A footnote mark after a figure, set off by a space: "(1)", "(a)", "(iv)", "*".
_FOOTNOTE_MARK = re.compile(r"(?<=[\d%)])\s+(?:\((?:\d|[a-z]|[ivx]{1,4})\)|\*{1,3})$")
_NUMBER = re.compile(r"^\(?-?\(?\d[\d,]*(?:\.\d+)?\)?$|^\(?-?\(?\.\d+\)?$")


# Distinct cell texts remembered: the same figures and markers recur across a filing's tables.
VALUE_CACHE = 65536


@dataclass(frozen=True)
class Value:
    """A cell's number: `number` is signed and unscaled (as written), `percent` if "%"."""

    number: Decimal
    percent: bool = False


@lru_cache(maxsize=VALUE_CACHE)
def parse_value(text: str) -> Value | None:
    """The number a cell holds, or None for text and empty markers.

    Handles currency signs and codes, thousands separators, "(1,234)" and "-1,234" negatives,
    "$ (12)", "12.5%", "12.5 %", and a trailing footnote mark: "$130,000 (1)", "6,320 (a)".
    """
    s = _FOOTNOTE_MARK.sub("", " ".join(text.split()).strip())
    if s.lower() in _EMPTY:
        return None
    percent = s.endswith("%")
    s = s.rstrip("%").strip()
    s = re.sub(r"^(?:US\$|A\$|C\$|S\$|HK\$|RMB|USD|EUR|GBP|\$|€|£|¥|R)\s*", "", s)
    s = re.sub(r"^\(\s*(?:\$|€|£)\s*", "(", s)
    s = s.replace(" ", "").replace("$", "").replace("€", "").replace("£", "")
    s = s.replace("−", "-").replace("–", "-")
    if not s or not _NUMBER.match(s):
        return None
    negative = s.startswith("(") and s.endswith(")") or s.startswith("-") or s.startswith("(-")
    digits = s.strip("()-").replace(",", "")
    try:
        number = Decimal(digits)
    except InvalidOperation:
        return None
    return Value(-number if negative else number, percent)


def scale_from_mentions(values: list[Decimal], paragraphs: Sequence[str]) -> str:
    """The scale under which the paragraphs' "$24.2 million" equals a table value (24,193
    read in thousands), when the table names no scale itself; "" when none agrees."""
    votes: dict[str, int] = {}
    table = {abs(v) for v in values if abs(v) >= 10}
    for text in paragraphs:
        for number, word in _MENTION.findall(text):
            amount = Decimal(number.replace(",", ""))
            step = _STEP[word.lower()]
            places = Decimal(1).scaleb(min(0, amount.as_tuple().exponent))
            for k in range(step + 1):  # the table's unit is 1000**k
                shift = Decimal(1000) ** (step - k)
                if any((v / shift).quantize(places) == amount for v in table):
                    votes[SCALES[k]] = votes.get(SCALES[k], 0) + 1
    return max(votes, key=votes.__getitem__) if votes else ""


def detect_scale(*texts: str) -> str:
    """TAT-QA's scale word ("thousand", "million", "billion" or "") named in `texts`, first
    text first: a table's own header beats its paragraphs."""
    for text in (_PER_SCALE.sub(" ", t) for t in texts):
        for name, pattern in _SCALE_PATTERNS:
            if pattern.search(text):
                return name
    return ""


@dataclass(frozen=True)
class Cell:
    row_index: int
    column_index: int
    row: str            # the row's label
    parent: str         # the section row above it ("" when none)
    column: str         # the column's header text, header rows joined
    text: str           # the cell as written
    value: Value | None


@dataclass
class Table:
    rows: list[list[str]]
    n_header: int
    column_headers: list[str]
    column_years: list[list[int]]
    row_labels: list[str]
    parents: list[str]
    scale: str
    cells: list[Cell] = field(default_factory=list)
    levels: list[int] = field(default_factory=list)  # row label indents, where printed

    def body(self) -> range:
        return range(self.n_header, len(self.rows))

    def cell(self, row_index: int, column_index: int) -> Cell | None:
        for c in self.cells:
            if c.row_index == row_index and c.column_index == column_index:
                return c
        return None

    def numeric_cells(self) -> list[Cell]:
        return [c for c in self.cells if c.value is not None]

    def to_dict(self) -> dict[str, list[list[str]]]:
        return {"rows": self.rows}


def _clean(rows: list[list[object]]) -> list[list[str]]:
    out = [[" ".join(str(c).split()) for c in r] for r in rows]
    width = max((len(r) for r in out), default=0)
    return [r + [""] * (width - len(r)) for r in out]


def _is_header_row(row: list[str], first: bool) -> bool:
    """A header row names columns: its value cells are text, years or dates, not amounts."""
    values = [c for c in row[1:] if c]
    if not values:
        return not row[0] or first
    for c in values:
        v = parse_value(c)
        if v is not None and not (years_in(c) and v.number == int(years_in(c)[0])):
            return False
    return not row[0] or first or all(not parse_value(c) or years_in(c) for c in values)


def _header_count(rows: list[list[str]], paragraphs: Sequence[str]) -> int:
    """The header rows: the first always, save a labelled row of amounts under a caption
    that gives the columns' years (a printed table whose header line the reader took as its
    caption: AES's "Selected Financial Data 2020 2019 2018 2017 2016" over "Revenue $ 9,660
    ...")."""
    if rows[0][0] and not _is_header_row(rows[0], True) and \
            any(year_run(p, len(rows[0]) - 1) for p in paragraphs[:1]):
        return 0
    n = 1
    while n < min(len(rows) - 1, 4) and _is_header_row(rows[n], False):
        n += 1
    return n


def _column_headers(rows: list[list[str]], n_header: int, width: int) -> list[str]:
    """Each column's header rows joined; a label written once over several columns (left
    cell filled, the ones right of it empty, with a lower header row under them) covers
    them all."""
    columns = [[] for _ in range(width)]
    for r in range(n_header):
        row = rows[r]
        spanning = r < n_header - 1
        current = ""
        for j in range(width):
            text = row[j]
            if text:
                current = text
            elif spanning and j > 0 and current and any(rows[k][j] for k in range(r + 1, n_header)) \
                    and (years_in(current) or not any(years_in(rows[k][j])
                                                       for k in range(r + 1, n_header))):
                # A label spans the columns under it, but not onto another period's column.
                text = current
            else:
                current = "" if text == "" and not spanning else current
            if text and (not columns[j] or columns[j][-1] != text):
                columns[j].append(text)
    return [" ".join(parts) for parts in columns]


def _name_totals(labels: list[str], cells: list[Cell], n_header: int) -> None:
    """Label "Total" a row without a label whose values are the sums of the value rows above
    it (up to the previous total): reports often leave a total's label out."""
    by_row: dict[int, dict[int, Decimal]] = {}
    for c in cells:
        if c.value is not None and not c.value.percent:
            by_row.setdefault(c.row_index, {})[c.column_index] = c.value.number
    start = n_header
    for i in range(n_header, len(labels)):
        if labels[i].strip() or i not in by_row:
            continue
        above = [by_row[k] for k in range(start, i) if k in by_row]
        sums = {j: sum((r.get(j, Decimal(0)) for r in above), Decimal(0)) for j in by_row[i]}
        if len(above) >= 2 and all(abs(sums[j] - v) <= 1 for j, v in by_row[i].items()):
            labels[i] = "Total"
            for k, c in enumerate(cells):
                if c.row_index == i:
                    cells[k] = Cell(c.row_index, c.column_index, "Total", c.parent, c.column,
                                    c.text, c.value)
        start = i + 1


def _percent_columns(cells: list[Cell]) -> list[Cell]:
    """A column whose first and last figures print "%" holds percentages in the rows
    between too: filings print the sign on a column's first and total rows only, as they do
    "$" (Coca-Cola's operating income "on a percentage basis": "41.3 %", "37.8", ...,
    "100.0 %"). A bare figure there printing "$" is an amount, and the column is left."""
    by_column: dict[int, list[Cell]] = {}
    for c in cells:
        if c.value is not None:
            by_column.setdefault(c.column_index, []).append(c)
    bare: set[tuple[int, int]] = set()
    for column in by_column.values():
        column.sort(key=lambda c: c.row_index)
        inner = column[1:-1]
        if len(column) > 2 and column[0].value.percent and column[-1].value.percent and \
                not any("$" in c.text for c in inner):
            bare.update((c.row_index, c.column_index) for c in inner if not c.value.percent)
    return [replace(c, value=Value(c.value.number, True))
            if (c.row_index, c.column_index) in bare else c for c in cells]


# "Total" before the name of the block a total closes.
_TOTAL_OF = re.compile(r"^total\s+", re.I)


def _heading(row: list[str]) -> bool:
    """A label with no cells: a section heading ("Current assets:")."""
    return bool(row[0]) and not any(row[1:])


def _section_parents(clean: list[list[str]], n_header: int) -> list[str]:
    """Each body row's section: the heading row above it, up to the next heading."""
    parents, parent = [], ""
    for i, row in enumerate(clean):
        if i >= n_header and _heading(row):
            parent = row[0].rstrip(":")
            parents.append("")
            continue
        parents.append(parent if i >= n_header else "")
    return parents


def _indented_parents(clean: list[list[str]], n_header: int, levels: list[int]) -> list[str]:
    """Each body row's parent by indentation: the nearest open heading above it. A heading's
    block is the rows at the indent of its first row or deeper (a heading whose rows are not
    indented keeps them at its own); a row further left ends it, and so does the next
    heading at its indent or left of it. A total naming an open heading ("Total current
    assets") is that heading's last row, wherever it is set."""
    parents = [""] * len(clean)
    open_: list[list] = []  # headings whose block goes on: [name, level, first row's level]
    for i in range(n_header, len(clean)):
        row, level = clean[i], levels[i]
        heading = _heading(row)
        named = _TOTAL_OF.sub("", row[0]).lower() if _TOTAL_OF.match(row[0]) else None
        closes = next((k for k in range(len(open_) - 1, -1, -1)
                       if open_[k][0].lower() == named), None)
        if closes is not None:
            parents[i] = open_[closes][0]
            del open_[closes:]
            continue
        while open_ and (level < open_[-1][1] or (heading and level == open_[-1][1]) or (
                open_[-1][2] is not None and level < open_[-1][2])):
            open_.pop()
        if open_ and open_[-1][2] is None:
            open_[-1][2] = level
        parents[i] = open_[-1][0] if open_ else ""
        if heading:
            open_.append([row[0].rstrip(":"), level, None])
    return parents


def parse_table(rows: list[list[object]], paragraphs: list[str] = (),  # type: ignore[assignment]
                levels: list[int] | None = None) -> Table:
    """Parse `rows` (header rows first) into cells; the scale comes from the header text,
    the row labels, then the paragraphs ("(in thousands)", "$'000", "in millions").
    `levels`: each row's label indentation (a printed table's), which then gives each row's
    parent; without it a row's parent is the heading row above it."""
    clean = _clean(rows)
    if not clean:
        return Table([], 0, [], [], [], [], "")
    width = len(clean[0])
    n_header = _header_count(clean, paragraphs) if len(clean) > 1 else len(clean)
    headers = _column_headers(clean, n_header, width)
    labels = [row[0] if i >= n_header else "" for i, row in enumerate(clean)]
    indented = levels is not None and len(levels) == len(clean)
    parents = _indented_parents(clean, n_header, levels) if indented else \
        _section_parents(clean, n_header)
    cells = []
    for i in range(n_header, len(clean)):
        for j in range(1, width):
            text = clean[i][j]
            if text:
                cells.append(Cell(i, j, labels[i], parents[i], headers[j], text, parse_value(text)))
    cells = _percent_columns(cells)
    _name_totals(labels, cells, n_header)
    # a row of text alone under the years ("(in millions, except percentages)" centred in
    # Meta's segment table) is a header line the header count stopped above
    header_text = " ".join(" ".join(r) for r in clean[:n_header]) + " " + " ".join(
        " ".join(r) for r in clean[n_header:]
        if not r[0] and all(parse_value(c) is None for c in r[1:]))
    label_text = " ".join(r[0] for r in clean[n_header:])
    scale = detect_scale(header_text, label_text, *paragraphs) or scale_from_mentions(
        [c.value.number for c in cells if c.value and not c.value.percent], paragraphs)
    return Table(clean, n_header, headers, [years_in(h) for h in headers], labels, parents,
                 scale, cells, list(levels) if indented else [])


def transpose(table: Table) -> Table | None:
    """The table read the other way round, for tables whose rows are the periods ("Balance
    at June 30, 2019" rows under "Workforce reduction" columns); None when fewer than two
    row labels name a year. Cell (r, c) of the result is cell (body[c - 1], r) of `table`."""
    body = list(table.body())
    if sum(bool(years_in(table.row_labels[i])) for i in body) < 2:
        return None
    width = len(table.column_headers)
    labels = [table.row_labels[i] for i in body]
    rows = [["", *labels]] + [[table.column_headers[j], *(table.rows[i][j] for i in body)]
                              for j in range(1, width)]
    cells = [Cell(j, k + 1, table.column_headers[j], "", labels[k], table.rows[i][j],
                  parse_value(table.rows[i][j]))
             for j in range(1, width) for k, i in enumerate(body) if table.rows[i][j]]
    return Table(rows, 1, ["", *labels], [[], *(years_in(x) for x in labels)],
                 ["", *table.column_headers[1:]], [""] * width, table.scale, cells)


def period_blocks(table: Table) -> tuple[Table, dict[tuple[int, int], tuple[int, int]]] | None:
    """The table with its period blocks as columns, for tables whose periods are sections
    ("As at 31 December 2019" rows over "USD denominated | Non-USD denominated" columns):
    one row a label, one column a (column, period), headed "USD denominated As at 31
    December 2019". None when a column names a year or fewer than two sections do. Also
    returns where each of its cells is in `table`: (row, column) -> (row, column)."""
    if any(table.column_years[1:]):
        return None
    blocks = list(dict.fromkeys(table.parents[i] for i in table.body()
                                if years_in(table.parents[i])))
    if len(blocks) < 2:
        return None
    at = {(table.row_labels[i], table.parents[i]): i for i in table.body()}
    labels = list(dict.fromkeys(label for label, block in at if block in blocks))
    columns = [(j, b) for b in blocks for j in range(1, len(table.column_headers))]
    headers = ["", *(f"{table.column_headers[j]} {b}".strip() for j, b in columns)]
    rows, cells, origin = [headers], [], {}
    for r, label in enumerate(labels, start=1):
        row = [label]
        for c, (j, b) in enumerate(columns, start=1):
            i = at.get((label, b))
            text = table.rows[i][j] if i is not None else ""
            row.append(text)
            if text:
                cells.append(Cell(r, c, label, "", headers[c], text, parse_value(text)))
                origin[(r, c)] = (i, j)
        rows.append(row)
    pivot = Table(rows, 1, headers, [[], *(years_in(b) for _, b in columns)], ["", *labels],
                  [""] * len(rows), table.scale, cells)
    return pivot, origin
