"""The filing a question names to be read: its kind ("its 10-K", "the latest 10-Q"), its fiscal
year ("per its FY2018 10-K") and, for a quarterly report, its fiscal quarter ("per its Q3 FY24
10-Q"). The filing's period scopes which report answers; the question's other periods are the
ones asked (`query.parse_query`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from retriever_trt.documents.model import Form
from retriever_trt.documents.years import CENTURY, YEAR_DIGITS

QUARTER_WORDS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2,
                 "3rd": 3, "4th": 4}

# The kind of filing a question names: "per the cover of its 2024 10-K", "the latest 10-Q".
_FORMS = ((Form.TEN_K, re.compile(r"\b10-?k\b|\bannual report\b", re.I)),
          (Form.TEN_Q, re.compile(r"\b10-?q\b|\bquarterly report\b", re.I)))

# "per its FY2018 10-K", "in Apple's fiscal 2018 Form 10-K", "the 2020 annual report", "its
# 10-K for fiscal 2021": a year that says which filing to read.
_FILING_YEAR = re.compile(
    rf"\b(?:fiscal(?:\s+year)?\s*|fy\s*)?['’]?({YEAR_DIGITS})\s+(?:form\s+)?"
    r"(?:10-?k|10-?q|annual report|quarterly report)\b|"
    rf"\b(?:10-?k|annual report)\s+(?:for|of)\s+((?:the\s+)?(?:fiscal(?:\s+year)?\s*|fy\s*)?"
    rf"['’]?({YEAR_DIGITS}))\b", re.I)

# "its Q3 FY24 10-Q", "the second-quarter fiscal 2025 10-Q", "the Q2 2023 10-Q", "its 10-Q for
# the third quarter of fiscal 2024": the quarterly report to read, by its fiscal quarter and
# year (a year of two digits only after "fiscal" or "FY").
_QUARTER_NAME = r"(q[1-4]|first|second|third|fourth)"
_FILING_QUARTER = re.compile(
    rf"\b{_QUARTER_NAME}(?:[- ](?:fiscal[- ])?quarter)?,?\s+(?:of\s+)?(?:(?:fiscal(?:\s+year)?\s*|"
    r"fy\s*)['’]?(\d{4}|\d{2})|(\d{4}))\s+(?:form\s+)?(?:10-?q|quarterly report)\b|"
    rf"\b(?:10-?q|quarterly report)\s+(?:for|of)\s+(?:the\s+)?{_QUARTER_NAME}(?:[- ](?:fiscal\s+)?"
    r"quarter)?\s+(?:of\s+)?(?:fiscal(?:\s+year)?\s*|fy\s*)?['’]?(\d{4}|\d{2})\b", re.I)


@dataclass(frozen=True)
class NamedFiling:
    form: Form | None          # the kind of filing named
    year: int | None           # its fiscal year
    quarter: int | None        # its fiscal quarter, for a quarterly report named by one
    rest: str                  # the question without the filing's period


def named_filing(text: str) -> NamedFiling:
    """The filing the question names (all None where it names none)."""
    form = next((f for f, pattern in _FORMS if pattern.search(text)), None)
    quarterly = _FILING_QUARTER.search(text)
    if quarterly is not None:
        named, year = [g for g in quarterly.groups() if g is not None]
        quarter = QUARTER_WORDS.get(named.lower()) or int(named[1])
        return NamedFiling(form, int(year) + (CENTURY if len(year) == 2 else 0), quarter,
                           text[:quarterly.start()] + text[quarterly.end():])
    found = _FILING_YEAR.search(text)
    if found is None:
        return NamedFiling(form, None, None, text)
    if found.group(1):
        year, rest = found.group(1), text[:found.start()] + text[found.end(1):]
    else:
        year, rest = found.group(3), text[:found.start(2)] + text[found.end(2):]
    return NamedFiling(form, int(year), None, rest)
