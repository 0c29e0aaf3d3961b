"""Context recall@1/@5 and MRR@10 of dense, BM25 and hybrid retrieval on TAT-QA dev.

    python3 benchmarks/retrieval_eval.py [--embedder PATH] [--factory Flat] [--contexts N]
        [--bm25-weight W] [--rrf-k K] [--choose-weights]

The corpus is every context's table and paragraphs; a question is answered right when a
retrieved chunk comes from its own context. Prints a table (all of dev, and each of its two
fixed halves by context, benchmarks/tatqa_split.py) and the command to reproduce.
`--choose-weights` sweeps hybrid's BM25 weight and rrf_k, chooses them on half a (recall@5,
then MRR@10) and reports them on half b, whose contexts the choice never saw.
"""

from __future__ import annotations

import argparse
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from tatqa_split import DEV, half_of  # noqa: E402

from retriever_trt import TorchEmbedder, load_embedder  # noqa: E402
from retriever_trt.embedder import Embedder  # noqa: E402
from retriever_trt.evaluation import score, tatqa_questions  # noqa: E402
from retriever_trt.retriever import (  # noqa: E402
    DEFAULT_BM25_WEIGHT,
    DEFAULT_RRF_K,
    MODES,
    Retriever,
    rrf_fuse,
)

WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
RRF_KS = (10, 30, 60, 100)


def choose_weights(retriever: Retriever, questions: list) -> None:
    """Fuse the dense and BM25 rankings (top 50 each, as `retrieve` does) for every weight
    and rrf_k; choose on half a, print the sweep and the choice on each half."""
    depth = 50
    texts = [q.text for q in questions]
    rows = {}
    for mode in ("dense", "bm25"):
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

    print("\nsweep (hybrid recall@5 / MRR@10 on half a): rows bm25_weight, columns rrf_k")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEV), help="TAT-QA json")
    ap.add_argument("--embedder", help="model dir or ONNX/plan file (default: torch MiniLM)")
    ap.add_argument("--factory", default="Flat", help="FAISS factory string")
    ap.add_argument("--contexts", type=int, help="use only the first N contexts")
    ap.add_argument("--chunk-tokens", type=int, default=200)
    ap.add_argument("--overlap", type=int, default=40)
    ap.add_argument("--k1", type=float, default=1.2)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--rrf-k", type=int, default=DEFAULT_RRF_K)
    ap.add_argument("--bm25-weight", type=float, default=DEFAULT_BM25_WEIGHT,
                    help="hybrid: BM25's weight in the fusion against dense's 1")
    ap.add_argument("--choose-weights", action="store_true",
                    help="sweep --bm25-weight and --rrf-k, choose on half a, report half b")
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
    retriever = Retriever.from_corpus(
        embedder, data, factory=args.factory, chunk_tokens=args.chunk_tokens,
        overlap=args.overlap, k1=args.k1, b=args.b, rrf_k=args.rrf_k,
        bm25_weight=args.bm25_weight,
    )
    build_s = time.perf_counter() - t0
    questions = tatqa_questions(data)

    print(f"\nTAT-QA {Path(args.data).name}: {len(retriever.store)} chunks from "
          f"{len({q.context for q in questions})} contexts, {len(questions)} questions; "
          f"embedder {embedder.model_id} ({embedder.precision}), FAISS {args.factory}; "
          f"index built in {build_s:.1f}s on {platform.machine()} CPU")
    halves = {"all": questions, **{h: [q for q in questions if half_of(q.context) == h]
                                    for h in ("a", "b")}}
    print(f"{'mode':<8} {'half':<5} {'n':>5} {'recall@1':>9} {'recall@5':>9} {'MRR@10':>8} "
          f"{'q/s':>8}")
    for mode in MODES[::-1]:
        t0 = time.perf_counter()
        results = retriever.retrieve([q.text for q in questions], 10, mode=mode)
        qps = len(questions) / (time.perf_counter() - t0)
        by_q = dict(zip([id(q) for q in questions], results, strict=True))
        for half, qs in halves.items():
            m = score([by_q[id(q)] for q in qs], qs)
            print(f"{mode:<8} {half:<5} {len(qs):>5} {m['recall@1']:>9.3f} {m['recall@5']:>9.3f} "
                  f"{m['mrr@10']:>8.3f} {f'{qps:.1f}' if half == 'all' else '-':>8}")
    print(f"(hybrid: bm25_weight {args.bm25_weight}, rrf_k {args.rrf_k})")
    if args.choose_weights:
        choose_weights(retriever, questions)
    args_given = sys.argv[1:] if argv is None else argv
    cmd = shlex.join(["python3", "benchmarks/retrieval_eval.py", *args_given])
    print(f"\nreproduce: {cmd}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
