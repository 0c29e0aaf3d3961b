"""Perplexity of TAT-QA dev paragraphs under finrag's engine: fp32 against int8 weights,
and the KV cache in the model's dtype against bf16 (kv_cache_dtype).

The paragraphs (annual-report prose the model was not tuned on) are joined and cut into
--windows windows of --window tokens, from the start of the file; each window is scored
through the engine's own model (paged attention, the same linears as serving), and
perplexity is exp(mean negative log-likelihood of every next token). A window is one
prefill, or with --chunk C prefill chunks of C tokens: then every token attends to K/V read
back from the cache, as decode and chunked prefill do when serving, which is what a
narrower kv_cache_dtype changes (a single prefill attends to the fresh fp32 K/V).

    python benchmarks/perplexity.py                       # fp32 and int8, 40 x 512 tokens
    python benchmarks/perplexity.py --windows 8 --quantization int8
    python benchmarks/perplexity.py --quantization int8 --kv-cache-dtype auto bfloat16 --chunk 32
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce import print_command  # noqa: E402
from workloads import english_text  # noqa: E402

from llm_engine import LLM  # noqa: E402
from llm_engine.layers.attention.attention import AttentionMetadata, PrefillSpan  # noqa: E402


def text_windows(tokenizer, windows: int, window: int) -> list[list[int]]:
    ids = tokenizer.encode(english_text(), add_special_tokens=False)
    return [ids[i * window : (i + 1) * window] for i in range(min(windows, len(ids) // window))]


@torch.inference_mode()
def next_token_logits(llm: LLM, ids: list[int], chunk: int = 0, first: int = 0) -> torch.Tensor:
    """[len(ids) - 1 - first, vocab]: the logits for ids[first + 1:], each given what
    precedes it (the LM head, a fifth of the model's work, runs on those rows only).

    Prefills of `chunk` tokens (0: the whole window at once) into the idle engine's KV
    cache (its first blocks; nothing else runs meanwhile, and nothing is cached under a
    hash); each chunk after the first attends to the earlier ones through the cache.
    """
    runner = llm.llm_engine.executor.driver
    n = len(ids)
    blocks = -(-n // runner.block_size)
    if blocks > runner.num_blocks:
        raise ValueError(f"a window of {n} tokens needs more than the {runner.num_blocks} KV blocks")
    table = torch.arange(blocks)
    hidden = []
    for start in range(0, n, chunk or n):
        end = min(start + (chunk or n), n)
        slots = torch.arange(start, end)
        meta = AttentionMetadata(
            slot_blocks=slots // runner.block_size, slot_offsets=slots % runner.block_size,
            decodes=[], prefills=[PrefillSpan(0, end - start, start, table if start else None)])
        hidden.append(runner.model(torch.tensor(ids[start:end]), slots, meta))
    return runner.model.compute_logits(torch.cat(hidden)[first:-1])


def greedy_picks(llm: LLM, prompt: list[int], continuation: list[int], chunk: int = 0
                 ) -> torch.Tensor:
    """The engine's argmax token for each position of `continuation`, teacher-forced: each
    given the prompt and the continuation before it."""
    return next_token_logits(llm, prompt + continuation, chunk, len(prompt) - 1).argmax(dim=-1)


def window_nll(llm: LLM, ids: list[int], chunk: int = 0) -> tuple[float, int]:
    """Summed negative log-likelihood of ids[1:] given what precedes each, and its count."""
    logits = next_token_logits(llm, ids, chunk)
    nll = torch.nn.functional.cross_entropy(logits, torch.tensor(ids[1:]), reduction="sum")
    return nll.item(), len(ids) - 1


def perplexity(llm: LLM, windows: list[list[int]], chunk: int = 0) -> float:
    total, count = 0.0, 0
    for ids in windows:
        nll, n = window_nll(llm, ids, chunk)
        total, count = total + nll, count + n
    return math.exp(total / count)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="default")
    ap.add_argument("--windows", type=int, default=40)
    ap.add_argument("--window", type=int, default=512)
    ap.add_argument("--quantization", nargs="+", default=["none", "int8"],
                    help="'none' (fp32 weights) and/or 'int8'")
    ap.add_argument("--kv-cache-dtype", nargs="+", default=["auto"], help="'auto' and/or 'bfloat16'")
    ap.add_argument("--chunk", type=int, default=0,
                    help="prefill chunk in tokens (0: one prefill a window); with a chunk, "
                    "tokens attend to K/V read back from the cache")
    args = ap.parse_args()
    results = {}
    windows: list[list[int]] = []
    for method in args.quantization:
        for kv in args.kv_cache_dtype:
            start = time.perf_counter()
            llm = LLM(args.model, quantization=None if method == "none" else method,
                      kv_cache_dtype=kv, max_model_len=args.window, kv_cache_memory=128 << 20)
            windows = windows or text_windows(llm.get_tokenizer(), args.windows, args.window)
            name = method if kv == "auto" else f"{method}+kv-{kv}"
            results[name] = perplexity(llm, windows, args.chunk)
            print(f"{name:18s} perplexity {results[name]:.4f} over {len(windows)} x {args.window} "
                  f"tokens ({time.perf_counter() - start:.0f} s)", flush=True)
            del llm
    base = "none" if "none" in results else next(iter(results))
    for name, ppl in results.items():
        if name != base:
            print(f"{name} vs {'fp32' if base == 'none' else base}: "
                  f"{100 * (ppl / results[base] - 1):+.2f}%")
    print_command(__file__)


if __name__ == "__main__":
    main()
