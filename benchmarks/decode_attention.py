"""The CPU decode-attention kernel over an fp32 KV cache and a bf16 one, side by side.

One decode step's attention for --rows sequences of --context tokens each, SmolLM2-135M's
heads (9 query heads over 3 K/V heads of 64), blocks of 16 tokens scattered at random in
the cache as the block manager hands them out; best of --repeats, per layer and for the
model's 30 layers; through the kernel's grouped path (the engine's) and its per-head loop
(the same result bit for bit), alternating. kv_cache_dtype="bfloat16" halves the K/V bytes
read (llm_engine/layers/attention/paged_attention_cpu.py).

    python benchmarks/decode_attention.py
    python benchmarks/decode_attention.py --rows 1 --context 512
"""

from __future__ import annotations

import argparse
import time

import torch
from reproduce import print_command

from llm_engine.layers.attention.paged_attention_cpu import load_kernel, paged_decode

HEADS, KV_HEADS, HEAD_DIM, BLOCK, LAYERS = 9, 3, 64, 16, 30


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--context", type=int, default=450)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    if load_kernel() is None:
        raise SystemExit("the CPU kernel could not be compiled (see the warning above)")
    gen = torch.Generator().manual_seed(0)
    per_row = -(-args.context // BLOCK)
    num_blocks = args.rows * per_row + 1
    q = torch.randn(args.rows, HEADS, HEAD_DIM, generator=gen)
    tables = torch.randperm(num_blocks, generator=gen)[: args.rows * per_row].view(args.rows, per_row)
    lens = torch.full((args.rows,), args.context, dtype=torch.long)
    k = torch.randn(KV_HEADS, num_blocks, HEAD_DIM, BLOCK, generator=gen)
    v = torch.randn(KV_HEADS, num_blocks, BLOCK, HEAD_DIM, generator=gen)
    print(f"{args.rows} rows x {args.context} tokens, threads {torch.get_num_threads()}")
    best: dict[tuple[torch.dtype, bool], float] = {}
    for dtype in (torch.float32, torch.bfloat16):
        kc, vc = k.to(dtype), v.to(dtype)
        times: dict[bool, list[float]] = {True: [], False: []}
        # The two paths alternate, so a change of machine load falls on both alike.
        for _ in range(args.repeats + 1):
            for grouped in (True, False):
                start = time.perf_counter()
                paged_decode(q, kc, vc, tables, lens, HEAD_DIM**-0.5, grouped)
                times[grouped].append(time.perf_counter() - start)
        for grouped in (True, False):
            best[dtype, grouped] = min(times[grouped][1:]) * 1e3  # the first is a warm-up
        print(f"{str(dtype):15s} cache: {kc.element_size() * 2 * kc.numel() / 2**20:.1f} MiB of K/V")
    for dtype in (torch.float32, torch.bfloat16):
        for grouped in (True, False):
            ms = best[dtype, grouped]
            print(f"{str(dtype):15s} cache, {'grouped heads' if grouped else 'per-head loop'}: "
                  f"{ms:.2f} ms a layer, {LAYERS * ms:.0f} ms a step")
        print(f"  grouped / per-head: {best[dtype, False] / best[dtype, True]:.2f}x faster")
    print(f"bf16 / fp32 (grouped): {best[torch.float32, True] / best[torch.bfloat16, True]:.2f}x faster")
    print_command(__file__)


if __name__ == "__main__":
    main()
