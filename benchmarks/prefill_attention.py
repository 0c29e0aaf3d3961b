"""Time to first token of a 512-token prompt with each CPU prefill attention, side by side.

The CPU prefill attention (layers/attention/prefill_attention_cpu.py: query blocks of GEMMs, run as
balanced tasks on ATen's thread pool) against its Python loop of batched GEMMs (the path
before, and where no compiler is), torch's causal `scaled_dot_product_attention` (its CPU
flash kernel) and the bf16 kernel a bf16 KV cache brings (layers/attention/prefill_attention_bf16_cpu.py,
on CPUs with AVX-512 BF16), swapped in and out of the same loaded engine, alternately, on
distinct prompts of random token ids (no prefix cache). Also times the attention alone on
the model's shapes.

    python benchmarks/prefill_attention.py
    OMP_NUM_THREADS=1 python benchmarks/prefill_attention.py --quantization none --rounds 3
"""

from __future__ import annotations

import argparse
import random
import time

import torch
import torch.nn.functional as F
from reproduce import print_command

from llm_engine import LLM, SamplingParams
from llm_engine.layers.attention import prefill_attention_bf16_cpu
from llm_engine.layers.attention.attention import chunk_causal_mask
from llm_engine.layers.attention.prefill_attention_bf16_cpu import compiled_bf16_prefill
from llm_engine.layers.attention.prefill_attention_cpu import blocked_loop, compiled_prefill, load_kernel


def sdpa_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    """The previous path, [T, heads, dim] in and out; k, v: [past + T, kv_heads, dim]."""
    t, past = q.shape[0], k.shape[0] - q.shape[0]
    mask = None if past == 0 else chunk_causal_mask(t, past, q.device)
    o = F.scaled_dot_product_attention(
        q.transpose(0, 1)[None], k.transpose(0, 1)[None], v.transpose(0, 1)[None], attn_mask=mask,
        is_causal=mask is None, scale=scale, enable_gqa=q.shape[1] != k.shape[1])
    return o[0].transpose(0, 1)


# Each as the engine calls it: (q, k, v, scale); "bf16 tasks" is set in main().
PATHS = {"sdpa": sdpa_prefill, "blocked, bmm loop": blocked_loop, "blocked, tasks": compiled_prefill}


def seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quantization", default="int8", choices=["int8", "none"])
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--contexts", type=int, nargs="*", default=[128, 256, 480], metavar="C",
                    help="also time one layer's attention of the prompt's last T - C tokens "
                         "after C tokens of context (a prefix-cache hit, a later chunk)")
    args = ap.parse_args()
    if load_kernel() is None:
        raise SystemExit("the compiled prefill attention did not build (see the log above)")
    if prefill_attention_bf16_cpu.load_kernel() is None:
        print("no bf16 prefill kernel on this CPU (AVX-512 BF16): 'bf16 tasks' times the fp32 one")
    PATHS["bf16 tasks"] = compiled_prefill if prefill_attention_bf16_cpu.load_kernel() is None \
        else compiled_bf16_prefill
    llm = LLM("default", quantization=None if args.quantization == "none" else "int8",
              enable_prefix_caching=False)
    cfg = llm.llm_engine.model_config
    rng = random.Random(0)
    prompts = iter([[rng.randrange(100, 40_000) for _ in range(args.prompt_tokens)]
                    for _ in range(len(PATHS) * args.rounds + 1)])
    params = SamplingParams(temperature=0, max_tokens=1, ignore_eos=True)

    def ttft(ids: list[int]) -> float:
        return seconds(llm.generate, [{"prompt_token_ids": ids}], params, False)

    ttft(next(prompts))  # warm-up
    ttfts: dict[str, list[float]] = {name: [] for name in PATHS}
    layers = llm.llm_engine.executor.driver.model.attention_layers()
    engine_prefill = layers[0].prefill
    for _ in range(args.rounds):
        for name, fn in PATHS.items():
            for layer in layers:  # prefix caching is off: every chunk is one without context
                layer.prefill = fn
            ttfts[name].append(ttft(next(prompts)))
    for layer in layers:
        layer.prefill = engine_prefill

    heads, kv_heads, dim = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
    t = args.prompt_tokens
    q, k, v = torch.randn(t, heads, dim), torch.randn(t, kv_heads, dim), torch.randn(t, kv_heads, dim)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"quantization {args.quantization}, {t}-token prompts, {args.rounds} rounds")
    for name, fn in PATHS.items():
        fn(q, k, v, dim**-0.5)
        kernel = min(seconds(fn, q, k, v, dim**-0.5) for _ in range(10))
        runs = sorted(ttfts[name])
        print(f"{name:17s} TTFT best {1e3 * runs[0]:6.0f} ms, median {1e3 * runs[len(runs) // 2]:6.0f} ms;"
              f" one layer's attention {1e3 * kernel:.2f} ms")
    for c in args.contexts:
        chunk = q[c:]
        times = {name: min(seconds(fn, chunk, k, v, dim**-0.5) for _ in range(10))
                 for name, fn in PATHS.items()}
        print(f"after {c} tokens of context, {t - c} new: one layer's attention "
              + ", ".join(f"{name} {1e3 * sec:.2f} ms" for name, sec in times.items()))
    print_command(__file__)


if __name__ == "__main__":
    main()
