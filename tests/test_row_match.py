"""The tables' row match: a question naming a row finds the table that has it, through the
real parts (BM25, the MiniLM embedder, a FAISS index), where plain chunks rank it lower."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from retriever_trt.indexing.chunking import pack_table, render_table
from retriever_trt.search.bm25 import BM25
from retriever_trt.search.retriever import DEFAULT_ROW_MATCH_WEIGHT, Retriever
from retriever_trt.search.row_match import RowMatcher, label_terms, piece_labels
from retriever_trt.store.document_store import Chunk, DocumentStore

QUESTION = "What was the change in accrued expenses from 2018 to 2019?"

# The table with the row the question names, among many rows ...
GOLD = [["", "2019", "2018"],
        ["Cash and cash equivalents", "1,204", "1,187"],
        ["Accounts receivable, net", "3,310", "2,905"],
        ["Inventories", "880", "912"],
        ["Prepaid expenses and other current assets", "415", "388"],
        ["Accounts payable", "2,020", "1,870"],
        ["Accrued expenses", "1,532", "1,219"],
        ["Deferred revenue", "604", "570"],
        ["Total current liabilities", "4,156", "3,659"]]
# ... and short tables that say "accrued", "expenses", "change", 2018 and 2019 more often,
# in rows of other names: bags of words that BM25 and the encoder prefer.
DISTRACTORS = [
    [["", "2019", "2018", "Change"],
     ["Accrued interest", "12", "10", "2"],
     ["Change in operating expenses", "(40)", "35", "(75)"],
     ["Expenses accrued for restructuring, change", "18", "9", "9"]],
    [["", "2019", "2018", "Change"],
     ["Accrued bonuses change", "7", "5", "2"],
     ["Other expenses", "22", "25", "(3)"]],
    [["", "2019", "2018"],
     ["Change in accrued liabilities", "31", "12"],
     ["Selling expenses", "140", "133"]],
]


def context(uid: str, rows: list[list[str]], text: str) -> dict:
    return {"table": {"uid": uid, "table": rows},
            "paragraphs": [{"uid": f"{uid}-p", "order": 1, "text": text}], "questions": []}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    contexts = [context("gold", GOLD, "The balance sheet at fiscal year end.")]
    contexts += [context(f"other{i}", rows, "Other items of the year are explained below.")
                 for i, rows in enumerate(DISTRACTORS)]
    path = tmp_path_factory.mktemp("rows") / "corpus.json"
    path.write_text(json.dumps(contexts))
    return path


@pytest.fixture(scope="module")
def retriever(embedder, corpus: Path) -> Retriever:
    return Retriever.from_corpus(embedder, corpus, progress=False)


def first_context(retriever: Retriever, mode: str) -> str:
    (passages,) = retriever.retrieve([QUESTION], 3, mode=mode)
    return passages[0].sources["context"]


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_the_table_with_the_named_row_comes_first(retriever, mode):
    assert retriever.row_match_weight == DEFAULT_ROW_MATCH_WEIGHT > 0
    assert first_context(retriever, mode) == "gold"


def test_plain_chunks_rank_another_table_first(retriever):
    """Without the row match the same index puts a distractor first: the test above is
    won by the row match, not by the corpus."""
    retriever.row_match_weight = 0.0
    try:
        assert first_context(retriever, "bm25") != "gold"
        assert first_context(retriever, "hybrid") != "gold"
    finally:
        retriever.row_match_weight = DEFAULT_ROW_MATCH_WEIGHT


def test_a_question_naming_no_row_keeps_the_fusion(retriever):
    question = ["What do the paragraphs say about the balance sheet?"]
    with_rows = [p.chunk_id for p in retriever.retrieve(question, 5)[0]]
    retriever.row_match_weight = 0.0
    try:
        assert [p.chunk_id for p in retriever.retrieve(question, 5)[0]] == with_rows
    finally:
        retriever.row_match_weight = DEFAULT_ROW_MATCH_WEIGHT


def test_label_terms_are_the_words_of_the_label():
    assert label_terms("Other assets(1)") == {"other", "assets"}
    assert label_terms("Balance at December 31, 2019") == {"balance", "december"}
    assert label_terms("2019") == frozenset()


def test_a_split_table_piece_shows_only_its_own_rows():
    head, body = render_table(GOLD)
    pieces = pack_table(head, body, max_tokens=16, count=lambda words: [1] * len(words))
    assert len(pieces) > 2
    chunks = [Chunk(f"t/{i}", "t", "", text, {}, GOLD) for i, text in enumerate(pieces)]
    shown = [piece_labels(c) for c in chunks]
    assert sum(len(s) for s in shown) == len(GOLD) - 1   # each body row in one piece
    assert piece_labels(Chunk("p", "p", "", "Accrued expenses rose.", {})) == []


def test_the_most_specific_named_label_wins():
    """"Total current liabilities" (three words, two of them rare) outranks "Accounts
    payable" when the question names both; a label only half named counts nothing."""
    chunks = [Chunk("a", "a", "", "Accounts payable | 2,020", {}, [["", "2019"],
                                                                 ["Accounts payable", "2,020"]]),
              Chunk("b", "b", "", "Total current liabilities | 4,156", {},
                    [["", "2019"], ["Total current liabilities", "4,156"]]),
              Chunk("c", "c", "", "Accounts receivable | 3,310", {},
                    [["", "2019"], ["Accounts receivable", "3,310"]])]
    store = DocumentStore(chunks)
    store.bm25 = BM25().fit(c.text for c in chunks)
    matcher = RowMatcher(store)
    question = "What share of total current liabilities were accounts payable in 2019?"
    ranked = matcher.rank(question, np.arange(3))
    assert ranked.tolist() == [1, 0]


def test_one_common_word_of_a_long_question_names_no_row():
    """"Cost" is a whole label inside "What is the company paid on a cost-plus contract?",
    but too small a share of the question to be the row it asks about."""
    chunks = [Chunk("t", "t", "", "Cost | 12", {}, [["", "2019"], ["Cost", "12"]]),
              Chunk("p", "p", "", "On a cost-plus contract the company is paid its costs.", {}),
              Chunk("q", "q", "", "Cost of revenue rose; the company paid more.", {})]
    store = DocumentStore(chunks)
    store.bm25 = BM25().fit(c.text for c in chunks)
    question = "What is the company paid on a cost-plus contract?"
    assert RowMatcher(store).rank(question, np.arange(3)).tolist() == []
    assert RowMatcher(store, min_share=0.0).rank(question, np.arange(3)).tolist() == [0]
    assert RowMatcher(store).rank("What was the cost in 2019?", np.arange(3)).tolist() == [0]
