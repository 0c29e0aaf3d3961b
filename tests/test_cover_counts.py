"""The share count a printed cover states, read as the cover's tagged fact would be: one
count of common shares and its date, never the non-affiliates' shares of the public float's
sentence nor one of several classes' counts (covers as Apple, Boeing and Meta print them)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from filing_shelf import FILINGS

from pipeline.rag.answers.filings.cover.cover_counts import SHARES_CONCEPT, cover_share_count
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from retriever_trt.indexing.ingest import ingest
from retriever_trt.store.document_store import Chunk


def _cover(*texts: str) -> list[Chunk]:
    return [Chunk(f"x.pdf#{i}", "x.pdf", "X", text, {"page": "1"}) for i, text in
            enumerate(texts)]


def test_the_covers_one_count_and_its_date() -> None:
    got = cover_share_count(_cover(
        "As of June 30, 2024, there were 615,530,689 shares of common stock outstanding held "
        "by non-affiliates of the registrant, and the aggregate market value was $112 billion.",
        "15,115,823,000 shares of common stock were issued and outstanding as of October 18, "
        "2024."))
    assert got is not None and got.concept == SHARES_CONCEPT
    assert (got.value, got.end) == (Decimal("15115823000"), date(2024, 10, 18))


def test_several_classes_state_no_one_count() -> None:
    assert cover_share_count(_cover(
        "On January 24, 2025, the registrant had 2,189,898,148 shares of Class A common stock "
        "and 343,761,117 shares of Class B common stock outstanding.")) is None


def test_a_printed_cover_answers_shares_outstanding(tmp_path) -> None:
    """Apple's printed 10-K: the cover's count, not the income statement's weighted average."""
    (tmp_path / "aapl.pdf").write_bytes((FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf").read_bytes())
    answerer = FilingAnswerer(ingest(tmp_path)[0])
    q = answerer.parse("How many shares of common stock did Apple have outstanding per its "
                       "10-K cover, in millions?")
    got = answerer.answer(q, answerer.scope(q, None))
    assert (got.short_answer, got.scale) == ("15115.823", "million"), got.prose()
