"""The engine with and without each of its compiled CPU kernels, side by side in one process.

One engine is loaded; each round measures throughput.py's three figures (the standard
workload's out tok/s, batch-1 decode tok/s, TTFT of a 512-token prompt) with every kernel
on, then with each kernel in --without switched off in turn (its torch path, or fbgemm,
taking over), in an order that rotates each round. The tokens are the same either way (the
kernels are exact: tests/test_cpu_ops.py, test_int8_weights.py), so only time differs.
Kernels:
  cpu-ops   layers/cpu_ops.py: rotary, the int8 rows' scaling, the K/V writes, RMSNorm
  vnni      layers/quantization/int8_vnni_cpu.py: every int8 call (else fbgemm)
  onednn    its oneDNN GEMM for int8 calls of more than 8 rows (else fbgemm for those)
  prefill   layers/attention/prefill_attention_cpu.py's tasks, or with a bf16 KV cache its bf16 twin's
            (else its fp32 Python loop of bmm)
  grouped   layers/attention/paged_attention_cpu.py's grouped heads (else its per-head loop)

    python benchmarks/cpu_kernels.py                      # int8 + drafts + bf16 KV: the server's
    python benchmarks/cpu_kernels.py --no-spec --without cpu-ops --rounds 5
    python benchmarks/cpu_kernels.py --ttft-pairs 20   # TTFT only, in alternating pairs

--ttft-pairs N times only the TTFT of a 512-token prompt, N pairs per kernel (all kernels,
then that kernel off, the order swapped every pair, each a prompt of its own): on a host
whose speed drifts by tens of percent between rounds, pairs taken seconds apart compare.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from functools import partial
from pathlib import Path
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an install
sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers import FinragPeer  # noqa: E402
from reproduce import print_command  # noqa: E402
from throughput import SPEC, figures, timed  # noqa: E402
from workloads import standard_prompts  # noqa: E402

from llm_engine.layers.attention.paged_attention_cpu import paged_decode  # noqa: E402
from llm_engine.layers.attention.prefill_attention_cpu import blocked_loop  # noqa: E402
from llm_engine.layers.backends import bind_backends  # noqa: E402
from llm_engine.layers.quantization import int8_vnni_cpu  # noqa: E402
from llm_engine.tokenizer import Tokenizer  # noqa: E402
from llm_engine.utils.model_path import resolve_model  # noqa: E402


@contextmanager
def swapped(objects: list, attr: str, value: object) -> Iterator[None]:
    """Each object's `attr` set to `value` inside the context, and put back after it."""
    saved = [getattr(obj, attr) for obj in objects]
    for obj in objects:
        setattr(obj, attr, value)
    try:
        yield
    finally:
        for obj, old in zip(objects, saved, strict=True):
            setattr(obj, attr, old)


def int8_weights(peer: FinragPeer) -> list:
    model = peer.llm.llm_engine.executor.driver.model
    return [m.int8 for m in model.quantizable_layers().values() if m.int8 is not None]


def without_vnni(peer: FinragPeer) -> AbstractContextManager:
    return swapped(int8_weights(peer), "vnni", None)


@contextmanager
def rebound(peer: FinragPeer, **changes: object) -> Iterator[None]:
    """The model's layers bound to the engine's backends with `changes`, then bound back."""
    runner = peer.llm.llm_engine.executor.driver
    bind_backends(runner.model, replace(runner.backends, **changes))
    try:
        yield
    finally:
        bind_backends(runner.model, runner.backends)


@contextmanager
def without_cpu_ops(peer: FinragPeer) -> Iterator[None]:
    with rebound(peer, fused_ops=None), swapped(int8_weights(peer), "fused_ops", None):
        yield


def without_prefill(peer: FinragPeer) -> AbstractContextManager:
    after_context = peer.llm.llm_engine.executor.driver.backends.prefill_after_context
    return rebound(peer, prefill=blocked_loop,
                   prefill_after_context=None if after_context is None else blocked_loop)


def without_grouped(peer: FinragPeer) -> AbstractContextManager:
    layers = peer.llm.llm_engine.executor.driver.model.attention_layers()
    return swapped(layers, "decode_kernel", partial(paged_decode, grouped=False))


