"""Scoring of /ask responses against the filings question set (benchmarks/filings_eval.py).

A numeric gold is right when the response's `short_answer` (a number string; its `scale`,
"" / "thousand" / "million" / "billion" / "percent", says its unit) equals the gold once
both are in the gold's unit, to the gold's decimals: within half a unit of its last
decimal (391035 USD millions: "391035" million, "391035000000" or "391.035" billion are
right; "391.0" billion is not). A percent gold takes a number with scale "percent" or "";
a ratio gold a plain number (or a percent, divided by 100). A text gold is right when the
short answer equals it after normalization (case, punctuation, articles, whitespace).

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
         "ratio": Decimal(1)}
PERCENT = "percent"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)")
_DROP = str.maketrans("", "", "$,% \u00a0")


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


def in_gold_unit(value: Decimal, scale: str, unit: str) -> Decimal | None:
    """`value` at `scale` expressed in the gold's `unit`; None when they cannot meet."""
    if unit == PERCENT:
        return value if scale in (PERCENT, "") else None
    if scale == PERCENT:
        return value / 100 if unit == "ratio" else None
    if scale not in SCALES or unit not in UNITS:
        return None
    return value * SCALES[scale] / UNITS[unit]


def numeric_right(short: Any, scale: str, gold: str, unit: str, decimals: int) -> bool:
    text = _single(short)
    value = parse_number(text) if text is not None else None
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
    text = _single(short)
    return text is not None and normalize_text(text) == normalize_text(gold)


def is_right(record: dict, response: dict) -> bool:
    """Whether `response` (an /ask body) answers `record` (a question set line) rightly."""
    short = response.get("short_answer")
    if record["type"] == "text":
        return text_right(short, record["answer"])
    return numeric_right(short, response.get("scale") or "", record["answer"], record["unit"],
                         record["decimals"])


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
