"""Micro-benchmark: the GEMM kernels torch offers on this CPU for SmolLM2-135M's linears.

For each weight shape of the model (q/k/v, o, gate/up, down, LM head) and each token
count M, times y = x @ W.T through:
  fp32-onednn   torch.ops.mkldnn._linear_pointwise (the engine's fp32 path)
  fp32-mkl      F.linear
  int8-fbgemm   the engine's int8 path (layers/quantization/quantization.py): int8 weights per output
                channel, each row scaled to max |x| = 1 first so its activations are
                quantized per token, over the fixed range [-1, 1] (fbgemm's q/dq linear)
  int8-vnni     the same, bit for bit, through the engine's path on AVX-512 VNNI CPUs
                (layers/quantization/int8_vnni_cpu.py): its kernel for calls of at most 8 rows, oneDNN's
                int8 GEMM between its quantization and requantization for more
  int8-pinned   the same rows through fbgemm's quantized::linear_dynamic with one extra
                row of -1 and 1 pinning its range (the engine's path before; bit for bit
                the same result, one more pass to find the range)
  int8-pertensor  the same kernel with activations quantized per tensor
  int8-tok      activations quantized per token, torch._int_mm (oneDNN), dequantized
  int8-wo       torch._weight_int8pack_mm: int8 weights, fp32 activations
and prints the best time and each kernel's speed-up over fp32-onednn, plus the largest
relative error of the int8 kernels against fp32. Those times are of one weight, which
stays in cache; --layers N then times the four linears of N layers with N distinct weights
each (as a decode step reads them, from memory) through fbgemm and the VNNI path.

    python benchmarks/int8_linear.py
    python benchmarks/int8_linear.py --m 1 64 --repeats 20
    python benchmarks/int8_linear.py --shapes --m 1 2 5 8 --layers 30
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reproduce import print_command  # noqa: E402

from llm_engine.layers.quantization.quantization import Int8Weight  # noqa: E402
from llm_engine.layers.selector import resolve_backends  # noqa: E402

# The kernels an fp32 CPU engine with int8 weights runs (layers/selector.py).
ENGINE = resolve_backends(torch.device("cpu"), torch.float32, torch.float32, 64, int8=True)

# (name, out_features, in_features) for SmolLM2-135M
SHAPES = [("qkv", 960, 576), ("o", 576, 576), ("gate_up", 3072, 576), ("down", 576, 1536),
          ("lm_head", 49152, 576)]


def best_ms(fn: Callable[[], torch.Tensor], repeats: int) -> float:
    fn()
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    # The minimum: on a shared machine other people's work only ever adds time.
    return min(times) * 1e3


def per_token_int_mm(x: torch.Tensor, w_t: torch.Tensor, w_scales: torch.Tensor) -> torch.Tensor:
    """Activations quantized per token (symmetric int8), then torch._int_mm."""
    x_scales = (x.abs().amax(dim=1, keepdim=True) / 127).clamp(min=1e-12)
    xq = torch.round(x / x_scales).to(torch.int8)
    return torch._int_mm(xq, w_t).float() * x_scales * w_scales


def pinned_dynamic(x: torch.Tensor, q: Int8Weight) -> torch.Tensor:
    m = x.shape[0]
    xs = torch.empty((m + 1, x.shape[1]), dtype=x.dtype)
    xs[:m] = x
    row_max = xs[:m].abs().amax(dim=1, keepdim=True).clamp_(min=1e-12)
    xs[:m].div_(row_max)
    xs[m].zero_()
    xs[m, 0], xs[m, 1] = 1.0, -1.0
    return torch.ops.quantized.linear_dynamic(xs, q.packed, q.reduce_range)[:m].mul_(row_max)


def fbgemm_only(q: Int8Weight) -> Int8Weight:
    """The same weight with the VNNI path off: every call goes to fbgemm."""
    return Int8Weight(q.packed, q.scales, q.bias, q.inv_smooth, q.reduce_range,
                      replace(ENGINE, int8_kernel=None))


def kernels_for(x: torch.Tensor, w: torch.Tensor, q: Int8Weight,
                w_int8: torch.Tensor) -> dict[str, Callable[[], torch.Tensor]]:
    w_int8_t = w_int8.t().contiguous()
    plain = fbgemm_only(q)
    kernels = {
        "fp32-onednn": lambda: torch.ops.mkldnn._linear_pointwise(x, w, None, "none", [], ""),
        "fp32-mkl": lambda: F.linear(x, w),
        "int8-fbgemm": lambda: plain(x),
        "int8-pinned": lambda: pinned_dynamic(x, q),
        "int8-pertensor": lambda: torch.ops.quantized.linear_dynamic(x, q.packed, q.reduce_range),
        "int8-tok": lambda: per_token_int_mm(x, w_int8_t, q.scales),
        "int8-wo": lambda: torch._weight_int8pack_mm(x, w_int8, q.scales),
    }
    if q.vnni is not None:
        kernels["int8-vnni"] = lambda: q(x)
    return kernels


def model_layers(ms: list[int], layers: int, repeats: int) -> None:
    """The four linears of `layers` layers, distinct weights each: out of cache, as in a step."""
    shapes = [(n, k) for name, n, k in SHAPES if name != "lm_head"]
    # Smoothed, as the engine quantizes them (the smoothing is one more pass for fbgemm).
    weights = [[Int8Weight.quantize(torch.randn(n, k) * 0.05, None, torch.rand(k) * 5, ENGINE)
                for n, k in shapes] for _ in range(layers)]
    plain = [[fbgemm_only(q) for q in layer] for layer in weights]
    print(f"\nthe four linears of {layers} layers, distinct weights: fbgemm against the VNNI path")
    for m in ms:
        xs = {k: torch.randn(m, k) for _, k in shapes}
        runs = {"int8-fbgemm": plain}
        if weights[0][0].vnni is not None:
            runs["int8-vnni"] = weights
        base = None
        for kname, layer_set in runs.items():
            def step(ls=layer_set, xs=xs) -> None:
                for layer in ls:
                    for q, (_, k) in zip(layer, shapes, strict=True):
                        q(xs[k])

            ms_ = best_ms(step, repeats)
            base = base or ms_
            print(f"M={m:<4d} {kname:13s} {ms_:8.2f} ms {base / ms_:6.2f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--m", type=int, nargs="+", default=[1, 16, 64, 512])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--shapes", nargs="*", default=[s[0] for s in SHAPES])
    ap.add_argument("--layers", type=int, default=0,
                    help="also time the linears of this many layers with distinct weights")
    args = ap.parse_args()
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"quantized engine {torch.backends.quantized.engine}")
    print(f"{'shape':8s} {'M':>5s} {'kernel':13s} {'ms':>9s} {'vs fp32-onednn':>15s} {'max rel err':>12s}")
    for name, n, k in SHAPES:
        if name not in args.shapes:
            continue
        w = torch.randn(n, k) * 0.05
        q = Int8Weight.quantize(w, None, backends=ENGINE)
        w_int8 = torch.round(w / q.scales[:, None]).to(torch.int8)
        for m in args.m:
            x = torch.randn(m, k)
            ref = F.linear(x, w)
            kernels = kernels_for(x, w, q, w_int8)
            if m > 16:  # the weight-only kernel is 10-100x slower there: not worth the wait
                del kernels["int8-wo"]
            base = None
            for kname, fn in kernels.items():
                ms = best_ms(fn, args.repeats)
                base = base or ms
                err = ""
                if kname.startswith("int8"):
                    rel = (fn() - ref).abs().max() / ref.abs().max()
                    err = f"{rel.item():.4f}"
                print(f"{name:8s} {m:5d} {kname:13s} {ms:9.3f} {base / ms:14.2f}x {err:>12s}",
                      flush=True)
    if args.layers:
        model_layers(args.m, args.layers, args.repeats)
    print_command(__file__)


if __name__ == "__main__":
    main()
