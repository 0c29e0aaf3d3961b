"""Resident memory of one engine process over many distinct step sizes.

Serving packs whatever arrives into a step, so the GEMMs see a new row count M at almost
every step; oneDNN kept memory for each one (benchmarks/soak.py). This runs
--rounds rounds; each sends one prompt of every length in --lengths (distinct token
counts per step) plus batches of 1..--max-batch decodes, and prints RSS after each round.
Flat after the first round = bounded.

--gemm KERNEL probes one kernel alone, without the engine: the model's four decoder
weight shapes at every seventh M from 1 to 1,024, twice, printing RSS growth per pass
(onednn: the fp32 GEMM before buckets; bucketed: layers/linear.py's `linear`; int8:
layers/quantization/quantization.py's Int8Weight; mkl: F.linear).

    python benchmarks/memory_probe.py                        # fp32
    python benchmarks/memory_probe.py --quantization int8
    python benchmarks/memory_probe.py --gemm onednn          # and bucketed, int8, mkl
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce import print_command  # noqa: E402
from soak import rss_mib  # noqa: E402
from workloads import standard_prompts  # noqa: E402

from llm_engine import LLM, SamplingParams  # noqa: E402


def probe_gemm(kernel: str) -> None:
    import torch
    import torch.nn.functional as F

    from llm_engine.layers.linear import linear
    from llm_engine.layers.quantization.quantization import Int8Weight
    from llm_engine.layers.selector import resolve_backends

    torch.manual_seed(0)
    weights = [torch.randn(n, k) * 0.05 for n, k in ((960, 576), (576, 576), (3072, 576), (576, 1536))]
    # As an fp32 CPU engine with int8 weights runs them (layers/selector.py).
    engine = resolve_backends(torch.device("cpu"), torch.float32, torch.float32, 64, int8=True)
    packed = [Int8Weight.quantize(w, None, backends=engine) for w in weights]
    gemms = {
        "onednn": lambda x, i: torch.ops.mkldnn._linear_pointwise(x, weights[i], None, "none", [], ""),
        "bucketed": lambda x, i: linear(x, weights[i], None),
        "int8": lambda x, i: packed[i](x),
        "mkl": lambda x, i: F.linear(x, weights[i]),
    }
    gemm = gemms[kernel]
    start = rss_mib(os.getpid())
    for p in range(2):
        before = rss_mib(os.getpid())
        for m in range(1, 1025, 7):
            for i, w in enumerate(weights):
                gemm(torch.randn(m, w.shape[1]), i)
        now = rss_mib(os.getpid())
        print(f"{kernel}: pass {p + 1} RSS +{now - before:.0f} MiB (total +{now - start:.0f} MiB, "
              f"{now:.0f} MiB)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="default")
    ap.add_argument("--quantization", default=None)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--lengths", type=int, default=60, help="distinct prompt lengths a round")
    ap.add_argument("--max-batch", type=int, default=24)
    ap.add_argument("--gemm", choices=["onednn", "bucketed", "int8", "mkl"])
    args = ap.parse_args()
    if args.gemm:
        probe_gemm(args.gemm)
        print_command(__file__)
        return
    # Only when asked, so that the probe also runs against an engine from before int8.
    quant = {"quantization": args.quantization} if args.quantization else {}
    llm = LLM(args.model, max_model_len=1024, kv_cache_memory=256 << 20, **quant)
    tokenizer = llm.get_tokenizer()
    params = SamplingParams(temperature=0, max_tokens=4, ignore_eos=True)
    start_rss = rss_mib(os.getpid())
    print(f"quantization {args.quantization}: RSS after load {start_rss:.0f} MiB", flush=True)
    for r in range(args.rounds):
        t0 = time.perf_counter()
        # One prompt at a time: each prefill is a GEMM of a new row count (lengths differ
        # round to round too: seeded by the round).
        for p in standard_prompts(tokenizer, args.lengths, 16, 1000, seed=r):
            llm.generate([{"prompt_token_ids": p}], params, use_tqdm=False)
        for b in range(1, args.max_batch + 1):  # decode steps of b rows
            batch = standard_prompts(tokenizer, b, 8, 8, seed=100 * r + b)
            llm.generate([{"prompt_token_ids": p} for p in batch], params, use_tqdm=False)
        now = rss_mib(os.getpid())
        print(f"round {r + 1}: RSS {now:.0f} MiB ({100 * (now / start_rss - 1):+.1f}% since load)"
              f", {time.perf_counter() - t0:.0f} s", flush=True)
    print_command(__file__)


if __name__ == "__main__":
    main()
