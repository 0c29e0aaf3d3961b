"""Prefix-cache block hashing: Python's hash() vs SHA-256, per block and end to end.

1. Per block: chained hashes of random 16-token blocks, best of 5 passes.
2. End to end, prefix-heavy: N requests sharing a long prefix of real text, each with its
   own short suffix, a few new tokens each, greedy; one fresh engine per run (cold cache),
   the two hashes alternated, the time inside the hasher measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce import print_command  # noqa: E402
from workloads import english_text  # noqa: E402

from llm_engine import LLM, SamplingParams  # noqa: E402
from llm_engine.engine.block_hash import BLOCK_HASHERS, BlockHasher  # noqa: E402
from llm_engine.tokenizer import Tokenizer  # noqa: E402
from llm_engine.utils.model_path import resolve_model  # noqa: E402


class TimedHasher:
    """Wraps a block hasher, adding up the seconds spent in it and the calls."""

    def __init__(self, fn: BlockHasher) -> None:
        self.fn, self.seconds, self.calls = fn, 0.0, 0

    def __call__(self, parent: int | None, tokens) -> int:
        start = time.perf_counter()
        h = self.fn(parent, tokens)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return h


def per_block_us(fn: BlockHasher, blocks: list[list[int]]) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        parent = None
        for tokens in blocks:
            parent = fn(parent, tokens)
        best = min(best, time.perf_counter() - start)
    return best / len(blocks) * 1e6


def end_to_end(model: str, algo: str, prompts: list[list[int]], new_tokens: int) -> tuple[float, TimedHasher]:
    llm = LLM(model, kv_cache_memory=512 << 20, max_model_len=2048,
              prefix_caching_hash_algo=algo)
    timed = TimedHasher(BLOCK_HASHERS[algo])
    llm.llm_engine.block_manager.block_hash = timed
    params = SamplingParams(temperature=0, max_tokens=new_tokens, ignore_eos=True)
    start = time.perf_counter()
    llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return time.perf_counter() - start, timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--requests", type=int, default=24)
    ap.add_argument("--prefix-tokens", type=int, default=1024)
    ap.add_argument("--suffix-tokens", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    print_command(__file__)

    rng = random.Random(0)
    blocks = [[rng.randrange(49152) for _ in range(16)] for _ in range(20000)]
    cost = {algo: per_block_us(fn, blocks) for algo, fn in BLOCK_HASHERS.items()}
    for algo, us in cost.items():
        print(f"per block of 16 tokens: {algo:8s} {us:.2f} us")
    print(f"sha256 / builtin per block: {cost['sha256'] / cost['builtin']:.2f}x")

    tokenizer = Tokenizer.from_pretrained(resolve_model(args.model))
    ids = tokenizer.encode(english_text(), add_special_tokens=False)
    prefix = ids[: args.prefix_tokens]
    prompts = [prefix + ids[args.prefix_tokens + i * args.suffix_tokens:][: args.suffix_tokens]
               for i in range(args.requests)]
    print(f"end to end: {args.requests} requests, a {args.prefix_tokens}-token shared prefix + "
          f"{args.suffix_tokens} own tokens, {args.new_tokens} new tokens each")
    totals = {algo: [0.0, 0.0, 0] for algo in BLOCK_HASHERS}
    for rep in range(args.repeats):
        for algo in ("builtin", "sha256") if rep % 2 == 0 else ("sha256", "builtin"):
            seconds, timed = end_to_end(args.model, algo, prompts, args.new_tokens)
            totals[algo][0] += seconds
            totals[algo][1] += timed.seconds
            totals[algo][2] += timed.calls
            print(f"  run {rep}: {algo:8s} {seconds:7.2f} s, hashing {timed.seconds * 1e3:7.2f} ms "
                  f"in {timed.calls} calls ({timed.seconds / seconds:.3%})")
    for algo, (seconds, hashing, calls) in totals.items():
        print(f"{algo:8s}: {seconds / args.repeats:7.2f} s a run, hashing {hashing / args.repeats * 1e3:.2f} "
              f"ms a run ({hashing / seconds:.3%} of the time), {calls // args.repeats} hashes a run")
    extra = (totals["sha256"][1] - totals["builtin"][1]) / totals["builtin"][0]
    print(f"sha256's extra hashing time / builtin run time: {extra:.3%}; "
          f"run time ratio sha256 / builtin: {totals['sha256'][0] / totals['builtin'][0]:.3f}")


if __name__ == "__main__":
    main()
