"""The periods a question names, read from its words: a fiscal year ("fiscal 2024", "FY24",
"in 2024", "its latest fiscal year", "full-year"), a quarter ("Q2 2025", "the second fiscal
quarter of 2025", "the quarter ended June 30, 2025", "the March 2025 quarter"), months to a
date ("the six months ended June 30, 2025", "the first nine months of fiscal 2025", "9M 2023",
"year-to-date through March 31, 2025") and a balance date ("as of December 31, 2024").
`parse_periods` gives them in the question's order; `query.parse_query` keeps the ones asked
as `Query.periods`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from enum import Enum

from pipeline.rag.answers.named_filing import QUARTER_WORDS
from pipeline.rag.answers.question_words import calendar_years, fiscal_years, named_dates, named_years
from retriever_trt.documents.filing.metadata import parse_date
from retriever_trt.documents.years import CENTURY

_QUARTER = re.compile(r"\bq([1-4])\b|\b(first|second|third|fourth|1st|2nd|3rd|4th) (?:fiscal )?quarter\b",
                      re.I)
# "six months ended June 30", "ending", "to June 30", "through June 30" (a date follows).
_MONTHS_ENDED = re.compile(r"\b(three|six|nine|twelve|3|6|9|12)[- ]months? (?:period )?"
                           r"(?:ended|ending|(?:to|through)(?=\s+[A-Z][a-z]+\.?\s+\d))\b", re.I)
_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
MONTHS_IN_QUARTER, MONTHS_IN_HALF, MONTHS_IN_YEAR = 3, 6, 12
# "the first half of 2025", "the first nine months of fiscal 2025": year-to-date periods.
# Analysts' shorthand "9M 2023", "6M", "1H23", "H1 2023" is the first nine or six months too
# ("3M" is no period: it is a company).
_YEAR_TO_DATE = re.compile(r"\bfirst (half|six months|nine months|three quarters)\b|"
                           r"\b(9M|6M|1H|H1)(?:\b|(\d{2})\b)", re.I)
_YTD_MONTHS = {"half": 6, "six months": 6, "nine months": 9, "three quarters": 9, "9m": 9,
               "6m": 6, "1h": 6, "h1": 6}
# "year-to-date revenue through March 31, 2025", "YTD": the months from the fiscal year's start
# to the date, as many as the filing's calendar makes them (Period.months None).
_TO_DATE = re.compile(r"\b(?:fiscal[- ])?year[- ]to[- ]date\b|\bytd\b", re.I)
# "its latest fiscal year", "the most recent full year", "annual revenue", "full-year": a fiscal
# year without its number, the latest one a filing reports (never a 10-Q's quarter).
_SOME_YEAR = re.compile(r"\b(?:latest|most recent|last|past) (?:full[- ])?(?:fiscal )?years?\b|"
                        r"\bfull[- ]year\b|\bannual\b(?! (?:report|meeting))", re.I)
_QUARTER_ENDED = re.compile(r"\bquarter (?:ended|ending)\b", re.I)
# "the March 2025 quarter", "the quarter ended in June 2024": the quarter ending that month
# (a 52-53 week calendar ends it within days of the month's end).
_MONTH_NAME = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_MONTH_QUARTER = re.compile(rf"\b{_MONTH_NAME} (\d{{4}})[- ]quarter\b|"
                            rf"\bquarter end(?:ed|ing) (?:in )?{_MONTH_NAME},? (\d{{4}})\b", re.I)
# "April-June 2023", "January through September 2024": the months from one to the other.
_MONTH_RANGE = re.compile(rf"\b{_MONTH_NAME}\s*(?:-|–|—|to|through|thru)\s*{_MONTH_NAME},?\s+(\d{{4}})\b",
                          re.I)
# "at" only before a date or a number ("at June 30, 2024"), not "net sales at J.M. Smucker".
_INSTANT = re.compile(rf"\b(?:as of|at the end of|at year[- ]end|as at)\b|\bat (?={_MONTH_NAME} \d|\d)",
                      re.I)
# "fiscal 2023 (year ended April 30, 2023)": a year to the date, never a balance at it.
_YEAR_ENDED = re.compile(r"\b(?:fiscal )?years? end(?:ed|ing)\b", re.I)


class PeriodKind(Enum):
    YEAR = "year"          # a fiscal year: "fiscal 2024", "FY2024", "in 2024"
    QUARTER = "quarter"    # "Q2 2025", "the quarter ended June 30, 2025"
    MONTHS = "months"      # "the six months ended June 30, 2025"
    INSTANT = "instant"    # "as of December 31, 2024"


@dataclass(frozen=True)
class Period:
    kind: PeriodKind
    year: int | None = None
    quarter: int | None = None
    end: date | None = None
    months: int | None = None



def _quarter_number(m: re.Match) -> int:
    return int(m.group(1)) if m.group(1) else QUARTER_WORDS[m.group(2).lower()]


def _quarters_with_years(text: str) -> tuple[Period, ...]:
    """Several quarters, each with its own year, in the order named ("NVIDIA's Q2 FY26
    ... Apple's fiscal Q3 2025": one to each company); () unless there are several and
    each names a year before the next."""
    found = list(_QUARTER.finditer(text))
    if len(found) < 2:
        return ()
    out = []
    for m, nxt in zip(found, [*found[1:], None], strict=True):
        years = named_years(text[m.start():nxt.start() if nxt else len(text)])
        if not years:
            return ()
        out.append(Period(PeriodKind.QUARTER, years[0], _quarter_number(m), None, 3))
    return tuple(out)


def parse_periods(text: str) -> tuple[Period, ...]:
    """The periods a question names, in order; a date with "months ended" or a quarter
    makes a period of months, "as of" a date a balance date."""
    dates = named_dates(text)
    months = _MONTHS_ENDED.search(text)
    quarter = _QUARTER.search(text)
    ytd = _YEAR_TO_DATE.search(text)
    if ytd:
        n = _YTD_MONTHS[(ytd.group(1) or ytd.group(2)).lower()]
        # "1H23": the year's last two digits written onto the shorthand
        years = [CENTURY + int(ytd.group(3))] if ytd.group(3) else named_years(text)
        if dates:
            return tuple(Period(PeriodKind.MONTHS, d.year, None, d, n) for d in dates)
        return tuple(Period(PeriodKind.MONTHS, y, None, None, n) for y in years)
    if _TO_DATE.search(text):
        if dates:
            return tuple(Period(PeriodKind.MONTHS, d.year, None, d) for d in dates)
        return tuple(Period(PeriodKind.MONTHS, y) for y in named_years(text)) or \
            (Period(PeriodKind.MONTHS),)
    if _QUARTER_ENDED.search(text) and dates:
        return tuple(Period(PeriodKind.QUARTER, d.year, None, d, 3) for d in dates)
    if months and dates:
        n = _MONTHS[months.group(1).lower()]
        kind = PeriodKind.QUARTER if n == 3 else PeriodKind.YEAR if n == 12 else PeriodKind.MONTHS
        return tuple(Period(kind, d.year, None, d, n) for d in dates)
    if quarter and (each := _quarters_with_years(text)):
        return each
    if quarter:
        q = _quarter_number(quarter)
        years = fiscal_years(text) or calendar_years(text)
        if dates:
            return tuple(Period(PeriodKind.QUARTER, d.year, q, d, 3) for d in dates)
        return tuple(Period(PeriodKind.QUARTER, y, q, None, 3) for y in dict.fromkeys(years)) or \
            (Period(PeriodKind.QUARTER, None, q, None, 3),)
    if dates:
        kind = PeriodKind.INSTANT if _INSTANT.search(text) and not _YEAR_ENDED.search(text) \
            else PeriodKind.YEAR
        return tuple(Period(kind, d.year, None, d, None if kind is PeriodKind.INSTANT else 12)
                     for d in dates)
    if ranges := [_month_range(*m.groups()) for m in _MONTH_RANGE.finditer(text)]:
        return tuple(ranges)
    if in_month := _MONTH_QUARTER.findall(text):  # "the March 2025 quarter", no date named
        ends = [_month_end(*[g for g in found if g]) for found in in_month]
        return tuple(Period(PeriodKind.QUARTER, end.year, None, end, 3) for end in ends)
    years = named_years(text)
    if not years and _SOME_YEAR.search(text):
        return (Period(PeriodKind.YEAR, months=12),)
    return tuple(Period(PeriodKind.YEAR, y, months=12) for y in years)


def _month_range(first: str, last: str, year: str) -> Period:
    """"April-June 2023": the three months ended June 30, 2023, a quarter (a range of twelve
    is a year, another a period of months)."""
    end = _month_end(last, year)
    n = (end.month - parse_date(f"{first} 1, {year}").month) % MONTHS_IN_YEAR + 1
    kind = PeriodKind.QUARTER if n == MONTHS_IN_QUARTER else \
        PeriodKind.YEAR if n == MONTHS_IN_YEAR else PeriodKind.MONTHS
    return Period(kind, end.year, None, end, n)


def _month_end(month: str, year: str) -> date:
    first = parse_date(f"{month} 1, {year}")  # the one date reader: "mar", "sept"
    return first.replace(day=calendar.monthrange(first.year, first.month)[1])


# The lengths of the periods a report's sentence (or a table cell's header) states: "the
# three and six months ended", "the second quarter", "the first half", "the year ended".
_STATED_MONTHS = re.compile(r"\b((?:three|six|nine|twelve)(?:(?:,|,? and|,? or) "
                            r"(?:three|six|nine|twelve))*)[- ]months?\b", re.I)
_STATED_QUARTER = re.compile(r"\b(?:first|second|third|fourth) (?:fiscal )?quarter\b|"
                             r"\bquarters? end(?:ed|ing)\b|\bQ[1-4]\b", re.I)
_STATED_HALF = re.compile(r"\b(?:first|second) half\b", re.I)
_NUMBER_WORD = re.compile(r"three|six|nine|twelve", re.I)


def stated_months(text: str) -> frozenset[int]:
    """The lengths, in months, of the periods `text` states; empty when it states none."""
    months = {_MONTHS[w.lower()] for m in _STATED_MONTHS.finditer(text)
              for w in _NUMBER_WORD.findall(m.group(1))}
    if _STATED_QUARTER.search(text):
        months.add(MONTHS_IN_QUARTER)
    if _STATED_HALF.search(text):
        months.add(MONTHS_IN_HALF)
    if _YEAR_ENDED.search(text):
        months.add(MONTHS_IN_YEAR)
    return frozenset(months)
