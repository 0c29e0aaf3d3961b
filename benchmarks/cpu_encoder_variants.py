"""The CPU encoder's variants on filing chunks, in one process, through the corpus path that
`finrag index` uses (`ParallelEncoder`: one batch a core, each on a one-thread session):
chunks a second of wall and of CPU time (the figure that carries between loads on a shared
host), and each variant's cosine to FP32 (min and mean over the chunks).

Variants: `fp32` and `int8` (today's files, `model.onnx` and `model.int8-dynamic.onnx`);
`fused-fp32` and `fused-int8`: `model.onnx` through ONNX Runtime's transformer optimizer
(`optimize_model`, model_type bert: Attention, EmbedLayerNormalization, SkipLayerNormalization
and BiasGelu fused), the latter then quantized dynamically (MatMul and Attention, per channel),
written to a temporary folder; `int8-skipln`: the INT8 file with ONNX Runtime's
SkipLayerNormFusion left on (the session as it was before issue 49's change).

    python3 benchmarks/cpu_encoder_variants.py [--filings F1.html F2.html ...] [--chunks 640]
        [--batches 64 4] [--rounds 2] [--variants fp32 int8 ...] [--engines-dir engines]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reproduce import print_command  # noqa: E402

from retriever_trt.embedders.embedder import Embedder  # noqa: E402
from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder  # noqa: E402
from retriever_trt.indexing.chunking import DEFAULT_OVERLAP  # noqa: E402
from retriever_trt.indexing.parallel_encoder import EncodeThreads, ParallelEncoder  # noqa: E402

FILINGS = REPO.parent / "shared" / "data" / "filings"
DEFAULT_FILINGS = ["ko-10-k-2025-02-20.html", "nflx-10-q-2025-07-18.html"]
CHUNK_TOKENS = 120  # the server's chunk_tokens
# all-MiniLM-L6-v2's attention: what optimize_model must be told.
HEADS, HIDDEN = 12, 384
VARIANTS = ("fp32", "int8", "int8-skipln", "fused-fp32", "fused-int8")


def filing_chunks(paths: list[Path], embedder: Embedder, limit: int) -> list[str]:
    """The first `limit` chunk texts of `paths`, as `finrag index` encodes them."""
    from retriever_trt.indexing.ingest import ingest
    from retriever_trt.search.retriever import chunk_counter

    with tempfile.TemporaryDirectory(prefix="finrag-variants-") as tmp:
        for path in paths:
            (Path(tmp) / path.name).symlink_to(path.resolve())
        store, _ = ingest(Path(tmp), CHUNK_TOKENS, DEFAULT_OVERLAP, chunk_counter(embedder))
    return [store.index_text(i) for i in range(min(limit, len(store)))]


def fused_graphs(fp32: Path, folder: Path) -> tuple[Path, Path]:
    """(fused FP32, fused dynamic INT8) of `fp32`, written into `folder`."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    fused, fused_int8 = folder / "fused.onnx", folder / "fused.int8-dynamic.onnx"
    model = optimize_model(str(fp32), model_type="bert", num_heads=HEADS, hidden_size=HIDDEN,
                           opt_level=0, use_gpu=False)
    print(f"fused ops: {model.get_fused_operator_statistics()}", flush=True)
    model.save_model_to_file(str(fused))
    # The contrib ops defeat ONNX shape inference: untyped tensors are FP32 here.
    quantize_dynamic(str(fused), str(fused_int8), op_types_to_quantize=["MatMul", "Attention"],
                     per_channel=True, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return fused, fused_int8


def makers(folder: Path, tmp: Path, wanted: list[str]) -> dict[str, Callable[[], Embedder]]:
    int8 = folder / "model.int8-dynamic.onnx"
    out: dict[str, Callable[[], Embedder]] = {
        "fp32": lambda: OnnxRuntimeEmbedder(folder / "model.onnx"),
        "int8": lambda: OnnxRuntimeEmbedder(int8),
        "int8-skipln": lambda: OnnxRuntimeEmbedder(int8, disabled_optimizers=())}
    if any(v.startswith("fused") for v in wanted):
        fused, fused_int8 = fused_graphs(folder / "model.onnx", tmp)
        out["fused-fp32"] = lambda: OnnxRuntimeEmbedder(fused)
        out["fused-int8"] = lambda: OnnxRuntimeEmbedder(fused_int8)
    return {name: out[name] for name in wanted}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--filings", nargs="+", type=Path,
                    default=[FILINGS / name for name in DEFAULT_FILINGS])
    ap.add_argument("--chunks", type=int, default=640, help="chunks encoded a run")
    ap.add_argument("--batches", type=int, nargs="+", default=[64, 4])
    ap.add_argument("--rounds", type=int, default=2, help="alternations of the variants")
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--engines-dir", type=Path, default=REPO / "engines")
    args = ap.parse_args()
    from retriever_trt.embedders.loader import default_embedder

    print_command(__file__)
    folder = default_embedder(args.engines_dir, progress=False).path.parent
    with tempfile.TemporaryDirectory(prefix="finrag-variants-") as tmp:
        encoders = {name: ParallelEncoder(make(), EncodeThreads(os.cpu_count() or 1))
                    for name, make in makers(folder, Path(tmp), args.variants).items()}
        texts = filing_chunks(args.filings, encoders[args.variants[0]].embedder, args.chunks)
        print(f"{len(texts)} chunks of {len(args.filings)} filings, {os.cpu_count()} CPUs",
              flush=True)
        wall: dict[tuple[str, int], list[float]] = {}
        cpu: dict[tuple[str, int], list[float]] = {}
        vectors: dict[tuple[str, int], np.ndarray] = {}
        for _ in range(args.rounds):
            for batch in args.batches:
                for name, encoder in encoders.items():
                    encoder.encode(texts[:batch * 2], batch)  # warm-up: first runs allocate
                    start, start_cpu = time.perf_counter(), time.process_time()
                    vectors[name, batch] = encoder.encode(texts, batch)
                    wall.setdefault((name, batch), []).append(
                        len(texts) / (time.perf_counter() - start))
                    cpu.setdefault((name, batch), []).append(
                        len(texts) / (time.process_time() - start_cpu))
        report(wall, cpu, vectors, os.getloadavg())


def report(wall: dict, cpu: dict, vectors: dict, load: tuple[float, ...]) -> None:
    print(f"\nload average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print("| variant | batch | chunks/s wall (best) | chunks a CPU s (median) | cosine to FP32 "
          "min / mean |\n|---|---:|---:|---:|---:|")
    for name, batch in wall:
        ref = vectors.get(("fp32", batch))
        cos = ""
        if ref is not None:
            cosine = (vectors[name, batch] * ref).sum(axis=1)
            cos = f"{cosine.min():.4f} / {cosine.mean():.5f}"
        print(f"| {name} | {batch} | {max(wall[name, batch]):.1f} | "
              f"{np.median(cpu[name, batch]):.1f} | {cos} |")


if __name__ == "__main__":
    main()
