"""What a filing's cover says about the filing itself, answered from its metadata: the
trading symbol, and the last day of the fiscal year or quarter asked. An inline-XBRL
filing's metadata comes from its `dei:` facts, a PDF's from its cover page and file name
(`retriever_trt/documents/metadata.py`), so both answer alike; a sentence extract of the
cover would answer with the whole cover paragraph.
"""

from __future__ import annotations

import re
from enum import Enum

from pipeline.rag.fact_answer import targets
from pipeline.rag.query import Query
from pipeline.rag.short_answer import ShortAnswer
from retriever_trt.store import DocumentInfo


class CoverField(Enum):
    TICKER = "trading symbol"
    PERIOD_END = "period end"


_ASKS = (
    (CoverField.TICKER, re.compile(r"\b(?:trading|ticker) symbol\b|\bticker\b", re.I)),
    (CoverField.PERIOD_END, re.compile(r"\b(?:last day of|on what date did)\b.*\b(?:year|quarter)\b",
                                       re.I)),
)


def cover_field(question: str) -> CoverField | None:
    """The cover field the question asks for, or None."""
    return next((f for f, pattern in _ASKS if pattern.search(question)), None)


def answer_from_cover(query: Query, info: DocumentInfo) -> ShortAnswer | None:
    """The field's value in this filing; None when the question asks for no cover field
    or the filing's metadata lacks it."""
    field = cover_field(query.text)
    if field is CoverField.TICKER:
        value = info.metadata.ticker or None
    elif field is CoverField.PERIOD_END:
        ends = targets(query, info)
        value = f"{ends[-1].end:%B} {ends[-1].end.day}, {ends[-1].end.year}" if ends else None
    else:
        return None
    return ShortAnswer(value, "", "span") if value else None
