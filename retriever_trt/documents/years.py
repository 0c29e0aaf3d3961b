"""Years as reports and questions write them: the one year range and pattern of finrag.

A four-digit number is read as a year when it lies in FIRST_YEAR..LAST_YEAR: the fiscal years
of the reports finrag reads (TAT-QA's 2015-2020, the SEC filings' 2022-2025) with room on
both sides, and the maturities and expirations tables list ("Notes due 2047"). Outside it
("in 1850", "2,075 stores" written "2075") a number is not taken for a period: no table's
column holds it, and a question naming one is told so (question.unusable_operand).
Tables' headers, the question's periods and the sentences' period labels all read years
with this one pattern; the pipeline imports it from here (retriever_trt imports no pipeline).
"""

from __future__ import annotations

import re

FIRST_YEAR = 1950
LAST_YEAR = 2049
# The digits of a year in FIRST_YEAR..LAST_YEAR, for a pattern to put its own bounds around.
YEAR_DIGITS = r"(?:19[5-9]\d|20[0-4]\d)"
YEAR = re.compile(rf"\b{YEAR_DIGITS}\b")
_SPACED_DIGITS = re.compile(r"\b(\d) (?=\d\b)")  # "2 0 1 8", as some PDFs extract years
# "FY19", "FY '19", and "F19" as Australian reports head their years.
_FISCAL = re.compile(r"\b(?:fy\s?['’]?|f)(\d{2})\b", re.I)
CENTURY = 2000  # a two-digit year ("FY19") is of this century


def years_in(text: str) -> list[int]:
    """Years a header or sentence names, in order: "2019", "Fiscal 2018", "FY19", "F19" (as
    2019); repeated as often as named."""
    text = _SPACED_DIGITS.sub(r"\1", text)
    years = [int(y) for y in YEAR.findall(text)]
    years += [CENTURY + int(y) for y in _FISCAL.findall(text)]
    return years


# Years written one after the other with nothing but spaces or commas between them.
_YEAR_RUN = re.compile(rf"(?:\b{YEAR_DIGITS}\b[\s,]*){{2,}}")


def year_run(text: str, count: int) -> list[int] | None:
    """The text's last run of `count` distinct years written one after the other ("Selected
    Financial Data 2020 2019 2018 2017 2016": a table's header line a PDF reader took as its
    caption), or None."""
    runs = [[int(y) for y in YEAR.findall(m.group(0))] for m in _YEAR_RUN.finditer(text)]
    return next((r for r in reversed(runs) if len(r) == count == len(set(r))), None)
