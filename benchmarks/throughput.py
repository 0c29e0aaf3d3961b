"""Offline throughput on the standard workload: finrag vs Hugging Face transformers.

64 requests, prompt i of L_i ~ U[32, 512] tokens of real English text (seed 0), exactly
128 new tokens each, greedy. transformers runs sequentially and in static left-padded
batches of 16, in the same process, on the same weights, device, dtype and threads.
A model folder without a tokenizer (a stand-in with random weights, benchmarks/gpu_check.sh)
gets prompts of random token ids of the same lengths: throughput does not depend on them.
"""

from __future__ import annotations

import argparse
import gc
import random
import shlex
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import standard_prompts  # noqa: E402

from llm_engine import LLM, EngineConfig, SamplingParams  # noqa: E402


class RandomIds:
    """Stands in for a tokenizer: the same prompt lengths as the standard workload's."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        rng = random.Random(0)
        return [rng.randrange(self.vocab_size) for _ in range(100_000)]


def run_finrag(model_dir: str, prompts: list[list[int]], new_tokens: int, prefix: bool,
               **engine_args) -> tuple[float, int, str]:
    """Seconds, tokens out, and what ran (the attention backend, CUDA graphs)."""
    from llm_engine.engine.cuda_graph import DecodeCUDAGraphs

    llm = LLM(model_dir, enable_prefix_caching=prefix, **engine_args)
    runner = llm.llm_engine.executor.driver
    graphs = isinstance(runner.forward, DecodeCUDAGraphs)
    ran = f"{runner.attention_backend} attention{', CUDA graphs' if graphs else ''}"
    params = SamplingParams(temperature=0, max_tokens=new_tokens, ignore_eos=True)
    llm.generate([{"prompt_token_ids": p} for p in prompts[:2]], params, use_tqdm=False)
    start = time.perf_counter()
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    elapsed = time.perf_counter() - start
    tokens = sum(len(o.outputs[0].token_ids) for o in outs)
    # On CUDA the next engine sizes its KV cache from free memory: hand this one's back.
    del llm, runner, outs
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return elapsed, tokens, ran


def run_hf(model_dir: str, prompts: list[list[int]], new_tokens: int, batch: int,
           device: torch.device, dtype: torch.dtype) -> tuple[float, int]:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to(device).eval()
    pad = model.config.pad_token_id or 0
    total = 0
    start = time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(prompts), batch):
            group = prompts[i : i + batch]
            width = max(len(p) for p in group)
            ids = torch.tensor([[pad] * (width - len(p)) + p for p in group], device=device)
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in group],
                                device=device)
            out = model.generate(ids, attention_mask=mask, max_new_tokens=new_tokens,
                                 min_new_tokens=new_tokens, do_sample=False, pad_token_id=pad)
            total += (out.shape[1] - width) * len(group)
    return time.perf_counter() - start, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="default")
    ap.add_argument("--num-requests", type=int, default=64)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--hf-sequential-requests", type=int, default=16,
                    help="requests for the (slow) sequential baseline; 0 skips it")
    ap.add_argument("--hf-batch-requests", type=int, default=64,
                    help="requests for the static-batch baseline; 0 skips it")
    ap.add_argument("--max-num-batched-tokens", type=int, default=2048)
    ap.add_argument("--device", default="auto", help="auto, cpu or cuda[:N]")
    ap.add_argument("--dtype", default="auto", help="auto (fp32 on CPU, bf16 on CUDA), float32, "
                    "bfloat16 or float16; the baselines use the same")
    ap.add_argument("--attention-backend", default="auto")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="also run finrag with CUDA graphs for decode (enforce_eager=False)")
    args = ap.parse_args()

    from llm_engine.config import ModelConfig
    from llm_engine.tokenizer import Tokenizer
    from llm_engine.utils.model_path import resolve_model

    config = EngineConfig(device=args.device, dtype=args.dtype,
                          attention_backend=args.attention_backend)
    model_dir = str(resolve_model(args.model))
    has_tokenizer = Path(model_dir, "tokenizer.json").is_file()
    if has_tokenizer:
        tokenizer = Tokenizer.from_pretrained(model_dir)
    else:
        tokenizer = RandomIds(ModelConfig.from_pretrained(model_dir).vocab_size)
        print("workload: random token ids (the model folder has no tokenizer)")
    prompts = standard_prompts(tokenizer, args.num_requests)
    print(f"workload: {len(prompts)} requests, prompt tokens {sum(map(len, prompts))}, "
          f"{args.new_tokens} new tokens each, torch threads {torch.get_num_threads()}, "
          f"device {config.torch_device}, dtype {config.torch_dtype}")
    rows: list[tuple[str, float]] = []
    engine_args = {"max_num_batched_tokens": args.max_num_batched_tokens,
                   "device": args.device, "dtype": args.dtype,
                   "attention_backend": args.attention_backend,
                   "skip_tokenizer_init": not has_tokenizer}
    runs = [(False, True), (True, True)] + ([(False, False)] if args.cuda_graphs else [])
    for prefix, eager in runs:
        secs, toks, ran = run_finrag(model_dir, prompts, args.new_tokens, prefix,
                                     enforce_eager=eager, **engine_args)
        rows.append((f"finrag (prefix caching {'on' if prefix else 'off'}, {ran})", toks / secs))
        print(f"{rows[-1][0]}: {toks} tokens in {secs:.1f}s", flush=True)
    hf_args = (config.torch_device, config.torch_dtype)
    if args.hf_batch_requests:
        secs, toks = run_hf(model_dir, prompts[: args.hf_batch_requests], args.new_tokens, 16,
                            *hf_args)
        rows.append(("transformers static batches of 16", toks / secs))
        print(f"{rows[-1][0]}: {toks} tokens in {secs:.1f}s", flush=True)
    if args.hf_sequential_requests:
        secs, toks = run_hf(model_dir, prompts[: args.hf_sequential_requests], args.new_tokens, 1,
                            *hf_args)
        rows.append(("transformers sequential", toks / secs))
        print(f"{rows[-1][0]}: {toks} tokens in {secs:.1f}s", flush=True)

    headline = rows[0][1]
    print(f"\n{'system':58s} {'out tok/s':>10s} {'finrag / this':>14s}")
    for name, tps in rows:
        print(f"{name:58s} {tps:10.1f} {headline / tps:13.2f}x")
    print("\nreproduce: python " + " ".join(shlex.quote(a) for a in sys.argv))


if __name__ == "__main__":
    main()
