"""Which filing a question is about: the company it names, then the period.

A fiscal-year question goes to that year's annual report, else the next year's (which
shows the year before as its comparative column), else the one two years on (its income
and cash-flow statements show three years): "the average from FY2016 to FY2018" is the
FY2018 10-K's, not the latest one's; a quarter to that quarter's report, else
the same quarter's a year later; no period, the company's latest. The result is a metadata
filter for retrieval, so a question about one company never draws on another's filing.
"""

from __future__ import annotations

from datetime import date, timedelta

from pipeline.rag.answers.periods import Period, PeriodKind
from pipeline.rag.answers.query import Query
from retriever_trt.documents.model import CoverField
from retriever_trt.search.filters import company_key
from retriever_trt.store.document_store import DocumentInfo

# Period ends of 52/53-week years move by a few days; a month is safely past that.
END_SLACK = timedelta(days=10)
# A 10-K's income and cash-flow statements show three fiscal years: the oldest is this many
# years before its own (its balance sheet shows two).
OLDEST_FLOW_YEAR = 2


# A year to date of six or nine months is the report of its second or third quarter.
_YEAR_TO_DATE = {6: 2, 9: 3}


def _covers(info: DocumentInfo, period: Period) -> int:
    """How well a document holds a period: 3 its own period, 2 a comparative column of
    it, 1 the same fiscal year only or a 10-K's oldest year of flows, 0 not at all."""
    m = info.metadata
    annual = m.form.is_annual
    if period.end is not None and m.period_end is not None:
        if abs(m.period_end - period.end) <= END_SLACK:
            return 3 if annual == (period.months in (12, None)) or period.kind is PeriodKind.INSTANT else 2
        one_year = abs(m.period_end - period.end - timedelta(days=365)) <= END_SLACK
        return 2 if one_year else 0
    if period.year is None and period.kind is PeriodKind.YEAR:  # "its latest fiscal year"
        return 3 if annual else 0
    if period.year is None or m.fiscal_year is None:
        return 0
    if period.kind is PeriodKind.QUARTER and period.quarter is not None:
        same_q = m.fiscal_period == f"Q{period.quarter}" or (period.quarter == 4 and annual)
        if same_q and m.fiscal_year == period.year:
            return 3
        return 2 if same_q and m.fiscal_year == period.year + 1 else 0
    if period.kind is PeriodKind.MONTHS and period.months in _YEAR_TO_DATE:
        # "the first half of 2023": the year to date of the 10-Q for that quarter; a 10-K
        # reports no six or nine months
        quarter = f"Q{_YEAR_TO_DATE[period.months]}"
        if annual or m.fiscal_year != period.year:
            return 0
        return 3 if m.fiscal_period == quarter else 1
    if annual:
        behind = m.fiscal_year - period.year
        if behind in (0, 1):
            return 3 - behind
        return 1 if behind == OLDEST_FLOW_YEAR and period.kind is PeriodKind.YEAR else 0
    return 1 if m.fiscal_year == period.year else 0


def company_keys(company: str, documents: dict[str, DocumentInfo]) -> set[str]:
    """The company's keys over the years: its own, the names a cover says it had or has
    ("Block, Inc.", formerly "Square, Inc."), and the names its covers print over the same
    Commission file number or employer identification number ("Facebook, Inc." and "Meta
    Platforms, Inc.", 001-35551, whose later covers print no former name): the 10-Ks under
    either are one company's."""
    links = [(company_key(i.metadata.company), company_key(former.value))
             for i in documents.values()
             if (former := i.metadata.cover.get(CoverField.FORMER_NAME)) is not None]
    links += _same_registrant(documents)
    keys = {company}
    grown = True
    while grown:
        grown = False
        for a, b in links:
            if (a in keys) != (b in keys):
                keys |= {a, b}
                grown = True
    return keys


def _same_registrant(documents: dict[str, DocumentInfo]) -> list[tuple[str, str]]:
    """(key, key) of the registrant names printed over one Commission file number or one
    employer identification number: a registrant is given each once, and keeps them through
    a change of name (either may be missing from a cover, or misread)."""
    by_id: dict[tuple[CoverField, str], set[str]] = {}
    for info in documents.values():
        key = company_key(info.metadata.company)
        for field in (CoverField.FILE_NUMBER, CoverField.TAX_ID):
            entry = info.metadata.cover.get(field)
            if entry is not None and key:
                by_id.setdefault((field, _identifier(entry.value)), set()).add(key)
    return [(first, other) for keys in by_id.values() if len(keys) > 1
            for first in [min(keys)] for other in keys - {first}]


def _identifier(value: str) -> str:
    """The number without the zeros a cover may pad a file number's prefix with:
    "001-35551" and "1-35551" are one number."""
    prefix, _, rest = value.partition("-")
    return f"{prefix.lstrip('0') or '0'}-{rest}"


def choose_filings(query: Query, documents: dict[str, DocumentInfo]) -> list[str]:
    """The doc ids that fit the query, best first; [] when it names no known company."""
    if query.company is None:
        return []
    keys = company_keys(query.company, documents)
    mine = [d for d, info in documents.items() if company_key(info.metadata.company) in keys]
    if not mine:
        return []
    # "its 10-K": that kind of filing, where the company has one
    mine = [d for d in mine if query.form is None
            or documents[d].metadata.form.is_annual == query.form.is_annual] or mine
    # "per its FY2018 10-K": that year's filing, where the company has it
    mine = [d for d in mine if query.filing_year is None
            or documents[d].metadata.fiscal_year == query.filing_year] or mine
    # "per its Q3 FY24 10-Q": that quarter's report
    mine = [d for d in mine if query.filing_quarter is None
            or documents[d].metadata.fiscal_period == f"Q{query.filing_quarter}"] or mine
    latest = sorted(mine, key=lambda d: documents[d].metadata.period_end or date.min, reverse=True)
    if not query.periods:
        return latest
    # Every period the question names must be held; the doc's own period first.
    scored = [(min(_covers(documents[d], p) for p in query.periods), d) for d in latest]
    best = max(s for s, _ in scored)
    held = [d for s, d in scored if s == best and s > 0]
    if held:
        return held
    # No filing holds the period: the one whose kind fits it best says what it does hold
    # (an annual report for a fiscal year, a quarterly one for a quarter).
    yearly = all(p.kind is PeriodKind.YEAR for p in query.periods)
    return sorted(latest, key=lambda d: documents[d].metadata.form.is_annual != yearly)
