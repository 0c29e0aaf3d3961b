"""Perplexity of TAT-QA dev paragraphs under finrag's engine: fp32 against int8 weights.

The paragraphs (annual-report prose the model was not tuned on) are joined and cut into
--windows windows of --window tokens, from the start of the file; each window is scored
in one prefill through the engine's own model (paged attention, the same linears as
serving), and perplexity is exp(mean negative log-likelihood of every next token).

    python benchmarks/perplexity.py                       # fp32 and int8, 40 x 512 tokens
    python benchmarks/perplexity.py --windows 8 --quantization int8
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import english_text  # noqa: E402

from llm_engine import LLM  # noqa: E402
from llm_engine.layers.attention import AttentionMetadata, PrefillSpan  # noqa: E402


def text_windows(tokenizer, windows: int, window: int) -> list[list[int]]:
    ids = tokenizer.encode(english_text(), add_special_tokens=False)
    return [ids[i * window : (i + 1) * window] for i in range(min(windows, len(ids) // window))]


@torch.inference_mode()
def next_token_logits(llm: LLM, ids: list[int]) -> torch.Tensor:
    """[len(ids) - 1, vocab]: the logits for ids[1:], each given what precedes it.

    One prefill of the whole window into the idle engine's KV cache (its first blocks;
    nothing else runs meanwhile, and nothing is cached under a hash).
    """
    runner = llm.llm_engine.executor.driver
    n = len(ids)
    if -(-n // runner.block_size) > runner.num_blocks:
        raise ValueError(f"a window of {n} tokens needs more than the {runner.num_blocks} KV blocks")
    slots = torch.arange(n)
    meta = AttentionMetadata(slot_blocks=slots // runner.block_size,
                             slot_offsets=slots % runner.block_size, decodes=[],
                             prefills=[PrefillSpan(0, n, 0, None)])
    hidden = runner.model(torch.tensor(ids), torch.arange(n), meta)
    return runner.model.compute_logits(hidden[:-1])


def window_nll(llm: LLM, ids: list[int]) -> tuple[float, int]:
    """Summed negative log-likelihood of ids[1:] given what precedes each, and its count."""
    logits = next_token_logits(llm, ids)
    nll = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]), reduction="sum")
    return nll.item(), len(ids) - 1


def perplexity(llm: LLM, windows: list[list[int]]) -> float:
    total, count = 0.0, 0
    for ids in windows:
        nll, n = window_nll(llm, ids)
        total, count = total + nll, count + n
    return math.exp(total / count)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="default")
    ap.add_argument("--windows", type=int, default=40)
    ap.add_argument("--window", type=int, default=512)
    ap.add_argument("--quantization", nargs="+", default=["none", "int8"],
                    help="'none' (fp32 weights) and/or 'int8'")
    args = ap.parse_args()
    results = {}
    windows: list[list[int]] = []
    for method in args.quantization:
        start = time.perf_counter()
        llm = LLM(args.model, quantization=None if method == "none" else method,
                  max_model_len=args.window, kv_cache_memory=128 << 20)
        windows = windows or text_windows(llm.get_tokenizer(), args.windows, args.window)
        results[method] = perplexity(llm, windows)
        print(f"{method:5s} perplexity {results[method]:.4f} over {len(windows)} x {args.window} "
              f"tokens ({time.perf_counter() - start:.0f} s)", flush=True)
        del llm
    if "none" in results:
        for method, ppl in results.items():
            if method != "none":
                print(f"{method} vs fp32: {100 * (ppl / results['none'] - 1):+.2f}%")
    print("\nreproduce: python " + " ".join(shlex.quote(a) for a in sys.argv))


if __name__ == "__main__":
    main()
