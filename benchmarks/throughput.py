"""finrag against its CPU peers on the standard workload, side by side in one run.

Engines: finrag with fp32 and with int8 weights, and int8 with prompt-lookup drafts
(continuous batching, every request at once), Hugging Face transformers and CTranslate2
int8 (static batches of --batch), on the same token ids, weights, device and threads. For
each engine it prints
  out tok/s     the standard workload: 64 requests, prompt i of L_i ~ U[32, 512] tokens of
                real English text (seed 0), exactly 128 new tokens each, greedy;
  decode tok/s  one request of a 512-token prompt: (t(1 + D tokens) - TTFT) / D;
  TTFT          time to the first token of one 512-token prompt (best of 3 distinct ones).
A model folder without a tokenizer (a stand-in with random weights, benchmarks/gpu_check.sh)
gets prompts of random token ids of the same lengths, and no CTranslate2 run.

    python benchmarks/throughput.py                                   # the standard run
    python benchmarks/throughput.py --num-requests 16 --new-tokens 64 # a quick one
    python benchmarks/throughput.py --engines finrag-fp32 finrag-int8
    python benchmarks/throughput.py --rounds 3    # engines interleaved, best of 3 each
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import CTranslate2Peer, FinragPeer, TransformersPeer  # noqa: E402
from reproduce import print_command  # noqa: E402
from workloads import standard_prompts  # noqa: E402

from llm_engine import EngineConfig  # noqa: E402

ENGINES = ("finrag-fp32", "finrag-int8", "finrag-int8-kvbf16", "finrag-int8-spec",
           "finrag-int8-spec-kvbf16", "transformers", "ctranslate2-int8")
# finrag-int8-spec: int8 with the server's prompt-lookup drafts (pipeline/settings.py). The
# workload's prompts are plain prose, so drafts pay only where the greedy text repeats it.
# -kvbf16: kv_cache_dtype="bfloat16" (the KV cache in bf16, activations in fp32; prompts
# attend at bf16 on CPUs with AVX-512 BF16). finrag-int8-spec-kvbf16 is the server's engine.
SPEC = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2}


class RandomIds:
    """Stands in for a tokenizer: the same prompt lengths as the standard workload's."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        rng = random.Random(0)
        return [rng.randrange(self.vocab_size) for _ in range(100_000)]


def timed(peer, prompts: list[list[int]], new_tokens: int) -> tuple[float, int]:
    start = time.perf_counter()
    tokens = peer.generate(prompts, new_tokens)
    return time.perf_counter() - start, tokens


def figures(peer, prompts: list[list[int]], new_tokens: int, probes: list[list[int]],
            decode_tokens: int) -> tuple[float, float, float]:
    """(out tok/s on the workload, batch-1 decode tok/s, TTFT in s); probes: 4 prompts."""
    peer.generate(prompts[:2], 8)  # warm-up
    secs, toks = timed(peer, prompts, new_tokens)
    # Distinct prompts each time, so no prefix cache serves one from another.
    ttft = min(timed(peer, [p], 1)[0] for p in probes[:3])
    total, _ = timed(peer, [probes[3]], 1 + decode_tokens)
    return toks / secs, decode_tokens / max(total - ttft, 1e-9), ttft


def measure(name: str, peer, prompts: list[list[int]], probes: list[list[int]],
            args: argparse.Namespace) -> tuple[float, float, float]:
    tps, decode, ttft = figures(peer, prompts, args.new_tokens, probes, args.decode_tokens)
    print(f"{name}: {tps:.1f} out tok/s, batch-1 decode {decode:.1f} tok/s, "
          f"TTFT(512) {1e3 * ttft:.0f} ms", flush=True)
    return tps, decode, ttft


def make_peer(name: str, model_dir: str, args: argparse.Namespace, config: EngineConfig,
              has_tokenizer: bool):
    if name.startswith("finrag"):
        return FinragPeer(model_dir, quantization="int8" if "int8" in name else None,
                          speculative_config=SPEC if "-spec" in name else None,
                          kv_cache_dtype="bfloat16" if name.endswith("-kvbf16") else "auto",
                          # rounds repeat the same prompts: no cache may serve them again
                          enable_prefix_caching=args.rounds == 1,
                          # several engines at once: 2 GiB of KV each holds the standard workload
                          kv_cache_memory=None if args.rounds == 1 else 2 << 30,
                          max_num_batched_tokens=args.max_num_batched_tokens, device=args.device,
                          dtype=args.dtype, attention_backend=args.attention_backend,
                          skip_tokenizer_init=not has_tokenizer,
                          enforce_eager=not name.endswith("cuda-graphs"))
    if name == "transformers":
        return TransformersPeer(model_dir, args.batch, config.torch_device, config.torch_dtype)
    return CTranslate2Peer(model_dir, args.batch)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="default")
    ap.add_argument("--num-requests", type=int, default=64)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--decode-tokens", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16, help="static batch of the peers")
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    ap.add_argument("--max-num-batched-tokens", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=1,
                    help="more than 1: all engines loaded at once, measured in turn each round, "
                    "best figure of each kept (for a machine whose load changes)")
    ap.add_argument("--device", default="auto", help="auto, cpu or cuda[:N]")
    ap.add_argument("--dtype", default="auto", help="auto (fp32 on CPU, bf16 on CUDA), float32, "
                    "bfloat16 or float16; the baselines use the same")
    ap.add_argument("--attention-backend", default="auto")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="also run finrag fp32 with CUDA graphs for decode (enforce_eager=False)")
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
    probes = standard_prompts(tokenizer, 4, min_len=512, max_len=512, seed=1)
    names = args.engines + (["finrag-fp32-cuda-graphs"] if args.cuda_graphs else [])
    if not has_tokenizer and "ctranslate2-int8" in names:
        names.remove("ctranslate2-int8")
    best: dict[str, tuple[float, float, float]] = {}
    if args.rounds == 1:
        for name in names:
            peer = make_peer(name, model_dir, args, config, has_tokenizer)
            best[name] = measure(name, peer, prompts, probes, args)
            peer.close()
    else:
        # Every engine loaded at once and measured in turn, round after round (the first
        # engine rotating), so that a change of machine load falls on all of them alike;
        # each figure is its engine's best over the rounds.
        peers = {name: make_peer(name, model_dir, args, config, has_tokenizer) for name in names}
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", flush=True)
            for name in names[r % len(names):] + names[: r % len(names)]:
                tps, decode, ttft = measure(name, peers[name], prompts, probes, args)
                old = best.get(name, (0.0, 0.0, float("inf")))
                best[name] = (max(old[0], tps), max(old[1], decode), min(old[2], ttft))
        for peer in peers.values():
            peer.close()
    rows = [(name, *best[name]) for name in names]

    print(f"\n{'engine':24s} {'out tok/s':>10s} {'decode tok/s':>13s} {'TTFT 512 ms':>12s}"
          f" {'finrag-int8 / this (tok/s, decode, TTFT)':>44s}")
    ref = next((r for r in rows if r[0] == "finrag-int8"), rows[0])
    for name, tps, decode, ttft in rows:
        ratios = f"{ref[1] / tps:.2f}x, {ref[2] / decode:.2f}x, {ttft / ref[3]:.2f}x"
        print(f"{name:24s} {tps:10.1f} {decode:13.1f} {1e3 * ttft:12.0f} {ratios:>44s}")
    print_command(__file__)


if __name__ == "__main__":
    main()
