"""Retrieval recall@5 over the 25 HTML filings by table piece size and prose overlap:
chunks against recall.

    python3 benchmarks/filings_retrieval.py [--table-tokens 120 224] [--overlap 40 20]
        [--questions FILE ...]

For each size (`retriever_trt.indexing.chunking.TABLE_PIECE_TOKENS`, the least a table piece may
hold; 120 is the server's chunk_tokens, which prose keeps) and each overlap of consecutive
prose chunks (default: `chunking.DEFAULT_OVERLAP`, the server's) the filings are indexed as
`finrag index` does (the default INT8 encoder, hybrid retrieval with the row match, the
server's weights) and each question of the sets (default:
benchmarks/data/filings_questions.jsonl and filings_heldout.jsonl) retrieves 5 passages,
unscoped. Two hits are counted:
- filing: a passage from the question's filing (either filing of a compare question);
- cell: a passage from that filing holding every part of the question's first gold cell
  ("Diluted | 6.13": the row label and the value; a text answer's span).
Prints the chunks, the distinct texts encoded, the index seconds and both recalls a set.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from filings_eval import Corpus, corpus_folder  # noqa: E402
from filings_gold import FILINGS, load_questions  # noqa: E402
from reproduce import print_command  # noqa: E402

import retriever_trt.indexing.chunking as chunking  # noqa: E402
from pipeline.settings import Settings  # noqa: E402
from retriever_trt.embedders.loader import default_embedder  # noqa: E402
from retriever_trt.search.retriever import Passage, Retriever  # noqa: E402

SETS = (ROOT / "benchmarks/data/filings_questions.jsonl",
        ROOT / "benchmarks/data/filings_heldout.jsonl")
TOP_K = 5


def gold_filings(record: dict) -> set[str]:
    ids = record.get("doc_ids") or [record["doc_id"]]
    return {PurePosixPath(i).stem for i in ids}


def hits(record: dict, passages: list[Passage]) -> tuple[bool, bool]:
    """(a passage of the filing, a passage of the filing holding the first gold cell)."""
    own = [p for p in passages if PurePosixPath(p.doc_id).stem in gold_filings(record)]
    cells = record.get("cells") or []
    parts = [part.strip() for part in cells[0].split(" | ")] if cells else []
    return bool(own), bool(parts) and any(all(x in p.text for x in parts) for p in own)


def evaluate(retriever: Retriever, records: list[dict]) -> tuple[float, float, int]:
    found = retriever.retrieve([r["question"] for r in records], TOP_K)
    scored = [hits(r, ps) for r, ps in zip(records, found, strict=True)]
    with_cells = [c for r, (_, c) in zip(records, scored, strict=True) if r.get("cells")]
    return (sum(f for f, _ in scored) / len(scored), sum(with_cells) / max(len(with_cells), 1),
            len(with_cells))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table-tokens", type=int, nargs="+", default=[120, 224])
    ap.add_argument("--overlap", type=int, nargs="+", default=[chunking.DEFAULT_OVERLAP],
                    help="tokens consecutive prose chunks share (default: the server's)")
    ap.add_argument("--questions", type=Path, nargs="+", default=list(SETS))
    ap.add_argument("--filings", type=Path, default=FILINGS)
    ap.add_argument("--engines-dir", type=Path, default=ROOT / "engines")
    args = ap.parse_args()
    print_command(__file__)
    settings = Settings()
    embedder = default_embedder(args.engines_dir, progress=False)
    corpus = corpus_folder(args.filings, Corpus.HTML, args.engines_dir)
    sets = {path.name: load_questions(path) for path in args.questions}
    for size, overlap in itertools.product(args.table_tokens, args.overlap):
        chunking.TABLE_PIECE_TOKENS = size
        t0 = time.perf_counter()
        retriever = Retriever.from_corpus(
            embedder, corpus, chunk_tokens=settings.chunk_tokens, overlap=overlap,
            progress=False, mode=settings.retrieval_mode, rrf_k=settings.rrf_k,
            bm25_weight=settings.bm25_weight, row_match_weight=settings.row_match_weight)
        seconds = time.perf_counter() - t0
        report = retriever.ingest_report
        line = [f"table pieces <= {size} tokens, overlap {overlap}: {len(retriever.store)} "
                f"chunks ({report.encoded} encoded) in {seconds:.1f} s"]
        for name, records in sets.items():
            filing, cell, n = evaluate(retriever, records)
            line.append(f"{name}: recall@5 filing {filing:.3f} ({len(records)}), "
                        f"cell {cell:.3f} ({n})")
        print("; ".join(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
