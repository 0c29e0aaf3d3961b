"""BM25: the finance tokenizer and scores against a direct implementation of Okapi."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from retriever_trt.search.bm25 import BM25, tokenize

DOCS = [
    "Total revenue was $1,234.5 million in 2019, up from 1,100.0 in 2018.",
    "Operating costs rose in 2019 because of restructuring charges.",
    "The company repurchased shares under its buyback program.",
    "Revenue revenue revenue: revenue recognition policies for contracts with customers.",
    "Deferred tax assets and the valuation allowance at December 31, 2019.",
]


def test_tokenizer_keeps_numbers_and_drops_punctuation():
    toks = tokenize("What was Total Revenue of $1,234.5 (12.5%) in FY2019 and 2018?")
    assert "1234.5" in toks and "12.5" in toks and "2018" in toks and "fy2019" in toks
    assert "revenue" in toks and "total" in toks
    assert not {"what", "was", "in", "$", "%", "("} & set(toks)
    assert tokenize("1,234") == tokenize("1234") == ["1234"]
    assert tokenize("The Costs' total") == ["costs", "total"]


def test_accents_fold_so_a_name_typed_without_them_matches():
    assert tokenize("Mondelēz International, Nestlé") == tokenize("Mondelez International, Nestle")


def okapi(query: str, docs: list[str], k1: float, b: float) -> np.ndarray:
    """Textbook Okapi BM25 with Lucene's idf, one document at a time."""
    toks = [tokenize(d) for d in docs]
    avgdl = sum(map(len, toks)) / len(toks)
    out = []
    for doc in toks:
        tf, s = Counter(doc), 0.0
        for term in set(tokenize(query)):
            df = sum(term in d for d in toks)
            idf = math.log(1 + (len(toks) - df + 0.5) / (df + 0.5))
            s += idf * tf[term] * (k1 + 1) / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(s)
    return np.array(out)


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (2.0, 0.0), (0.5, 1.0)])
def test_scores_match_reference(k1, b):
    bm25 = BM25(k1, b).fit(DOCS)
    for query in ["revenue in 2019", "valuation allowance", "buyback shares costs", "nothing"]:
        np.testing.assert_allclose(bm25.scores(query), okapi(query, DOCS, k1, b), rtol=1e-5)


def test_search_ranks_and_pads():
    bm25 = BM25().fit(DOCS)
    scores, ids = bm25.search(["revenue 1,234.5", "zebra"], 4)
    assert ids[0, 0] == 0, "the number pins the document that contains it"
    assert list(ids[0, :2]) == [0, 3] and ids[0, 2] == -1, "non-matching chunks are left out"
    assert np.all(ids[1] == -1) and np.all(np.isneginf(scores[1]))
    assert scores[0, 0] > scores[0, 1] > 0


def test_saturation_and_length_normalisation():
    # k1 bounds repeated terms: doc 3 says "revenue" 5 times yet cannot score 5x doc 0.
    s = BM25(1.2, 0.0).fit(DOCS).scores("revenue")
    assert s[3] > s[0] and s[3] < 2.2 * s[0]


def test_write_read_roundtrip(tmp_path):
    bm25 = BM25(1.5, 0.6).fit(DOCS)
    bm25.write(tmp_path)
    back = BM25.read(tmp_path)
    assert (back.k1, back.b, len(back)) == (1.5, 0.6, len(DOCS))
    np.testing.assert_array_equal(back.scores("tax 2019"), bm25.scores("tax 2019"))


def test_idf_mass_sums_lucene_idf():
    bm25 = BM25().fit(DOCS)
    n = len(DOCS)

    def idf(df: int) -> float:
        return math.log1p((n - df + 0.5) / (df + 0.5))

    # "2019" is in three documents, "buyback" in one; a term the corpus lacks adds nothing.
    assert bm25.idf_mass(["2019"]) == pytest.approx(idf(3))
    assert bm25.idf_mass(["buyback", "2019", "unheard"]) == pytest.approx(idf(1) + idf(3))
    assert bm25.idf_mass(["buyback"]) > bm25.idf_mass(["2019"])
    assert bm25.idf_mass([]) == 0.0
