"""The period each column of a printed statement table shows, read from its header rows.

A printed filing writes a column's period across several header rows, and a label often
spans several columns without saying which ("Three Months Ended June 30," over "2025" and
"2024", then "Six Months Ended June 30," over two more; "Years ended" centred over three
dates). Each column keeps the year it shows itself; the period length ("three months",
"quarter", "years ended", "26 weeks") and the month and day ("June 30,") come from its own
header cells, else from the header labels spread over the dated columns: one label covers
them all, k labels over a multiple of k columns cover equal groups in order, otherwise each
column takes the nearest label. Then the caption ("for the years ended September 28,
2024"). A column with no single year (a "% of sales" column) shows no period.

A column with a year and nothing else ("2024", "Fiscal 2024") in an annual report is that
fiscal year: it ends where the filing's own year ends, shifted by whole years (Home Depot's
fiscal 2024 ended February 2, 2025), and shows both the year's flows and its closing
balances. In a quarterly report it is the calendar year its period ends in, on the
filing's own month and day. Elsewhere a column with no length shows a balance date.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from retriever_trt.documents.filing.metadata import MONTHS
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.documents.tables import Table, parse_value
from retriever_trt.documents.years import year_run, years_in

# A month named in full or cut to three letters ("Jan 26, 2025", "Sept. 28"), then its day.
_MONTH_DAY = re.compile(r"\b(" + "|".join(MONTHS) + r"|(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|"
                        r"nov|dec)\.?)\s+(\d{1,2})\b", re.I)
MAX_DAY = 31
_MONTH_OF = {name[:3]: n for name, n in MONTHS.items()}
_COUNT = {"three": 3, "six": 6, "nine": 9, "twelve": 12}
# Retailers' and some manufacturers' periods are weeks: 13, 26, 39 and 52 or 53 of them.
_WEEKS = {13: 3, 26: 6, 39: 9, 52: 12, 53: 12}
_LENGTH = re.compile(r"\b(three|six|nine|twelve|\d{1,2})[\s-]+(months?|weeks?)\s+ended\b|"
                     r"\b(quarters?|years?)\s+ended\b", re.I)


@dataclass(frozen=True)
class ColumnPeriod:
    """A column's period: its end, and its length in months (None: a balance date).
    `fiscal_year`: a column naming only a fiscal year, whose balances at `end` it shows too."""

    end: date
    months: int | None
    fiscal_year: bool = False

    def shows_balances(self) -> bool:
        return self.months is None or self.fiscal_year

    def first_day(self) -> date | None:
        """A flow's first day: the day after the end, `months` calendar months back (None
        for a balance date)."""
        if self.months is None:
            return None
        after = self.end + timedelta(days=1)
        month = after.month - 1 - self.months
        year, month = after.year + month // 12, month % 12 + 1
        return date(year, month, min(after.day, calendar.monthrange(year, month)[1]))


def period_length(text: str) -> int | None:
    """The months of the first period length the text names, or None."""
    for m in _LENGTH.finditer(text):
        if m.group(3):
            return 3 if m.group(3).lower().startswith("quarter") else 12
        word = m.group(1).lower()
        n = int(word) if word.isdigit() else _COUNT[word]
        months = _WEEKS.get(n) if m.group(2).lower().startswith("week") else n
        if months in (3, 6, 9, 12):
            return months
    return None


def month_day(text: str) -> tuple[int, int] | None:
    m = _MONTH_DAY.search(text)
    return (_MONTH_OF[m.group(1).lower().rstrip(".")[:3]], int(m.group(2))) if m else None


def spread(marks: list[tuple[int, object]], columns: list[int]) -> dict[int, object]:
    """Header labels (column, value) assigned to the dated columns (see the module doc)."""
    if not marks:
        return {}
    if len(marks) == 1:
        return {j: marks[0][1] for j in columns}
    if len(columns) % len(marks) == 0:
        size = len(columns) // len(marks)
        return {j: marks[k // size][1] for k, j in enumerate(columns)}
    return {j: min(marks, key=lambda m: (abs(m[0] - j), m[0]))[1] for j in columns}


def _date(year: int, md: tuple[int, int]) -> date | None:
    try:
        return date(year, *md)
    except ValueError:  # 29 February of another year
        return date(year, md[0], 28) if md[0] == 2 else None


def _fiscal_year_end(year: int, filing: DocumentMetadata | None) -> date | None:
    """The end of fiscal `year`, from the filing's own year and period end."""
    if filing is None or filing.period_end is None or filing.fiscal_year is None:
        return None
    end = filing.period_end
    return _date(end.year - (filing.fiscal_year - year), (end.month, end.day))


