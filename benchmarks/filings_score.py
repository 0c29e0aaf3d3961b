"""Scoring of /ask responses against the filings question set (benchmarks/filings_eval.py).

A numeric gold is right when the response's `short_answer` (a number string; its `scale`,
"" / "thousand" / "million" / "billion" / "percent", says its unit) equals the gold once
both are in the gold's unit, to the gold's decimals: within half a unit of its last
decimal (391035 USD millions: "391035" million, "391035000000" or "391.035" billion are
right; "391.0" billion is not). A percent gold takes a number with scale "percent" or "";
a ratio gold a plain number (or a percent, divided by 100); a count gold (employees,
stores, route miles) a plain number. A text gold is right when the short answer equals it
after normalization (case, punctuation, articles, whitespace); a list gold (every trading
symbol on a cover) when the short answer's spans (a list, or one string split at commas,
semicolons and "and") equal it as a set after that normalization; a compare gold that
names a company when the short answer names that company, legal suffixes and the like
dropped ("Meta Platforms, Inc." names "Meta"), or gives the trading symbol a shelf names its
filing by ("JCI" of JCI_10-K_2024-09-30.htm, where the question wrote "JCI"). An absent
gold (null: the filing does not hold the figure) is right only when the short answer is
empty.

A wrong number shown: the response gives a number where the gold is null or a different
number (`wrong_number`); what the eval counts as the worst answer there is.

The filing a response used: its `filing.doc_id`, else the doc_id of its first citation
(or of the source that citation points at), else of its first source. A filing and its
PDF twin (same file stem) are the same filing.
"""

from __future__ import annotations

import re
import string
from decimal import Decimal, InvalidOperation
from pathlib import PurePosixPath
from typing import Any

SCALES = {"": Decimal(1), "thousand": Decimal(10) ** 3, "million": Decimal(10) ** 6,
          "billion": Decimal(10) ** 9}
UNITS = {"USD": Decimal(1), "USD thousands": Decimal(10) ** 3, "USD millions": Decimal(10) ** 6,
         "USD billions": Decimal(10) ** 9, "USD per share": Decimal(1), "shares": Decimal(1),
         "thousand shares": Decimal(10) ** 3, "million shares": Decimal(10) ** 6,
         "ratio": Decimal(1), "employees": Decimal(1), "stores": Decimal(1),
         "route miles": Decimal(1), "count": Decimal(1), "billion shares": Decimal(10) ** 9}
LIST = "list"
PERCENT = "percent"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)")
_DROP = str.maketrans("", "", "$,% \u00a0")
_SPAN_SPLIT = re.compile(r"\s*(?:[,;]|\band\b)\s*")
TEXT_UNITS = ("", "text")  # the generated set's text golds carry "", the held-out set's "text"
# Words after a company's name that do not change which company it is.
COMPANY_SUFFIXES = {"inc", "incorporated", "corp", "corporation", "co", "company", "companies",
                    "group", "holdings", "plc", "llc", "ltd", "limited", "platforms"}


def parse_number(text: str) -> Decimal | None:
    """A short answer's number: "391035", "-0.8", "1,234.5", "(1,234)", "$6.08", "12.3%",
    "−5" (a Unicode minus). None when the text is not one number."""
    t = text.strip().replace("\u2212", "-").translate(_DROP)
    negative = t.startswith("(") and t.endswith(")")
    t = t.strip("()")
    if not _NUMBER.fullmatch(t):
        return None
    try:
        value = Decimal(t)
    except InvalidOperation:
        return None
    return -value if negative else value


def _single(short: Any) -> str | None:
    if isinstance(short, list):
        return short[0] if len(short) == 1 and isinstance(short[0], str) else None
    return short if isinstance(short, str) and short.strip() else None


# Other writings of two units: set 9's golds give "%", "percentage points" and "x".
UNIT_NAMES = {"%": PERCENT, "percentage points": PERCENT, "x": "ratio"}


def in_gold_unit(value: Decimal, scale: str, unit: str) -> Decimal | None:
    """`value` at `scale` expressed in the gold's `unit`; None when they cannot meet."""
    unit = UNIT_NAMES.get(unit, unit)
    if unit == PERCENT:
        return value if scale in (PERCENT, "") else None
    if scale == PERCENT:
        return value / 100 if unit == "ratio" else None
    if scale not in SCALES or unit in TEXT_UNITS or unit == LIST:
        return None
    # a unit not listed is a count of things ("customers", "countries and territories"), in
    # the scale its first word names ("million square feet", "thousand memberships")
    return value * SCALES[scale] / UNITS.get(unit, SCALES.get(unit.split(" ")[0], Decimal(1)))


# A length of time as the text states it ("18 months", "20-year"): its number, in a gold whose
# unit is that time's.
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)[\s-]*(year|month|week|day)s?\s*$", re.I)


def _duration(text: str, unit: str) -> Decimal | None:
    m = _DURATION.match(text)
    return Decimal(m.group(1)) if m and unit.rstrip("s") == m.group(2).lower() else None


