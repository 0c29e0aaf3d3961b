"""Context recall@1/@5 and MRR@10 of dense, BM25 and hybrid retrieval on TAT-QA dev.

    python3 benchmarks/retrieval_eval.py [--embedder PATH] [--factory Flat] [--contexts N]
        [--bm25-weight W] [--rrf-k K] [--row-match-weight W] [--choose-weights]
        [--choose-row-match] [--with-test-reports]

The corpus is every context's table and paragraphs, chunked as the server does (its
chunk_tokens); a question is answered right when a retrieved chunk comes from its own
context. Prints a table (all of dev, and each of its two fixed halves by context,
benchmarks/tatqa_split.py) for every mode without the tables' row match and with it, and
the command to reproduce. `--choose-weights` sweeps hybrid's BM25 weight and rrf_k (without
the row match), `--choose-row-match` the row match's question share, then its weight; each
is chosen on half a (recall@5, then MRR@10) and reported on half b, whose contexts the
choice never saw. `--with-test-reports` indexes TAT-QA test's 278 reports (no questions,
`benchmarks/data/tatqa_test_contexts.json`) beside dev's: the 556-report setting of issue 30.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from reproduce import print_command  # noqa: E402
from tatqa_split import DEV, add_test_reports_option, eval_corpus, half_of  # noqa: E402

from pipeline.settings import Settings  # noqa: E402
from retriever_trt import TorchEmbedder, load_embedder  # noqa: E402
from retriever_trt.embedders.embedder import Embedder  # noqa: E402
from retriever_trt.indexing.chunking import DEFAULT_OVERLAP  # noqa: E402
from retriever_trt.search.bm25 import DEFAULT_B, DEFAULT_K1  # noqa: E402
from retriever_trt.search.evaluation import score, tatqa_questions  # noqa: E402
from retriever_trt.search.retriever import (  # noqa: E402
    DEFAULT_BM25_WEIGHT,
    DEFAULT_ROW_MATCH_WEIGHT,
    DEFAULT_RRF_K,
    FUSION_DEPTH,
    MODES,
    Retriever,
    rrf_fuse,
)

WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
RRF_KS = (10, 30, 60, 100)
ROW_WEIGHTS = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0)
SHARES = (0.0, 0.1, 0.2, 0.25, 0.3, 0.4)
# The server's chunking, which the figures are for.
SERVER_CHUNK_TOKENS = Settings.model_fields["chunk_tokens"].default


@contextmanager
def overridden(owner: object, name: str, value: float) -> Iterator[None]:
    """`owner.name` set to `value` for the block (a retriever's row_match_weight, its row
    matcher's min_share)."""
    kept = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, kept)


def halves_of(questions: list) -> dict[str, list]:
    return {"all": questions, **{h: [q for q in questions if half_of(q.context) == h]
                                 for h in ("a", "b")}}


def choose_weights(retriever: Retriever, questions: list) -> None:
    """Fuse the dense and BM25 rankings (FUSION_DEPTH each, as `retrieve` does) for every
    weight and rrf_k; choose on half a, print the sweep and the choice on each half."""
    depth = FUSION_DEPTH
    texts = [q.text for q in questions]
    rows = {}
    for mode in ("dense", "bm25"):
        with overridden(retriever, "row_match_weight", 0.0):
            ranked = retriever.retrieve(texts, depth, mode=mode)
        rows[mode] = [[p.chunk_id for p in r] for r in ranked]
    ids = {c.chunk_id: i for i, c in enumerate(retriever.store)}
    context = [c.sources.get("context") for c in retriever.store]
    ranks = {"dense": [np.array([ids[c] for c in r], dtype=np.int64) for r in rows["dense"]],
             "bm25": [np.array([ids[c] for c in r], dtype=np.int64) for r in rows["bm25"]]}

    def metrics(weight: float, rrf_k: int, half: str) -> tuple[float, float]:
        hits5 = rr = n = 0
        for i, q in enumerate(questions):
            if half != "all" and half_of(q.context) != half:
                continue
            _, fused = rrf_fuse([ranks["dense"][i], ranks["bm25"][i]], rrf_k, (1.0, weight))
            first = next((r for r, c in enumerate(fused[:10].tolist(), 1)
                          if context[c] == q.context), None)
            n += 1
            hits5 += first is not None and first <= 5
            rr += 1 / first if first else 0.0
        return hits5 / n, rr / n

    print("\nsweep without the row match (hybrid recall@5 / MRR@10 on half a): rows "
          "bm25_weight, columns rrf_k")
    print(f"{'':>6} " + " ".join(f"{k:>13}" for k in RRF_KS))
    table = {}
    for w in WEIGHTS:
        cells = []
        for k in RRF_KS:
            table[w, k] = metrics(w, k, "a")
            cells.append(f"{table[w, k][0]:.3f}/{table[w, k][1]:.3f}")
        print(f"{w:>6} " + " ".join(f"{c:>13}" for c in cells))
    best = max(table, key=lambda wk: (*table[wk], -abs(wk[0] - 1.0)))
    print(f"chosen on half a: bm25_weight {best[0]}, rrf_k {best[1]}")
    for half in ("a", "b", "all"):
        r5, mrr = metrics(*best, half)
        print(f"  hybrid (chosen) half {half:<3}: recall@5 {r5:.3f}, MRR@10 {mrr:.3f}")


