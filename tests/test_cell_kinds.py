"""No arithmetic across cells of different kinds: dollars are not added to a percent change,
nor a share count averaged with a percentage; the refusal says why."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipeline.rag.answers.question import operation
from pipeline.rag.answers.short_answer import TableSource, answer_question, short_answer_for
from pipeline.rag.answers.tables.cell_kinds import CellKind, MixedKinds, check_same_kind, kind_of
from retriever_trt.documents.tables import parse_table
from retriever_trt.store.document_store import Chunk

# A sales table with the year-on-year change in percent beside the amounts.
SALES = [["", "F19", "F18", "F18"],
         ["", "53 WEEKS", "52 WEEKS", "CHANGE"],
         ["Sales", "1,200", "1,000", "20.0%"],
         ["Shares outstanding", "300", "310", "(3.2)%"],
         ["Gross margin", "41.2%", "38.0%", "3.2"]]


def _cells(rows: list[list[str]], *at: tuple[int, int]):
    table = parse_table(rows, [])
    return [table.cell(i, j) for i, j in at]


def test_a_cell_is_a_percentage_a_count_or_an_amount() -> None:
    sales, shares, margin = _cells(SALES, (2, 1), (3, 1), (4, 1))
    assert (kind_of(sales), kind_of(shares), kind_of(margin)) == (
        CellKind.AMOUNT, CellKind.COUNT, CellKind.PERCENT)
    (change,) = _cells(SALES, (2, 3))
    assert kind_of(change) == CellKind.PERCENT
    eps = _cells([["", "2019"], ["Earnings per share", "1.20"]], (1, 1))[0]
    assert kind_of(eps) == CellKind.AMOUNT  # per share is money, not a share count


def test_adding_or_averaging_two_kinds_is_refused_with_the_reason() -> None:
    sales, change = _cells(SALES, (2, 1), (2, 3))
    with pytest.raises(MixedKinds) as refused:
        check_same_kind("average", [sales, change])
    assert "Sales (F18 CHANGE) is a percentage" in refused.value.reason
    assert "an amount" in refused.value.reason
    check_same_kind("average", _cells(SALES, (2, 1), (2, 2)))  # one kind: computed
    check_same_kind("ratio", [sales, change])  # a ratio may relate two kinds


def test_a_mixed_computation_gives_no_number_and_the_prose_says_why() -> None:
    q = "What is the sum of the Sales and Gross margin in F19?"
    table = parse_table(SALES, [])
    refusals: list[str] = []
    assert answer_question(operation(q), [table], refusals) is None
    assert refusals and "Gross margin (F19 53 WEEKS) is a percentage" in refusals[0]
    store = SimpleNamespace(document=lambda doc_id: [
        Chunk("d1/table/0", "d1", "", "Sales", {"table": "t0"}, SALES)])
    passages = [SimpleNamespace(doc_id="d1", chunk_id="d1/table/0", score=1.0)]
    got = short_answer_for(q, passages, TableSource(store))
    assert got.short_answer is None
    assert got.prose().startswith("I cannot give a number: the figures it would take are of "
                                  "different kinds")