def _day_or_year(text: str) -> bool:
    v = parse_value(text)
    return v is not None and "$" not in text and v.number == v.number.to_integral_value() and (
        1 <= v.number <= MAX_DAY or bool(years_in(text)))


def header_rows(table: Table) -> int:
    """How many leading rows name the columns: the table's own count, or more where a row
    of bare day numbers under "Three Months Ended March" was read as the first body row
    (rows up to the first with a label and no values, or with an amount)."""
    for r in range(table.n_header, len(table.rows)):
        values = [c for c in table.rows[r][1:] if parse_value(c) is not None]
        if not values and table.rows[r][0] or any(not _day_or_year(c) for c in values):
            return r
    return table.n_header


def _caption_years(caption: str, width: int) -> dict[int, int]:
    """The years of a table with none in its header rows, from its caption's run of as many
    years as the table has value columns (its header line read as the caption)."""
    years = year_run(caption, width - 1)
    return {j + 1: y for j, y in enumerate(years)} if years else {}


def column_periods(table: Table, caption: str = "",
                   filing: DocumentMetadata | None = None) -> list[ColumnPeriod | None]:
    """One entry a column of `table` (None for the label column and undated columns)."""
    width = len(table.column_headers)
    cells = [[table.rows[r][j] for r in range(header_rows(table))] for j in range(width)]
    own_year: dict[int, int] = {}
    for j in range(1, width):
        years = set(years_in(" ".join(cells[j])))
        if len(years) == 1:
            own_year[j] = years.pop()
    if not own_year:
        own_year = _caption_years(caption, width)
    dated = sorted(own_year)
    lengths = spread([(j, n) for j in range(1, width) for c in cells[j]
                       if (n := period_length(c)) is not None], dated)
    days = spread([(j, md) for j in range(1, width) for c in cells[j]
                    if (md := month_day(c)) is not None], dated)
    table_wide = " ".join([*cells[0], caption])
    default_length = period_length(table_wide)
    default_day = month_day(table_wide)
    out: list[ColumnPeriod | None] = [None] * width
    for j in dated:
        own = " ".join(cells[j])
        months = period_length(own) or lengths.get(j) or default_length
        md = month_day(own) or days.get(j) or default_day
        if md is not None:
            end = _date(own_year[j], md)
            out[j] = ColumnPeriod(end, months) if end else None
        elif months is None and filing is not None and filing.form.is_annual:
            end = _fiscal_year_end(own_year[j], filing)
            out[j] = ColumnPeriod(end, 12, fiscal_year=True) if end else None
        elif filing is not None and filing.period_end is not None:
            # A quarter's column names the calendar year its period ends in.
            end = _date(own_year[j], (filing.period_end.month, filing.period_end.day))
            out[j] = ColumnPeriod(end, months) if end else None
    return out


def text_period(text: str, filing: DocumentMetadata | None = None) -> ColumnPeriod | None:
    """The period one heading names ("Year Ended December 31, 2024", "As of December 31,
    2024"; a fiscal year alone in an annual filing), or None."""
    years = set(years_in(text))
    if len(years) != 1:
        return None
    year, months, md = years.pop(), period_length(text), month_day(text)
    if md is not None:
        end = _date(year, md)
        return ColumnPeriod(end, months) if end else None
    if months in (None, 12) and filing is not None and filing.form.is_annual:
        end = _fiscal_year_end(year, filing)
        return ColumnPeriod(end, 12, fiscal_year=True) if end else None
    return None
