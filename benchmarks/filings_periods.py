"""The periods a filing reports and how an analyst names them, for benchmarks/filings_gold.py.

The filing's own period comes from its `dei:` facts: the context of `dei:DocumentType`
is the document's period (a 10-K's fiscal year, a 10-Q's year to date), and
`DocumentFiscalYearFocus` / `DocumentFiscalPeriodFocus` name it (NVIDIA's quarter ended
July 27, 2025 is Q2 of fiscal 2026). The comparative periods are found among the
filing's contexts: a 10-K's two prior fiscal years (each ends the day before the next
one starts) and the prior year-end balance; a 10-Q's same quarter and year to date a
year earlier, and the last fiscal year-end balance sheet.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from enum import Enum

from filings_facts import Context, Filing

YEAR_DAYS = (350, 380)      # a fiscal year: 52 or 53 weeks, or a calendar year
QUARTER_DAYS = (80, 100)    # a fiscal quarter: 13 or 14 weeks, or three months
SAME_DATE_SLACK = timedelta(days=7)  # a 52/53-week year ends on a different day each year
ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}
MONTHS_OF_QUARTERS = {2: "six", 3: "nine"}


class Kind(Enum):
    YEAR = "year"
    QUARTER = "quarter"
    YEAR_TO_DATE = "year to date"
    INSTANT = "instant"


@dataclass(frozen=True)
class Period:
    key: str                # "FY", "FY-1", "FY-2", "Q", "Q-1", "YTD", "YTD-1", "END", "END-1"
    kind: Kind
    start: date | None
    end: date
    fiscal_year: int
    quarter: int | None     # the fiscal quarter a quarter or year to date ends with
    calendar: bool          # the fiscal year is the calendar year (within a week)

    def matches(self, ctx: Context) -> bool:
        return not ctx.dims and ctx.start == self.start and ctx.end == self.end


def _durations(filing: Filing) -> set[tuple[date, date]]:
    return {(c.start, c.end) for c in filing.contexts.values() if c.start and not c.dims}


def _days(span: tuple[date, date]) -> int:
    return (span[1] - span[0]).days + 1


def _near(a: date, b: date) -> bool:
    return abs(a - b) <= SAME_DATE_SLACK


def _year_back(d: date) -> date:
    return d.replace(year=d.year - 1) if not (d.month == 2 and d.day == 29) else d - timedelta(365)


def document_context(filing: Filing) -> Context:
    found = filing.text("dei:DocumentType")
    if not found:
        raise ValueError(f"{filing.path.name}: no dei:DocumentType fact")
    return found[0].context


def periods_of(filing: Filing) -> dict[str, Period]:
    """Every period of the filing this question set asks about, by key."""
    doc = document_context(filing)
    fy = int(filing.dei("DocumentFiscalYearFocus"))
    form = filing.dei("DocumentType")
    spans = _durations(filing)
    out: dict[str, Period] = {}

    def add(key: str, kind: Kind, span: tuple[date | None, date], year: int,
            quarter: int | None = None) -> None:
        calendar = _near(date(year, 12, 31), _fy_end(span[1], kind, quarter))
        out[key] = Period(key, kind, span[0], span[1], year, quarter, calendar)

    if form == "10-K":
        current = next((s for s in spans if s[1] == doc.end and
                        YEAR_DAYS[0] <= _days(s) <= YEAR_DAYS[1]), None)
        for back in range(3):
            if current is None:
                break
            add("FY" if back == 0 else f"FY-{back}", Kind.YEAR, current, fy - back)
            add("END" if back == 0 else f"END-{back}", Kind.INSTANT, (None, current[1]), fy - back)
            prior_end = current[0] - timedelta(days=1)
            current = next((s for s in spans if s[1] == prior_end and
                            YEAR_DAYS[0] <= _days(s) <= YEAR_DAYS[1]), None)
        return out
    quarter = int(filing.dei("DocumentFiscalPeriodFocus").lstrip("Q"))
    q = next((s for s in spans if s[1] == doc.end and
              QUARTER_DAYS[0] <= _days(s) <= QUARTER_DAYS[1]), None)
    ytd = (doc.start, doc.end)
    for key, span in (("Q", q), ("YTD", ytd if quarter > 1 else None)):
        if span is None:
            continue
        kind = Kind.QUARTER if key == "Q" else Kind.YEAR_TO_DATE
        add(key, kind, span, fy, quarter)
        prior = next((s for s in spans if _near(s[1], _year_back(span[1])) and
                      abs(_days(s) - _days(span)) <= SAME_DATE_SLACK.days), None)
        if prior:
            add(f"{key}-1", kind, prior, fy - 1, quarter)
    add("END", Kind.INSTANT, (None, doc.end), fy, quarter)
    add("END-1", Kind.INSTANT, (None, doc.start - timedelta(days=1)), fy - 1)
    return out


def _fy_end(end: date, kind: Kind, quarter: int | None) -> date:
    """Roughly when the fiscal year holding a period ends (to tell calendar years apart)."""
    if kind in (Kind.YEAR, Kind.INSTANT) and quarter is None:
        return end
    return end + timedelta(days=91 * (4 - (quarter or 4)))


def spoken_date(d: date) -> str:
    return f"{d:%B} {d.day}, {d.year}"


def phrases(p: Period) -> list[str]:
    """Ways to name `p` in a question, each with its preposition ("in fiscal 2024")."""
    end, fy = spoken_date(p.end), p.fiscal_year
    if p.kind is Kind.YEAR:
        out = [f"in fiscal {fy}", f"for fiscal year {fy}", f"in FY{fy}",
               f"for the fiscal year ended {end}"]
        return out + ([f"in {fy}", f"for the year ended {end}"] if p.calendar else [])
    if p.kind is Kind.QUARTER:
        nth, fiscal = ORDINAL[p.quarter], "" if p.calendar else "fiscal "
        return [f"for the three months ended {end}", f"for the quarter ended {end}",
                f"in the {nth} quarter of {fiscal}{fy}",
                f"in Q{p.quarter} {fy}" if p.calendar else f"in Q{p.quarter} FY{fy}"]
    if p.kind is Kind.YEAR_TO_DATE:
        months = MONTHS_OF_QUARTERS[p.quarter]
        out = [f"for the {months} months ended {end}"]
        if p.calendar and p.quarter == 2:
            out.append(f"in the first half of {fy}")
        return out + [f"in the first {months} months of fiscal {fy}"]
    out = [f"as of {end}", f"at {end}"]
    return out + ([f"at the end of fiscal {fy}"] if p.quarter is None else [])
