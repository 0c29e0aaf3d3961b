"""The share count a printed filing's cover states ("15,115,823,000 shares of common stock
were issued and outstanding as of October 18, 2024"; "The registrant had 927,264,332 shares
of common stock outstanding at February 10, 2025"), as the fact an inline-XBRL cover tags it
with (`dei:EntityCommonStockSharesOutstanding`): a PDF has no tags, and the statements'
weighted averages are no count at a date. A cover listing several classes, or counting the
shares non-affiliates hold (the public float's sentence), states no one count: none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal

from pipeline.rag.answers.question_words import named_dates
from retriever_trt.documents.model import Fact
from retriever_trt.store.document_store import Chunk

SHARES_CONCEPT = "dei:EntityCommonStockSharesOutstanding"
# The cover's pages: the count sits on the first, or the second where the cover runs on.
COVER_PAGES = 2
_SENTENCE = re.compile(r"[^.;]*\boutstanding\b[^.;]*", re.I)
_COUNT = re.compile(r"(?<![\d,.$])\d{1,3}(?:,\d{3}){2,}(?![\d,])")
_SHARES = re.compile(r"\bshares\b", re.I)
_NOT_ONE_COUNT = re.compile(r"non-?affiliates|aggregate market value|\bclass\s+[a-c]\b|"
                            r"\bpreferred\b", re.I)


def cover_share_count(chunks: Iterable[Chunk]) -> Fact | None:
    """The cover's one count of common shares outstanding and its date, or None."""
    text = " ".join(c.text for c in chunks if not c.table and
                    int(c.sources.get("page", "0") or 0) <= COVER_PAGES)
    for m in _SENTENCE.finditer(" ".join(text.split())):
        sentence = m.group(0)
        counts = _COUNT.findall(sentence)
        dates = named_dates(sentence)
        if len(set(counts)) != 1 or not dates or not _SHARES.search(sentence) or \
                _NOT_ONE_COUNT.search(sentence):
            continue
        shown = counts[0]
        return Fact("cover-shares", SHARES_CONCEPT, Decimal(shown.replace(",", "")),
                    "shares", dates[0], None, (), 0, 0, shown)
    return None