def numeric_right(short: Any, scale: str, gold: str, unit: str, decimals: int) -> bool:
    text = _single(short)
    value = parse_number(text) if text is not None else None
    if value is None and text is not None and (value := _duration(text, unit)) is not None:
        return abs(value - Decimal(gold)) <= Decimal(5).scaleb(-decimals - 1)
    if value is None:
        return False
    converted = in_gold_unit(value, scale or "", unit)
    if converted is None:
        return False
    return abs(converted - Decimal(gold)) <= Decimal(5).scaleb(-decimals - 1)


def normalize_text(text: str) -> str:
    text = text.lower().translate(str.maketrans("", "", string.punctuation + "’‘“”"))
    return " ".join(_ARTICLES.sub(" ", text).split())


def text_right(short: Any, gold: str) -> bool:
    """The text asked; several spans answer a gold that lists them in one string ("Oliver
    Wyman, Lippincott and NERA Economic Consulting"), in any order."""
    if isinstance(short, list) and len(short) > 1:
        return spans(short) == spans(gold)
    text = _single(short)
    return text is not None and normalize_text(text) == normalize_text(gold)


def no_answer(short: Any) -> bool:
    """The response gives no short answer: None, "", whitespace, [] or a list of blanks."""
    if isinstance(short, list):
        return all(no_answer(s) for s in short)
    return not (isinstance(short, str) and short.strip())


def spans(short: Any) -> set[str]:
    """A short answer's spans, normalized: a list's items, or one string's comma-, semicolon-
    or "and"-separated parts."""
    items = short if isinstance(short, list) else _SPAN_SPLIT.split(short or "")
    return {normalize_text(i) for i in items if isinstance(i, str) and normalize_text(i)}


def spans_right(short: Any, gold: list[str]) -> bool:
    return not no_answer(short) and spans(short) == {normalize_text(g) for g in gold}


def company_key(name: str) -> str:
    """A company's name without articles, punctuation and trailing legal suffixes; a hyphen
    parts words ("Coca-Cola" is the registrant "COCA COLA CO")."""
    words = normalize_text(name.replace("-", " ")).split()
    while len(words) > 1 and words[-1] in COMPANY_SUFFIXES:
        words.pop()
    return " ".join(words)


def names_company(short: Any, gold: str, record: dict | None = None) -> bool:
    """Whether the short answer names the gold's company: by its name, or by the trading
    symbol its filing is named with on a shelf (TICKER_FORM_PERIODEND.htm), as a question
    naming "JCI" is answered "JCI"."""
    text = _single(short)
    if text is None:
        return False
    if company_key(text) == company_key(gold):
        return True
    record = record or {}
    return any(company_key(name) == company_key(gold) and text == doc.split("_")[0]
               for name, doc in zip(record.get("operands", ()), record.get("doc_ids", ()),
                                    strict=False))


def is_right(record: dict, response: dict) -> bool:
    """Whether `response` (an /ask body) answers `record` (a question set line) rightly."""
    short, gold = response.get("short_answer"), record["answer"]
    if gold is None:
        return no_answer(short)
    if isinstance(gold, list):
        return spans_right(short, gold)
    if record.get("unit", "") in TEXT_UNITS:
        if record["type"] == "compare":
            return names_company(short, gold, record)
        return text_right(short, gold)
    # a gold given without its rounding (a count read from prose) is as precise as written
    decimals = record["decimals"]
    return numeric_right(short, response.get("scale") or "", gold, record["unit"],
                         len(gold.partition(".")[2]) if decimals is None else decimals)


def gives_number(short: Any) -> bool:
    """The short answer is a number (or a list holding one)."""
    items = short if isinstance(short, list) else [short]
    return any(isinstance(i, str) and parse_number(i) is not None for i in items)


def wrong_number(record: dict, response: dict) -> bool:
    """A number shown where the gold is null or a different number (a text gold: never)."""
    gold = record["answer"]
    if isinstance(gold, list) or (gold is not None and record.get("unit", "") in TEXT_UNITS):
        return False
    return gives_number(response.get("short_answer")) and not is_right(record, response)


def used_filing(response: dict) -> str | None:
    """The doc_id of the filing the response says it used (see the module's docstring)."""
    filing = response.get("filing")
    if isinstance(filing, dict) and filing.get("doc_id"):
        return filing["doc_id"]
    sources = response.get("sources") or []
    by_id = {s.get("id"): s for s in sources}
    for citation in response.get("citations") or []:
        doc = citation.get("doc_id") or by_id.get(citation.get("source_id"), {}).get("doc_id")
        if doc:
            return doc
    return sources[0].get("doc_id") if sources else None


def same_filing(doc_id: str | None, gold_doc_id: str) -> bool:
    """The same filing, whatever its format and folder: nflx-10-q-2025-07-18.(html|pdf)."""
    return doc_id is not None and PurePosixPath(doc_id).stem == PurePosixPath(gold_doc_id).stem
