"""Where a period a question names lies in a filing's own calendar: its end and length in
months (`Target`), a fiscal quarter counted from the filing's own period, the months of a
year to date, and the filing's own period when the question names none."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date

from pipeline.rag.answers.periods import MONTHS_IN_QUARTER, MONTHS_IN_YEAR, Period, PeriodKind
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.vocabulary.metrics import DAYS_IN_YEAR
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.store.document_store import DocumentInfo

QUARTERS_IN_YEAR = 4
_OWN_QUARTER = {f"Q{q}": q for q in range(1, QUARTERS_IN_YEAR + 1)}


@dataclass(frozen=True)
class Target:
    """A period to read: its end, and its length in months (None: a balance date)."""

    end: date
    months: int | None
    dated: bool = False  # the question states this date ("as of February 21, 2025")

    def label(self) -> str:
        if self.months is None:
            return f"at {self.end.isoformat()}"
        return f"{self.months} months ended {self.end.isoformat()}"


def years_earlier(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year - years)
    except ValueError:  # 29 February
        return d.replace(year=d.year - years, day=28)


def _months_later(d: date, months: int) -> date:
    """`d` moved by whole months, the day kept where the month has it (a 13-week quarter
    ends within `END_SLACK` of three calendar months later)."""
    year, month = divmod(d.month - 1 + months, MONTHS_IN_YEAR)
    day = min(d.day, calendar.monthrange(d.year + year, month + 1)[1])
    return date(d.year + year, month + 1, day)


def _quarter_end(m: DocumentMetadata, year: int | None, quarter: int) -> date | None:
    """The end of fiscal quarter `quarter` of fiscal `year` (the filing's own year when
    None), counted from the filing's own period: a 10-K ends its fourth quarter."""
    own = 4 if m.form.is_annual else _OWN_QUARTER.get(m.fiscal_period)
    if own is None or m.fiscal_year is None or m.period_end is None:
        return None
    shift = ((year or m.fiscal_year) - m.fiscal_year) * QUARTERS_IN_YEAR + quarter - own
    return _months_later(m.period_end, shift * MONTHS_IN_QUARTER)


def _months_to_date(m: DocumentMetadata, end: date) -> int | None:
    """The months from the start of the fiscal year to `end`, a quarter's end of the
    filing's calendar ("year-to-date through March 31, 2025" in a fiscal year that ends in
    June: nine)."""
    own = QUARTERS_IN_YEAR if m.form.is_annual else _OWN_QUARTER.get(m.fiscal_period)
    if own is None or m.period_end is None:
        return None
    back = round((m.period_end - end).days / (DAYS_IN_YEAR / QUARTERS_IN_YEAR))
    return ((own - back - 1) % QUARTERS_IN_YEAR + 1) * MONTHS_IN_QUARTER


def _target(p: Period, m: DocumentMetadata) -> Target | None:
    """Where a named period lies in this filing's calendar; None when it cannot be placed."""
    if p.kind is PeriodKind.MONTHS and p.months is None:  # year to date
        end = p.end or _quarter_end(m, p.year, _OWN_QUARTER.get(m.fiscal_period, QUARTERS_IN_YEAR))
        months = _months_to_date(m, end) if end else None
        return Target(end, months, p.end is not None) if months else None
    if p.end is not None:
        own = MONTHS_IN_YEAR if m.form.is_annual else MONTHS_IN_QUARTER
        return Target(p.end, None if p.kind is PeriodKind.INSTANT else p.months or own, True)
    if p.kind is PeriodKind.QUARTER and p.quarter is not None:
        end = _quarter_end(m, p.year, p.quarter)
    elif p.kind in (PeriodKind.QUARTER, PeriodKind.MONTHS) and p.months:
        # "the first six months of 2025": the year to date ending its second quarter
        end = _quarter_end(m, p.year, p.months // MONTHS_IN_QUARTER)
    elif p.year is not None or p.kind is PeriodKind.YEAR:  # no year: the filing's own
        end = _quarter_end(m, p.year, QUARTERS_IN_YEAR)
    else:
        return None
    months = p.months or MONTHS_IN_YEAR
    return Target(end, None if p.kind is PeriodKind.INSTANT else months) if end else None


def targets(query: Query, info: DocumentInfo) -> list[Target]:
    """The periods to read in this filing, oldest first: those the question names (each
    placed in the filing's calendar: a quarter, months to date or a fiscal year the filing
    may not hold, then the read finds no fact), else the filing's own period (a year back
    when the question asks the year-ago one)."""
    m = info.metadata
    if m.period_end is None:
        return []
    out = [t for t in (_target(p, m) for p in query.periods) if t is not None]
    if not out and not query.periods:
        end = years_earlier(m.period_end, 1) if query.year_earlier else m.period_end
        out = [Target(end, MONTHS_IN_YEAR if m.form.is_annual else MONTHS_IN_QUARTER)]
    if out and query.operation.periods == 2 and len(out) == 1:
        out.insert(0, Target(years_earlier(out[0].end, 1), out[0].months))
    return sorted(set(out), key=lambda t: t.end)
