"""The filings question set answered by the filing answer rules alone, in process: the
corpus read into a store (no encoder, no index, no LLM), each question parsed, scoped to a
filing from the question alone, and answered from that filing's facts (tagged in an
inline-XBRL filing, read from the statement tables of a PDF one). What retrieval and the
table and text extracts add is measured by `filings_eval.py` without `--rules`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from retriever_trt.indexing.ingest import ingest


def rules_answers(corpus: Path, records: list[dict]) -> list[tuple[dict, dict, float]]:
    """(record, an /ask-like response, ms) for each record."""
    store = ingest(corpus)[0]
    answerer = FilingAnswerer(store)
    out = []
    for r in records:
        t0 = time.perf_counter()
        out.append((r, respond(answerer, r["question"]), (time.perf_counter() - t0) * 1000))
    return out


def respond(answerer: FilingAnswerer, question: str) -> dict[str, Any]:
    """The fields of /ask's response that the scoring reads."""
    query = answerer.parse(question)
    scope = answerer.scope(query, None)
    short = answerer.answer(query, scope)
    filing = answerer.filing_of(short, [], scope)
    sources = [{"id": short.cited.chunk_id, "doc_id": short.cited.doc_id}] if short.cited else []
    return {"short_answer": short.short_answer, "scale": short.scale,
            "answer_type": short.answer_type, "derivation": short.derivation,
            "citations": short.citations, "filing": filing, "sources": sources,
            "answer": short.prose()}
