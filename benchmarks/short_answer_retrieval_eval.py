"""Short answers over retrieved passages (BM25 over all of TAT-QA dev, as the server indexes
it), without the LLM: what /ask's computed answers score before the model is involved.

Each question sees only the tables of its top-k passages' documents, as in the server.
Contexts split by index parity as in oracle_answer_eval.py (even: development, odd: held out).
The end-to-end figure with the real server is benchmarks/answer_eval.py's.

    python benchmarks/short_answer_retrieval_eval.py [--top-k 5] [--data PATH]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oracle_answer_eval import DEFAULT_DATA, TYPES  # noqa: E402
from tatqa_metric import score  # noqa: E402

from pipeline.rag.answers.short_answer import TableSource, short_answer_for  # noqa: E402
from retriever_trt.indexing.ingest import load_corpus  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--top-k", type=int, default=5)
    args = ap.parse_args()
    contexts = json.loads(Path(args.data).read_text(encoding="utf-8"))
    store = load_corpus(args.data)
    store.build_bm25()
    tables = TableSource(store, cache_size=len(contexts) + 1)
    questions = [(n, q) for n, ctx in enumerate(contexts) for q in ctx["questions"]]
    scores, ids = store.bm25.search([q["question"] for _, q in questions], args.top_k)
    stats = {h: collections.defaultdict(lambda: [0, 0.0, 0]) for h in ("even", "odd")}
    for (n, q), row_ids, row_scores in zip(questions, ids, scores, strict=True):
        passages = [SimpleNamespace(chunk_id=store[i].chunk_id, doc_id=store[i].doc_id,
                                    score=float(s))
                    for i, s in zip(row_ids, row_scores, strict=True) if i >= 0]
        got = short_answer_for(q["question"], passages, tables)
        s = score(q, got.short_answer, got.scale)
        half = "even" if n % 2 == 0 else "odd"
        for key in (q["answer_type"], "all"):
            stats[half][key][0] += 1
            stats[half][key][1] += s.em
            stats[half][key][2] += got.short_answer is not None
    print(f"short answers over BM25 top-{args.top_k} passages of {args.data} (no LLM)")
    print(f"{'half':5} {'type':11} {'n':>5} {'EM%':>6} {'answered%':>9}")
    for half in ("even", "odd"):
        for key in (*TYPES, "all"):
            n, em, answered = stats[half][key]
            if n:
                print(f"{half:5} {key:11} {n:5d} {100 * em / n:6.1f} {100 * answered / n:9.1f}")
    print(f"command: python benchmarks/short_answer_retrieval_eval.py --top-k {args.top_k}")


if __name__ == "__main__":
    main()
