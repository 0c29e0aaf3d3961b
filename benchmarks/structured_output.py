"""Cost of structured output: decode speed with a grammar mask against without, side by side.

    python benchmarks/structured_output.py [--batch 1 32] [--tokens 48]

Each batch size runs the same greedy requests twice, unconstrained and constrained by a JSON
schema (xgrammar's mask built each step for each sequence, then applied to the logits), and
prints tokens/s for both and the mask's cost: per generated token, and per decode step
(all `batch` sequences' masks).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from llm_engine import LLM, SamplingParams  # noqa: E402

SCHEMA = {"type": "object", "properties": {
    "company": {"type": "string"}, "revenue": {"type": "number"},
    "years": {"type": "array", "items": {"type": "integer"}}},
    "required": ["company", "revenue", "years"]}


def run(llm: LLM, prompts: list[str], params: SamplingParams) -> tuple[float, int]:
    t0 = time.perf_counter()
    outs = llm.generate(prompts, params, use_tqdm=False)
    return time.perf_counter() - t0, sum(len(o.outputs[0].token_ids) for o in outs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--tokens", type=int, default=48)
    args = ap.parse_args()
    llm = LLM(model="default", max_model_len=1024, kv_cache_memory=512 << 20)
    prompt = "Give the company, its revenue and the years it reported, as JSON: "
    free = SamplingParams(temperature=0, max_tokens=args.tokens, ignore_eos=True)
    constrained = SamplingParams(temperature=0, max_tokens=args.tokens,
                                 structured_outputs={"json": SCHEMA})
    run(llm, [prompt], constrained)  # compile the grammar and warm up once
    print(f"{'batch':>5} {'free tok/s':>11} {'json tok/s':>11} {'mask ms/token':>14} "
          f"{'mask ms/step':>13}")
    for b in args.batch:
        prompts = [f"{prompt}#{i}" for i in range(b)]
        t_free, n_free = run(llm, prompts, free)
        t_json, n_json = run(llm, prompts, constrained)
        cost = (t_json / n_json - t_free / n_free) * 1000
        print(f"{b:>5} {n_free / t_free:>11.1f} {n_json / t_json:>11.1f} {cost:>14.2f} "
              f"{cost * b:>13.2f}")
    print("reproduce: python benchmarks/structured_output.py --batch "
          + " ".join(map(str, args.batch)) + f" --tokens {args.tokens}")


if __name__ == "__main__":
    main()
