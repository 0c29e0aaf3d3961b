"""The shape every held-out question set's records share (`benchmarks/data/filings_heldout*.jsonl`;
`benchmarks/filings_heldout_check.py` re-checks their golds against the filings)."""

from __future__ import annotations

from decimal import Decimal

HELDOUT_KINDS = {"segment", "quarter", "jargon", "ratio", "compare", "cover", "absent", "text"}


def assert_heldout_records(records: list[dict], least: int) -> None:
    """At least `least` records with unique ids, every kind in both halves, golds of the
    right shape: absent ones null with a note, lists of several spans, numbers with their
    decimals, compare questions naming two filings."""
    assert len(records) >= least and len({r["id"] for r in records}) == len(records)
    assert {(r["type"], r["half"]) for r in records} == {(k, h) for k in HELDOUT_KINDS
                                                          for h in "ab"}
    for r in records:
        doc_ids = r.get("doc_ids") or [r["doc_id"]]
        assert r["doc_id"] == doc_ids[0], r["id"]
        if r["type"] == "absent":
            assert r["answer"] is None and r["absent"] and r["note"], r["id"]
        elif isinstance(r["answer"], list):
            assert len(r["answer"]) > 1, r["id"]
        elif r["unit"] != "text":
            Decimal(r["answer"])
            assert isinstance(r["decimals"], int), r["id"]
        if r["type"] == "compare":
            assert len(set(doc_ids)) == 2, r["id"]
