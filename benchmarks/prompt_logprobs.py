"""Cost of prompt_logprobs: prefill time with the logits of every prompt position against
without, side by side, and whether requests that do not ask pay anything.

    python benchmarks/prompt_logprobs.py [--prompts 8] [--tokens 256] [--top 5] [--rounds 3]

Each round runs the same prompts (real English text, `max_tokens=1`, so the time is the
prefill) three ways, interleaved so that machine load hits all alike: without
prompt_logprobs, with prompt_logprobs=top, and without again; prints the median time of
each and the ratios. Prefix caching is off so that every run computes every prompt.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from engine_prompts import prompts_of_lengths  # noqa: E402

from llm_engine import LLM, SamplingParams  # noqa: E402


def timed(llm: LLM, prompts: list[list[int]], params: SamplingParams) -> float:
    t0 = time.perf_counter()
    llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    llm = LLM(model="default", max_model_len=1024, kv_cache_memory=512 << 20,
              enable_prefix_caching=False)
    prompts = prompts_of_lengths(llm.get_tokenizer(), [args.tokens] * args.prompts)
    plain = SamplingParams(temperature=0, max_tokens=1)
    asked = SamplingParams(temperature=0, max_tokens=1, prompt_logprobs=args.top)
    timed(llm, prompts[:1], asked)  # warm up
    runs: dict[str, list[float]] = {"plain": [], "prompt_logprobs": [], "plain again": []}
    for _ in range(args.rounds):
        runs["plain"].append(timed(llm, prompts, plain))
        runs["prompt_logprobs"].append(timed(llm, prompts, asked))
        runs["plain again"].append(timed(llm, prompts, plain))
    med = {k: statistics.median(v) for k, v in runs.items()}
    n = args.prompts * args.tokens
    print(f"{args.prompts} prompts x {args.tokens} tokens, prompt_logprobs={args.top}, "
          f"median of {args.rounds} rounds")
    for k, v in med.items():
        print(f"  {k:>16}: {v:7.3f} s  {n / v:8.1f} prompt tok/s  {v / med['plain']:5.2f}x plain")
    print("reproduce: python benchmarks/prompt_logprobs.py --prompts "
          f"{args.prompts} --tokens {args.tokens} --top {args.top} --rounds {args.rounds}")


if __name__ == "__main__":
    main()