# Each switch: the engine -> a context in which that kernel is off.
SWITCHES: dict[str, Callable[[FinragPeer], AbstractContextManager]] = {
    "cpu-ops": without_cpu_ops,
    "vnni": without_vnni,
    "onednn": lambda peer: patch.object(int8_vnni_cpu, "ONEDNN_GEMM", False),
    "prefill": without_prefill,
    "grouped": without_grouped,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--without", nargs="+", default=list(SWITCHES), choices=list(SWITCHES))
    ap.add_argument("--no-spec", action="store_true", help="int8 without prompt-lookup drafts")
    ap.add_argument("--kv-cache-dtype", default="bfloat16", choices=["auto", "bfloat16"],
                    help="the KV cache (default: the server's, bfloat16)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--num-requests", type=int, default=64)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--decode-tokens", type=int, default=64)
    ap.add_argument("--ttft-pairs", type=int, default=0, metavar="N",
                    help="only the TTFT, in N alternating pairs per kernel (see above)")
    args = ap.parse_args()

    model_dir = str(resolve_model("default"))
    tokenizer = Tokenizer.from_pretrained(model_dir)
    prompts = standard_prompts(tokenizer, args.num_requests)
    peer = FinragPeer(model_dir, quantization="int8", enable_prefix_caching=False,
                      speculative_config=None if args.no_spec else SPEC, kv_cache_memory=2 << 30,
                      kv_cache_dtype=args.kv_cache_dtype)
    variants = {"all kernels": lambda peer: nullcontext()} | {
        f"without {name}": SWITCHES[name] for name in args.without}
    names = list(variants)
    if args.ttft_pairs:
        ttft_pairs(peer, tokenizer, {name: variants[name] for name in names[1:]}, args.ttft_pairs)
        return
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
    # The same probes for every variant (prefix caching is off, so none is served from an
    # earlier run): with drafts the decode figure depends on the text.
    probes = standard_prompts(tokenizer, 4, min_len=512, max_len=512, seed=1)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            with variants[name](peer):
                tps, decode, ttft = figures(peer, prompts, args.new_tokens, probes, args.decode_tokens)
            results[name].append((tps, decode, ttft))
            print(f"round {r + 1} {name}: {tps:.1f} out tok/s, batch-1 decode {decode:.1f} "
                  f"tok/s, TTFT(512) {1e3 * ttft:.0f} ms", flush=True)

    base = results["all kernels"]
    print(f"\nengine: int8{'' if args.no_spec else ' + drafts'}, KV cache {args.kv_cache_dtype}, "
          f"{args.rounds} rounds; best of "
          "rounds, then the rounds in which all kernels did better (throughput, decode, TTFT)")
    print(f"{'variant':22s} {'out tok/s':>10s} {'decode tok/s':>13s} {'TTFT 512 ms':>12s} "
          f"{'all kernels better in':>22s}")
    for name in names:
        runs = results[name]
        tps, decode, ttft = max(x[0] for x in runs), max(x[1] for x in runs), min(x[2] for x in runs)
        wins = "" if name == "all kernels" else ", ".join(
            f"{sum(cmp(b[i], o[i]) for b, o in zip(base, runs, strict=True))}/{len(runs)}"
            for i, cmp in enumerate((float.__gt__, float.__gt__, float.__lt__)))
        print(f"{name:22s} {tps:10.1f} {decode:13.1f} {1e3 * ttft:12.0f} {wins:>22s}")
    print_command(__file__)


def ttft_pairs(peer: FinragPeer, tokenizer: Tokenizer,
               switches: dict[str, Callable[[FinragPeer], AbstractContextManager]], n: int) -> None:
    """TTFT of 512-token prompts, all kernels against each switch in `switches`, n pairs each."""
    prompts = iter(standard_prompts(tokenizer, 2 * n * len(switches) + 1, min_len=512,
                                    max_len=512, seed=2))
    timed(peer, [next(prompts)], 1)  # warm-up
    print(f"{'variant':22s} {'TTFT median':>12s} {'best':>8s} {'all kernels faster in':>22s}")
    for name, switch in switches.items():
        times: dict[bool, list[float]] = {True: [], False: []}
        wins = 0
        for i in range(n):
            pair = {}
            for on in (True, False) if i % 2 == 0 else (False, True):
                with nullcontext() if on else switch(peer):
                    pair[on] = timed(peer, [next(prompts)], 1)[0]
                times[on].append(pair[on])
            wins += pair[True] < pair[False]
        for on, label in ((True, "all kernels"), (False, name)):
            print(f"{label:22s} {1e3 * statistics.median(times[on]):10.0f} ms "
                  f"{1e3 * min(times[on]):5.0f} ms {'' if on else f'{wins}/{n} pairs':>22s}")
    print_command(__file__)


if __name__ == "__main__":
    main()
