"""benchmarks/fact_probes.py on the filings of tests/data/filings: golds compared with the
figures read by hand from Apple's fiscal 2024 10-K (net sales 391,035, cost of sales 210,352,
Greater China net sales 66,952, in millions; 15,115,823,000 shares on the cover; Ernst &
Young LLP), every record re-checked by the held-out checker, and the output deterministic."""

from __future__ import annotations

import sys

import pytest

from tests.paths import FILINGS, REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from fact_probes import KINDS, check, generate  # noqa: E402

APPLE = "aapl-10-k-2024-11-01.html"
FY2024 = "2023-10-01..2024-09-28"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return generate(FILINGS, seed=7)


def one(records: list[dict], kind: str, doc_id: str, concept: str, period: str,
        dims: dict | None = None) -> dict:
    found = [r for r in records if r["type"] == kind and r["doc_id"] == doc_id
             and r["facts"] and r["facts"][0]["concept"] == concept
             and r["facts"][0]["period"] == period
             and r["facts"][0]["dimensions"] == (dims or {})]
    assert len(found) == 1, [r["question"] for r in found]
    return found[0]


def test_apple_net_sales_in_the_unit_asked(records: list[dict]) -> None:
    r = one(records, "period", APPLE,
            "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", FY2024)
    assert (r["unit"], r["answer"]) in {("USD millions", "391035"), ("USD billions", "391.0")}
    assert r["cells"] == ["Total net sales | 391,035"]


def test_apple_greater_china_segment(records: list[dict]) -> None:
    r = one(records, "segment", APPLE,
            "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", FY2024,
            {"us-gaap:StatementBusinessSegmentsAxis": "aapl:GreaterChinaSegmentMember"})
    assert "Greater China" in r["question"]
    assert (r["unit"], r["answer"]) in {("USD millions", "66952"), ("USD billions", "67.0")}


def test_apple_gross_margin(records: list[dict]) -> None:
    margins = [r for r in records if r["type"] == "ratio" and r["doc_id"] == APPLE
               and "gross margin" in r["question"] and r["facts"][0]["period"] == FY2024]
    assert [r["answer"] for r in margins] == ["46.2"]  # (391,035 - 210,352) / 391,035
    assert margins[0]["derivation"] == "(391035 - 210352) / 391035 * 100"


def test_apple_cover(records: list[dict]) -> None:
    cover = {r["facts"][0]["concept"]: r["answer"] for r in records
             if r["type"] == "cover" and r["doc_id"] == APPLE and r["unit"] != "list"}
    assert cover["dei:AuditorName"] == "Ernst & Young LLP"
    assert cover["dei:EntityCommonStockSharesOutstanding"] == "15115823000"


def test_absent_golds_are_null_and_compares_name_both(records: list[dict]) -> None:
    absent = [r for r in records if r["type"] in ("absent", "foreign_segment")]
    assert absent and all(r["answer"] is None and r["note"] for r in absent)
    later = [r for r in absent if r["doc_id"] == "tsla-10-q-2025-07-24.html"
             and ("third quarter of 2025" in r["question"] or "Q3 2025" in r["question"])]
    assert later and all(r["absent"]["ends_within"] == "2025-07-01..2025-10-08" for r in later)
    compares = [r for r in records if r["type"] == "compare"]
    assert compares and all(len(set(r["doc_ids"])) == 2 for r in compares)


def test_every_gold_passes_the_heldout_checker(records: list[dict]) -> None:
    assert {r["type"] for r in records} == set(KINDS)
    assert check(records, FILINGS) == []


def test_deterministic_and_limited(records: list[dict]) -> None:
    assert generate(FILINGS, seed=7) == records
    few = generate(FILINGS, kinds=("period", "cover"), limit=2, seed=7)
    per = {(r["doc_id"], r["type"]) for r in few}
    assert all(sum((r["doc_id"], r["type"]) == k for r in few) <= 2 for k in per)
    assert [r["half"] for r in few if r["type"] == "period"][:4] == ["a", "b", "a", "b"]
