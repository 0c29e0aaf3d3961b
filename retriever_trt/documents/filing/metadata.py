"""A filing's metadata from its text (cover page first) and, failing that, its file name.

For documents without `dei:` facts (PDFs, HTML without inline XBRL). The rules:

- form: "FORM 10-K" (10-Q, 8-K, 20-F, 40-F) on the cover, else the file name's
  ("aapl-10-k-2024-11-01.pdf").
- company: the name by "(Exact name of registrant as specified in its charter)", across
  the covers' layouts (`registrant.py`).
- ticker: the symbol before the exchange's name in the cover's "Trading Symbol(s)" table,
  else "under the symbol ..." in the text (`registrant.py`), else the file name's first
  part.
- period_end: "For the fiscal year ended September 28, 2024" / "For the quarterly period
  ended June 30, 2025"; without it, estimated from the filing date in the file name
  (a 10-K's year ends ~2 months before it is filed, a 10-Q's quarter ~1 month).
- fiscal_period: FY for a 10-K (20-F, 40-F); for a 10-Q the quarter is read from the
  longest "six/nine months ended" the statements show (none: Q1); without any, the
  quarter of a calendar year.
- fiscal_year: as SEC's DocumentFiscalYearFocus: the calendar year in which the fiscal
  year ends (a 10-Q's fiscal year ends 3, 6 or 9 months after its quarter). A fiscal year
  ending in January to March is named by the company either way (NVIDIA's year ended
  January 26, 2025 is fiscal 2025, Home Depot's ended February 2, 2025 is fiscal 2024):
  there the text's "fiscal 2024" / "fiscal year 2025" mentions decide, and a year ending
  in the first days of January belongs to the year before when they do not.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, timedelta

from retriever_trt.documents.filing.registrant import registrant_name, trading_symbol
from retriever_trt.documents.model import DocumentMetadata, Form
from retriever_trt.documents.years import years_in

# How much of a document's text is searched (the cover, and for a 10-Q its statements).
SEARCH_CHARS = 300_000
MONTHS = {m: i + 1 for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"))}
_MONTH_ABBR = {name[:3]: n for name, n in MONTHS.items()} | {"sept": 9}
_DATE = r"([A-Za-z]{3,9}\.?\s+\d{1,2},?\s+\d{4})"
_PERIOD = re.compile(r"for\s+the\s+(fiscal\s+year|year|quarterly\s+period|quarter|period)\s+"
                     r"ended:?\s+" + _DATE, re.I)
_FORM = re.compile(r"\bform\s+(10-?k|10-?q|8-?k|20-?f|40-?f)(/a)?\b", re.I)
_FILE = re.compile(r"^(?P<ticker>[a-z][a-z.]{0,5})[-_ ]+(?P<form>10-?k|10-?q|8-?k|20-?f|40-?f)"
                   r"(?:[-_ ]+(?P<filed>\d{4}-\d{2}-\d{2}))?", re.I)
_MONTHS_ENDED = re.compile(r"\b(three|six|nine)\s+months\s+ended\b", re.I)
_FISCAL_MENTION = re.compile(r"\bfiscal\s+(?:year\s+)?(20\d\d|19\d\d)\b", re.I)
_ANNUAL = (Form.TEN_K, Form.TWENTY_F, Form.FORTY_F)
# Fewest "six/nine months ended" that make a 10-Q the second or third quarter.
MIN_MONTHS_MENTIONS = 2
# A fiscal year ending by this day of January belongs to the year before (52/53 weeks).
EARLY_JANUARY_DAY = 7
# Months of a fiscal year end whose fiscal year companies name either way.
AMBIGUOUS_END_MONTHS = (1, 2, 3)
# Days from period end to filing, for a period end estimated from the filing date.
FILING_LAG_DAYS = {Form.TEN_K: 60, Form.TEN_Q: 35}


def infer_metadata(text: str, file_name: str = "") -> DocumentMetadata:
    """Metadata read from a document's `text` (its cover first; for a 10-Q, include the
    statements: their "nine months ended" gives the quarter), with `file_name` filling
    what the text does not say."""
    text = text[:SEARCH_CHARS]
    named = _FILE.match(file_name)
    form = _form(text, named.group("form") if named else "")
    period_end = _period_end(text)
    if period_end is None and named and named.group("filed") and form in FILING_LAG_DAYS:
        filed = date.fromisoformat(named.group("filed"))
        period_end = filed - timedelta(days=FILING_LAG_DAYS[form])
    ticker = trading_symbol(text) or (named.group("ticker").upper() if named else "")
    meta = DocumentMetadata(company=registrant_name(text), ticker=ticker, form=form, period_end=period_end)
    if period_end is not None and form in _ANNUAL:
        meta.fiscal_period = "FY"
        meta.fiscal_year = fiscal_year(period_end, text)
    elif period_end is not None and form is Form.TEN_Q:
        quarter = _quarter(text, period_end)
        meta.fiscal_period = f"Q{quarter}"
        meta.fiscal_year = fiscal_year(_add_months(period_end, 3 * (4 - quarter)), text)
    return meta


def title(meta: DocumentMetadata, fallback: str) -> str:
    """ "Apple Inc. 10-K FY2024", "Tesla, Inc. 10-Q Q2 FY2025"; `fallback` when no company."""
    if not meta.company:
        return fallback
    parts = [meta.company]
    if meta.form is not Form.OTHER:
        parts.append(meta.form.value)
    if meta.fiscal_period and meta.fiscal_period != "FY":
        parts.append(meta.fiscal_period)
    if meta.fiscal_year:
        parts.append(f"FY{meta.fiscal_year}")
    return " ".join(parts)


def fiscal_year(year_end: date, text: str = "") -> int:
    """The fiscal year, as DocumentFiscalYearFocus names it, of a year ending `year_end`."""
    year = year_end.year
    if year_end.month in AMBIGUOUS_END_MONTHS:
        mentions = Counter(int(y) for y in _FISCAL_MENTION.findall(text))
        if mentions[year - 1] != mentions[year]:
            return year - 1 if mentions[year - 1] > mentions[year] else year
    if year_end.month == 1 and year_end.day <= EARLY_JANUARY_DAY:
        return year - 1
    return year


# Header rows a table's column years are read from, and how many more of the tables must
# head their latest column with one year than with the other for the labels to decide.
LABEL_HEADER_ROWS = 3
LABEL_MARGIN = 2


def labelled_fiscal_year(meta: DocumentMetadata, tables: list[list[list[str]]]) -> int | None:
    """The fiscal year as the filing's own tables label it, for a year ending in January to
    March, which companies name either way: Foot Locker heads the year ended January 29,
    2022 "2021", Walmart heads the year ended January 31, 2023 "2023". Each table whose
    header rows give two or more years votes for its latest; the year the tables head with
    clearly more (`LABEL_MARGIN` times) wins, else `meta.fiscal_year` stays."""
    end = meta.period_end
    if end is None or meta.form not in _ANNUAL or end.month not in AMBIGUOUS_END_MONTHS:
        return meta.fiscal_year
    votes: Counter[int] = Counter()
    for rows in tables:
        years = set(years_in(" ".join(c for r in rows[:LABEL_HEADER_ROWS] for c in r)))
        if len(years) >= 2:
            votes[max(years)] += 1
    for named, other in ((end.year - 1, end.year), (end.year, end.year - 1)):
        if votes[named] > LABEL_MARGIN * votes[other]:
            return named
    return meta.fiscal_year


# Dates without a month name: ISO ("2024-09-28", XBRL's own) and US numeric ("9/28/2024").
_NUMERIC_DATES = ((re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})$"), (1, 2, 3)),
                  (re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})$"), (3, 1, 2)))


def parse_date(text: str) -> date | None:
    """ "September 28, 2024", "Sept. 28 2024", "JUNE 30, 2025", "28 September 2024",
    "2024-09-28", "9/28/2024"; None if not a date. The one date reader of documents and
    questions."""
    t = " ".join(text.replace("\u00a0", " ").split()).replace(" ,", ",")
    for pattern, (y, mo, d) in _NUMERIC_DATES:
        m = pattern.match(t)
        if m:
            return _date_or_none(int(m.group(y)), int(m.group(mo)), int(m.group(d)))
    m = re.match(r"([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})$", t)
    day_first = re.match(r"(\d{1,2})\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})$", t)
    if not m and not day_first:
        return None
    name, day, year = (m.group(1), m.group(2), m.group(3)) if m else (
        day_first.group(2), day_first.group(1), day_first.group(3))
    name = name.lower()
    month = MONTHS.get(name) or _MONTH_ABBR.get(name[:4] if name.startswith("sept") else name[:3])
    return _date_or_none(int(year), month, int(day)) if month else None


def _date_or_none(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _form(text: str, from_name: str) -> Form:
    m = _FORM.search(text)
    return Form.parse(m.group(1) if m else from_name)


def _period_end(text: str) -> date | None:
    for m in _PERIOD.finditer(text):
        found = parse_date(m.group(2))
        if found is not None:
            return found
    return None


def _quarter(text: str, period_end: date) -> int:
    counts = Counter(w.lower() for w in _MONTHS_ENDED.findall(text))
    if counts["nine"] >= MIN_MONTHS_MENTIONS and counts["nine"] >= counts["six"]:
        return 3
    if counts["six"] >= MIN_MONTHS_MENTIONS:
        return 2
    if counts["three"]:
        return 1
    return (period_end.month - 1) // 3 + 1


def _add_months(d: date, months: int) -> date:
    month = d.month - 1 + months
    year, month = d.year + month // 12, month % 12 + 1
    return date(year, month, min(d.day, 28))
