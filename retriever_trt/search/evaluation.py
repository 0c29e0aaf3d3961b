"""Retrieval evaluation on TAT-QA: context recall@k and MRR@k.

A question's context is the table + paragraphs it was written about; a retrieved chunk
is a hit when it comes from that context (its `sources["context"]`, the table uid).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from retriever_trt.search.retriever import Passage, Retriever


@dataclass(frozen=True)
class Question:
    text: str
    context: str
    answer_from: str


def tatqa_questions(path: str | Path, contexts: int | None = None) -> list[Question]:
    """The questions of the first `contexts` contexts (all when None)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))[:contexts]
    return [
        Question(q["question"], ctx["table"]["uid"], q.get("answer_from", ""))
        for ctx in data
        for q in ctx["questions"]
    ]


def first_hit(passages: Sequence[Passage], context: str) -> int | None:
    """1-based rank of the first passage from `context`, None if none."""
    for rank, p in enumerate(passages, 1):
        if p.sources.get("context") == context:
            return rank
    return None


def score(
    results: Sequence[Sequence[Passage]],
    questions: Sequence[Question],
    recall_at: Sequence[int] = (1, 5),
    mrr_at: int = 10,
) -> dict[str, float]:
    ranks = [first_hit(r, q.context) for r, q in zip(results, questions, strict=True)]
    n = max(len(ranks), 1)
    metrics = {f"recall@{k}": sum(r is not None and r <= k for r in ranks) / n for k in recall_at}
    metrics[f"mrr@{mrr_at}"] = sum(1 / r for r in ranks if r is not None and r <= mrr_at) / n
    return metrics


def evaluate(
    retriever: Retriever,
    questions: Sequence[Question],
    mode: str | None = None,
    recall_at: Sequence[int] = (1, 5),
    mrr_at: int = 10,
) -> dict[str, float]:
    depth = max(*recall_at, mrr_at)
    results = retriever.retrieve([q.text for q in questions], depth, mode=mode)
    return score(results, questions, recall_at, mrr_at)
