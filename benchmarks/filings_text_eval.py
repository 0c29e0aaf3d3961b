"""Short answers from the prose of real SEC filings, in process: the answer rules of
/ask (tagged facts, then the retrieved tables and text: `RAGPipeline._short_answer`) over
the 25 filings, without the encoder or the LLM.

    python3 benchmarks/filings_text_eval.py [--questions FILE] [--filings DIR] [--type TYPE]
        [--half a|b|all] [--show]

Each question is parsed and scoped to its filing as /ask does (`FilingAnswerer`); the
passages are BM25's top `table_top_k` within that scope (the server fuses BM25 with dense
retrieval: this is the sparse half of it). Scored as filings_eval.py scores (filings_score.py):
EM of /ask's short answer (the tagged facts first: a figure they lack is said so, and no
sentence stands in), and EM of the text rules' extract alone.
The default set, benchmarks/data/filings_prose_dev.jsonl, is the text rules' development
set: head counts, headquarters, store counts, dates, amounts and lists asked of the
filings' prose, each gold checked against its `evidence`, the filing's own words. The
held-out set (`--questions benchmarks/data/filings_heldout.jsonl --type text`) is scored,
not shown: --show prints wrong answers of the development set only, and of a held-out set's
half a (`--half a`; its half b is scored, never shown). `--filings` reads another shelf
(engines/unseen-shelfN of `unseen_shelf.py`) for its question set.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from filings_eval import Corpus, corpus_folder  # noqa: E402
from filings_gold import FILINGS  # noqa: E402
from filings_score import is_right  # noqa: E402
from reproduce import print_command  # noqa: E402

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer  # noqa: E402
from pipeline.rag.answers.short_answer import ShortAnswer, TableSource, text_short_answer  # noqa: E402
from pipeline.rag.pipeline import RAGPipeline  # noqa: E402
from pipeline.settings_sources import load_settings  # noqa: E402
from retriever_trt.indexing.ingest import ingest  # noqa: E402

DEV = ROOT / "benchmarks" / "data" / "filings_prose_dev.jsonl"
HELDOUT = ROOT / "benchmarks" / "data" / "filings_heldout.jsonl"


def rules_pipeline(store: Any) -> RAGPipeline:
    """The pipeline's answer rules over `store`; no engine or encoder is started (the short
    answer needs neither)."""
    pipe = RAGPipeline.__new__(RAGPipeline)
    pipe.settings = load_settings()
    pipe.tables, pipe.filings = TableSource(store), FilingAnswerer(store)
    return pipe


def short_answer(pipe: RAGPipeline, bm25: Any, question: str) -> tuple[ShortAnswer, Any]:
    """/ask's short answer, and the text rules' extract alone (None without one)."""
    store = pipe.tables.store
    query = pipe.filings.parse(question, None)
    scope = pipe.filings.scope(query, None)
    rows = store.rows_where(scope.filter) if scope.filter is not None else None
    _, ids = bm25.search([question], pipe.settings.table_top_k, rows)
    passages = [SimpleNamespace(doc_id=store[i].doc_id, chunk_id=store[i].chunk_id, score=1.0)
                for i in ids[0] if i >= 0]
    return (pipe._short_answer(query, scope, passages, passages),
            text_short_answer(query, passages, store))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", default=str(DEV), help="a question set (jsonl)")
    ap.add_argument("--filings", default=None, help="a folder of filings (default: the 25)")
    ap.add_argument("--type", default=None, help="only the questions of this type")
    ap.add_argument("--half", choices=("a", "b", "all"), default="all",
                    help="only one half of a held-out set")
    ap.add_argument("--show", action="store_true", help="print the wrong answers (not held out)")
    args = ap.parse_args(argv)
    path = Path(args.questions)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    records = [r for r in records if args.type in (None, r["type"])
               and args.half in ("all", r.get("half"))]
    if not records:
        raise SystemExit(f"{path}: no questions of type {args.type}")
    filings = Path(args.filings) if args.filings else corpus_folder(FILINGS, Corpus.HTML)
    store = ingest(filings)[0]
    pipe, bm25 = rules_pipeline(store), store.build_bm25()
    by_kind: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    t0 = time.perf_counter()
    for r in records:
        got, text = short_answer(pipe, bm25, r["question"])
        right = is_right(r, {"short_answer": got.short_answer, "scale": got.scale})
        alone = text is not None and is_right(r, {"short_answer": text.short_answer,
                                                   "scale": text.scale})
        by_kind[r.get("kind", r["type"])].append((right, alone))
        by_kind["overall"].append((right, alone))
        if args.show and not right and path.resolve() != HELDOUT.resolve() \
                and r.get("half") != "b":
            print(f"WRONG {r['id']}: {r['question']}\n  gold {r['answer']!r}\n  got  "
                  f"{got.short_answer!r} {got.scale!r}\n  from {got.quote!r}")
    ms = 1000 * (time.perf_counter() - t0) / len(records)
    print(f"\n{path.name}{' type ' + args.type if args.type else ''}: {len(records)} questions, "
          f"answer rules in process, {ms:.0f} ms a question")
    print(f"  {'kind':10} {'n':>4}  {'EM':>5}  {'text extract alone':>18}")
    for kind, hits in by_kind.items():
        em, alone = (100 * sum(h[i] for h in hits) / len(hits) for i in (0, 1))
        print(f"  {kind:10} {len(hits):4}  {em:5.1f}  {alone:18.1f}")
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
