"""Row match: retrieved table pieces ranked by the row of theirs that the question names.

BM25 and the encoder see a table piece as a bag of words, so "the change in deferred
revenue" scores as well on a table that says "deferred" in one row and "revenue" in
another as on the table with a "Deferred revenue" row. A finance question names its line
item by the row's label, so a piece ranks here by the most specific of its row labels
whose words the question holds all of (specific: the summed BM25 idf of the label's
words), and that ranking is fused with the dense and BM25 rankings
(`Retriever`, `DEFAULT_ROW_MATCH_WEIGHT`).

The question is read with BM25's own tokenizer: the same terms, the same stopwords, no
second parser.
"""

from __future__ import annotations

import numpy as np

from retriever_trt.documents.tables import parse_table
from retriever_trt.search.bm25 import tokenize
from retriever_trt.store.document_store import Chunk, DocumentStore

LabelTerms = frozenset[str]

# A label names the row asked about only when it carries this share of the question's idf
# mass: one common word of a long question ("Cost" of "What is the company paid on a
# cost-plus contract?") does not. Chosen on half a of TAT-QA dev among 0 to 0.4 (hybrid
# recall@5, then MRR@10; benchmarks/retrieval_eval.py --choose-row-match).
MIN_QUESTION_SHARE = 0.2


def label_terms(label: str) -> LabelTerms:
    """The words of a row label, as BM25 tokenizes them, numbers left out: they are
    footnote marks ("Other assets(1)") or years ("Balance at December 31, 2019"), which the
    question need not repeat for the row to be the one it asks about (on half a of TAT-QA
    dev, BM25 with the row match had the context in its top 5 for 87.3% of the questions
    so, 86.2% with the labels' numbers kept)."""
    return frozenset(t for t in tokenize(label) if not t[0].isdigit())


def piece_labels(chunk: Chunk) -> list[LabelTerms]:
    """The row labels shown in a table piece (a split table's pieces each show their own
    rows, though every piece carries the whole table); none for a passage of prose."""
    if not chunk.table:
        return []
    table = parse_table(chunk.table)
    labels = {label for label in table.row_labels[table.n_header:] if label in chunk.text}
    return [terms for terms in map(label_terms, labels) if terms]


class RowMatcher:
    """Ranks a question's candidate chunks by their best row match; the label terms of a
    store row are read from its table once, when it is first a candidate (row i stays
    chunk i until the store is rebuilt, so they never go stale)."""

    def __init__(self, store: DocumentStore, min_share: float = MIN_QUESTION_SHARE) -> None:
        self.store, self.min_share = store, min_share
        self._labels: dict[int, list[LabelTerms]] = {}

    def score(self, question_terms: set[str], row: int, floor: float = 0.0) -> float:
        """The idf mass of the most specific row label of chunk `row` that the question
        names whole, if at least `floor`; 0 when it names none."""
        labels = self._labels.get(row)
        if labels is None:
            labels = self._labels[row] = piece_labels(self.store[row])
        masses = (self.store.bm25.idf_mass(terms) for terms in labels if terms <= question_terms)
        return max((m for m in masses if m >= floor), default=0.0)

    def rank(self, question: str, candidates: np.ndarray) -> np.ndarray:
        """The candidates (store rows) that name a row of the question, best match first;
        ties keep the candidates' order."""
        terms = set(tokenize(question))
        floor = self.min_share * self.store.bm25.idf_mass(terms)
        scores = np.array([self.score(terms, row, floor) for row in candidates.tolist()],
                          dtype=np.float64)
        order = np.argsort(-scores, kind="stable")
        return candidates[order[scores[order] > 0]]