def sweep_hybrid(retriever: Retriever, questions: list, owner: object, name: str,
                 values: tuple[float, ...]) -> float:
    """Hybrid's figures for each value of `owner.name`, a row-match setting; the value
    chosen on half a (recall@5, then MRR@10), both halves printed."""
    texts = [q.text for q in questions]
    halves = halves_of(questions)
    table = {}
    print(f"\nsweep of the row match's {name} (hybrid recall@5 / MRR@10)")
    for value in values:
        with overridden(owner, name, value):
            by_q = dict(zip(map(id, questions), retriever.retrieve(texts, 10), strict=True))
        table[value] = {h: score([by_q[id(q)] for q in qs], qs) for h, qs in halves.items()}
        print(f"  {value:>4}: " + ", ".join(f"half {h} {m['recall@5']:.3f}/{m['mrr@10']:.3f}"
                                             for h, m in table[value].items()))
    best = max(table, key=lambda v: (table[v]["a"]["recall@5"], table[v]["a"]["mrr@10"]))
    print(f"chosen on half a: {name} {best}; half b recall@5 "
          f"{table[best]['b']['recall@5']:.3f}, MRR@10 {table[best]['b']['mrr@10']:.3f}")
    return best


def choose_row_match(retriever: Retriever, questions: list) -> None:
    """The row match's question share (at the given weight), then its weight (at the
    chosen share), each chosen on half a."""
    matcher = retriever.row_matcher
    matcher.min_share = sweep_hybrid(retriever, questions, matcher, "min_share", SHARES)
    sweep_hybrid(retriever, questions, retriever, "row_match_weight", ROW_WEIGHTS)


def print_modes(retriever: Retriever, questions: list, weight: float) -> None:
    """Every mode's figures per half, with the given row-match weight."""
    halves = halves_of(questions)
    label = "row match off" if weight == 0 else f"row match {weight}"
    for mode in MODES[::-1]:
        t0 = time.perf_counter()
        with overridden(retriever, "row_match_weight", weight):
            results = retriever.retrieve([q.text for q in questions], 10, mode=mode)
        qps = len(questions) / (time.perf_counter() - t0)
        by_q = dict(zip([id(q) for q in questions], results, strict=True))
        for half, qs in halves.items():
            m = score([by_q[id(q)] for q in qs], qs)
            print(f"{mode:<8} {label:<14} {half:<5} {len(qs):>5} {m['recall@1']:>9.3f} "
                  f"{m['recall@5']:>9.3f} {m['mrr@10']:>8.3f} "
                  f"{f'{qps:.1f}' if half == 'all' else '-':>8}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEV), help="TAT-QA json")
    ap.add_argument("--embedder", help="model dir or ONNX/plan file (default: torch MiniLM)")
    ap.add_argument("--factory", default="Flat", help="FAISS factory string")
    ap.add_argument("--contexts", type=int, help="use only the first N contexts")
    ap.add_argument("--chunk-tokens", type=int, default=SERVER_CHUNK_TOKENS,
                    help="default: the server's chunk_tokens")
    ap.add_argument("--overlap", type=int, default=DEFAULT_OVERLAP)
    ap.add_argument("--k1", type=float, default=DEFAULT_K1)
    ap.add_argument("--b", type=float, default=DEFAULT_B)
    ap.add_argument("--rrf-k", type=int, default=DEFAULT_RRF_K)
    ap.add_argument("--bm25-weight", type=float, default=DEFAULT_BM25_WEIGHT,
                    help="hybrid: BM25's weight in the fusion against dense's 1")
    ap.add_argument("--row-match-weight", type=float, default=DEFAULT_ROW_MATCH_WEIGHT,
                    help="the tables' row match's weight in the fusion (0: off)")
    ap.add_argument("--choose-weights", action="store_true",
                    help="sweep --bm25-weight and --rrf-k, choose on half a, report half b")
    ap.add_argument("--choose-row-match", action="store_true",
                    help="sweep the row match's question share, then its weight; choose "
                         "each on half a, report half b")
    add_test_reports_option(ap)
    args = ap.parse_args(argv)

    data = Path(args.data)
    if args.contexts:
        # The corpus must hold exactly the evaluated contexts: write the subset beside /tmp.
        import json
        import tempfile

        subset = json.loads(data.read_text())[: args.contexts]
        data = Path(tempfile.mkdtemp()) / "tatqa_subset.json"
        data.write_text(json.dumps(subset))
    # The torch reference by default: the figures compare runtimes against it.
    embedder: Embedder = TorchEmbedder() if args.embedder is None else load_embedder(args.embedder)
    t0 = time.perf_counter()
    corpus = eval_corpus(data, args.with_test_reports)
    retriever = Retriever.from_corpus(
        embedder, corpus, factory=args.factory, chunk_tokens=args.chunk_tokens,
        overlap=args.overlap, k1=args.k1, b=args.b, rrf_k=args.rrf_k,
        bm25_weight=args.bm25_weight, row_match_weight=args.row_match_weight,
    )
    build_s = time.perf_counter() - t0
    questions = tatqa_questions(data)

    print(f"\nTAT-QA {corpus.name}: {len(retriever.store)} chunks "
          f"(chunk_tokens {args.chunk_tokens}, overlap {args.overlap}) from "
          f"{len({c.doc_id for c in retriever.store.chunks})} contexts, {len(questions)} "
          f"questions of {len({q.context for q in questions})}; "
          f"embedder {embedder.model_id} ({embedder.precision}), FAISS {args.factory}; "
          f"index built in {build_s:.1f}s on {platform.machine()} CPU")
    print(f"{'mode':<8} {'':<14} {'half':<5} {'n':>5} {'recall@1':>9} {'recall@5':>9} "
          f"{'MRR@10':>8} {'q/s':>8}")
    for weight in dict.fromkeys((0.0, args.row_match_weight)):
        print_modes(retriever, questions, weight)
    print(f"(hybrid: bm25_weight {args.bm25_weight}, rrf_k {args.rrf_k})")
    if args.choose_weights:
        choose_weights(retriever, questions)
    if args.choose_row_match:
        choose_row_match(retriever, questions)
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
