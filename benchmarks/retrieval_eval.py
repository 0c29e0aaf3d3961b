"""Context recall@1/@5 and MRR@10 of dense, BM25 and hybrid retrieval on TAT-QA dev.

    python3 benchmarks/retrieval_eval.py [--embedder PATH] [--factory Flat] [--contexts N]

The corpus is every context's table and paragraphs; a question is answered right when a
retrieved chunk comes from its own context. Prints a table and the command to reproduce.
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

from retriever_trt import TorchEmbedder, load_embedder  # noqa: E402
from retriever_trt.embedder import Embedder  # noqa: E402
from retriever_trt.evaluation import evaluate, tatqa_questions  # noqa: E402
from retriever_trt.retriever import MODES, Retriever  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="TAT-QA json")
    ap.add_argument("--embedder", help="model dir or ONNX/plan file (default: torch MiniLM)")
    ap.add_argument("--factory", default="Flat", help="FAISS factory string")
    ap.add_argument("--contexts", type=int, help="use only the first N contexts")
    ap.add_argument("--chunk-tokens", type=int, default=200)
    ap.add_argument("--overlap", type=int, default=40)
    ap.add_argument("--k1", type=float, default=1.2)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--rrf-k", type=int, default=60)
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
    )
    build_s = time.perf_counter() - t0
    questions = tatqa_questions(data)

    print(f"\nTAT-QA {Path(args.data).name}: {len(retriever.store)} chunks from "
          f"{len({q.context for q in questions})} contexts, {len(questions)} questions; "
          f"embedder {embedder.model_id} ({embedder.precision}), FAISS {args.factory}; "
          f"index built in {build_s:.1f}s on {platform.machine()} CPU")
    print(f"{'mode':<8} {'recall@1':>9} {'recall@5':>9} {'MRR@10':>8} {'q/s':>8}")
    for mode in MODES[::-1]:
        t0 = time.perf_counter()
        m = evaluate(retriever, questions, mode=mode)
        qps = len(questions) / (time.perf_counter() - t0)
        print(f"{mode:<8} {m['recall@1']:>9.3f} {m['recall@5']:>9.3f} {m['mrr@10']:>8.3f} "
              f"{qps:>8.1f}")
    args_given = sys.argv[1:] if argv is None else argv
    cmd = shlex.join(["python3", "benchmarks/retrieval_eval.py", *args_given])
    print(f"\nreproduce: {cmd}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
