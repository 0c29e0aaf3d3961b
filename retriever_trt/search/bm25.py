"""Okapi BM25 over the document store's chunks, with a tokenizer that keeps financial numbers.

Postings are stored as CSR arrays (one slice of chunk ids and term frequencies per term),
so a query costs one `np.bincount` over the postings of its terms: numpy only.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from retriever_trt.search.filters import without_accents

# Numbers first, so "1,234.5" stays one token rather than "1", "234", "5"; words may carry
# digits ("q4", "covid19"). Everything else (punctuation, "$", "%") separates tokens.
_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|[a-z][a-z0-9]*")

# Question words and function words: they dominate questions ("what is the ... in 2019")
# and carry nothing about which document holds the answer (on TAT-QA dev, dropping them
# lifts BM25 recall@5 from 0.76 to 0.81; folding plurals cost 1.6 points, so none is done).
STOPWORDS = frozenset(
    "a an and are as at be been by did do does for from had has have how in into is it its "
    "of on or than that the their then there these this those to was were what when where "
    "which while who whom why will with".split()
)


def tokenize(text: str) -> list[str]:
    """Lowercase terms and numbers, accents folded as Lucene's ASCII folding does
    ("Mondelēz" is "mondelez", as most people type it); "1,234.5" and "1234.5" both become
    "1234.5"."""
    out = []
    for tok in _TOKEN.findall(without_accents(text).lower()):
        if tok[0].isdigit():
            out.append(tok.replace(",", ""))
        elif tok not in STOPWORDS:
            out.append(tok)
    return out


# Lucene's and Robertson's usual saturation and length normalization; on TAT-QA dev among
# 556 reports, k1 0.8 / 2.0 and b 0.4 / 0.95 each answered fewer questions (RESULTS.md).
DEFAULT_K1 = 1.2
DEFAULT_B = 0.75


class BM25:
    """Okapi BM25 with Lucene's non-negative idf: log(1 + (N - df + 0.5) / (df + 0.5))."""

    def __init__(self, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> None:
        self.k1 = k1
        self.b = b
        self.vocab: dict[str, int] = {}
        self.indptr = np.zeros(1, dtype=np.int64)
        self.doc_ids = np.zeros(0, dtype=np.int32)
        self.tfs = np.zeros(0, dtype=np.float32)
        self.doc_len = np.zeros(0, dtype=np.float32)
        # Rows of removed documents: they keep their place (row i is chunk i of the store)
        # but hold no postings and count in neither N nor the average length.
        self.removed = np.zeros(0, dtype=bool)
        self._weights = np.zeros(0, dtype=np.float32)
        self._idf = np.zeros(0, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.doc_len)

    def fit(self, texts: Iterable[str]) -> BM25:
        self.vocab = {}
        self.indptr = np.zeros(1, dtype=np.int64)
        self.doc_ids = np.zeros(0, dtype=np.int32)
        self.tfs = np.zeros(0, dtype=np.float32)
        self.doc_len = np.zeros(0, dtype=np.float32)
        self.removed = np.zeros(0, dtype=bool)
        return self.extend(texts)

    def extend(self, texts: Iterable[str]) -> BM25:
        """Add rows after the last: only the new texts are tokenized; the postings are
        merged (a sort over term ids) and the weights recomputed, since N, df and the
        average length change with every document."""
        terms: list[int] = []
        docs: list[int] = []
        tfs: list[int] = []
        lengths: list[int] = []
        first = len(self.doc_len)
        for doc, text in enumerate(texts, first):
            tokens = tokenize(text)
            lengths.append(len(tokens))
            for term, tf in Counter(tokens).items():
                terms.append(self.vocab.setdefault(term, len(self.vocab)))
                docs.append(doc)
                tfs.append(tf)
        self._set_postings(np.concatenate([self._posting_terms(),
                                           np.asarray(terms, dtype=np.int64)]),
                           np.concatenate([self.doc_ids, np.asarray(docs, dtype=np.int32)]),
                           np.concatenate([self.tfs, np.asarray(tfs, dtype=np.float32)]))
        self.doc_len = np.concatenate([self.doc_len, np.asarray(lengths, dtype=np.float32)])
        self.removed = np.concatenate([self.removed, np.zeros(len(lengths), dtype=bool)])
        self._precompute()
        return self

    def remove(self, rows: np.ndarray) -> None:
        """Drop the postings of `rows` (a deleted document's chunks); the rows stay, empty."""
        if not len(rows):
            return
        self.removed[rows] = True
        keep = ~self.removed[self.doc_ids]
        self._set_postings(self._posting_terms()[keep], self.doc_ids[keep], self.tfs[keep])
        self._precompute()

    def _posting_terms(self) -> np.ndarray:
        """The term id of each posting (the CSR rows spelled out)."""
        return np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int64), np.diff(self.indptr))

    def _set_postings(self, terms: np.ndarray, docs: np.ndarray, tfs: np.ndarray) -> None:
        order = np.argsort(terms, kind="stable")
        counts = np.bincount(terms, minlength=len(self.vocab))
        self.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.doc_ids = docs[order].astype(np.int32)
        self.tfs = tfs[order].astype(np.float32)

    def _precompute(self) -> None:
        # Each posting's full BM25 contribution is fixed once the corpus is: store it, so a
        # query only sums the postings of its terms.
        live = self.doc_len[~self.removed]
        n = len(live)
        df = np.diff(self.indptr).astype(np.float32)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        self._idf = idf
        avgdl = float(live.mean()) if n and live.sum() else 1.0
        norm = self.k1 * (1 - self.b + self.b * self.doc_len[self.doc_ids] / avgdl)
        per_term_idf = np.repeat(idf, np.diff(self.indptr))
        self._weights = (per_term_idf * self.tfs * (self.k1 + 1) / (self.tfs + norm)).astype(
            np.float32
        )

    def idf_mass(self, terms: Iterable[str]) -> float:
        """The summed idf of `terms` (tokens as `tokenize` makes them): how specific a phrase
        is in this corpus. A term the corpus does not hold adds nothing."""
        return float(sum(self._idf[self.vocab[t]] for t in terms if t in self.vocab))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for `query` (each distinct query term counted once)."""
        ids = [self.vocab[t] for t in set(tokenize(query)) if t in self.vocab]
        if not ids:
            return np.zeros(len(self), dtype=np.float32)
        sl = np.concatenate([np.arange(self.indptr[i], self.indptr[i + 1]) for i in ids])
        return np.bincount(self.doc_ids[sl], self._weights[sl], minlength=len(self)).astype(
            np.float32
        )

    def search(self, queries: Sequence[str], k: int,
               subset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each (n, k), best first; chunks scoring 0 are left out (id -1).
        `subset`: score only these chunks (a metadata filter's rows)."""
        k_eff = min(k, len(self))
        out_scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        out_ids = np.full((len(queries), k), -1, dtype=np.int64)
        for row, query in enumerate(queries):
            s = self.scores(query)
            if subset is not None:
                allowed = np.zeros(len(s), dtype=bool)
                allowed[subset] = True
                s = np.where(allowed, s, 0)
            if k_eff == 0:
                continue
            top = np.argpartition(-s, k_eff - 1)[:k_eff]
            top = top[np.argsort(-s[top], kind="stable")]
            top = top[s[top] > 0]
            out_scores[row, : len(top)] = s[top]
            out_ids[row, : len(top)] = top
        return out_scores, out_ids

    def write(self, folder: Path) -> None:
        np.savez(
            folder / "bm25.npz",
            indptr=self.indptr,
            doc_ids=self.doc_ids,
            tfs=self.tfs,
            doc_len=self.doc_len,
            removed=self.removed,
        )
        terms = sorted(self.vocab, key=self.vocab.__getitem__)
        (folder / "bm25.json").write_text(json.dumps({"k1": self.k1, "b": self.b, "terms": terms}))

    @classmethod
    def read(cls, folder: Path) -> BM25:
        meta = json.loads((folder / "bm25.json").read_text())
        bm25 = cls(k1=float(meta["k1"]), b=float(meta["b"]))
        bm25.vocab = {t: i for i, t in enumerate(meta["terms"])}
        with np.load(folder / "bm25.npz") as arrays:
            bm25.indptr = arrays["indptr"]
            bm25.doc_ids = arrays["doc_ids"]
            bm25.tfs = arrays["tfs"]
            bm25.doc_len = arrays["doc_len"]
            # an index saved before deletions existed has no removed rows
            bm25.removed = (arrays["removed"] if "removed" in arrays.files
                            else np.zeros(len(bm25.doc_len), dtype=bool))
        bm25._precompute()
        return bm25
