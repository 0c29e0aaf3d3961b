"""Agreement between two embedders' vectors, and retrieval recall on TAT-QA."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def mean_cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Mean row-wise cosine of two (n, dim) L2-normalised arrays."""
    return float((a * b).sum(-1).mean())


def nn_agreement(ref: np.ndarray, other: np.ndarray) -> float:
    """Share of rows whose nearest neighbour (excluding itself) is the same in both spaces."""
    def nn(x: np.ndarray) -> np.ndarray:
        sims = x @ x.T
        np.fill_diagonal(sims, -np.inf)
        return sims.argmax(1)

    return float((nn(ref) == nn(other)).mean())


def load_tatqa_retrieval(path: Path, max_contexts: int | None = None) -> tuple[
    list[str], list[str], list[set[int]]
]:
    """(paragraphs, questions, gold paragraph indices per question) from TAT-QA JSON.

    Only questions with `rel_paragraphs` count: table-only answers have no gold passage.
    """
    data = json.loads(Path(path).read_text())[:max_contexts]
    paras: list[str] = []
    questions: list[str] = []
    gold: list[set[int]] = []
    for ctx in data:
        index = {}
        for p in ctx["paragraphs"]:
            index[str(p["order"])] = len(paras)
            paras.append(p["text"])
        for q in ctx["questions"]:
            rel = {index[r] for r in q.get("rel_paragraphs", []) if r in index}
            if rel:
                questions.append(q["question"])
                gold.append(rel)
    return paras, questions, gold


def recall_at_k(q_emb: np.ndarray, p_emb: np.ndarray, gold: list[set[int]], k: int = 5) -> float:
    """Share of questions with at least one gold paragraph among the top k."""
    top = np.argsort(-(q_emb @ p_emb.T), axis=1)[:, :k]
    return float(np.mean([bool(gold[i] & set(top[i].tolist())) for i in range(len(gold))]))
