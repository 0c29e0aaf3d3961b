"""Encode throughput (sentences/s) of every CPU runtime on TAT-QA texts, in one run.

    python3 benchmarks/encode_throughput.py [--n 1000] [--batch 32] [--outDir engines/retriever]

Exports the ONNX variants into --outDir when missing (python -m onnx_export).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from reproduce import print_command  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
TATQA = REPO.parent / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--outDir", default=str(REPO / "engines" / "retriever"))
    p.add_argument("--skip", default="", help="comma-separated rows to skip, e.g. torch,fp16")
    args = p.parse_args()
    import numpy as np

    from onnx_export.calibration import read_samples
    from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder
    from retriever_trt.embedders.profiles import Profile, Shape
    from retriever_trt.embedders.torch_embedder import TorchEmbedder

    out = Path(args.outDir)
    texts = read_samples(TATQA)[: args.n]
    if not (out / "model.int8-dynamic.onnx").is_file():
        from onnx_export.__main__ import main as export

        calib = out / "calib.txt"
        out.mkdir(parents=True, exist_ok=True)
        calib.write_text("\n".join(read_samples(TATQA)[-256:]) + "\n")
        export([f"--outDir={out}", "--fp16", "--int8", f"--calibData={calib}"])
    prof = Profile(Shape(1, 1), Shape(args.batch, 128), Shape(args.batch, 256))
    rows = {
        "torch": lambda: TorchEmbedder(batch_size=args.batch),
        "ORT FP32": lambda: OnnxRuntimeEmbedder(out / "model.onnx", profile=prof),
        "ORT FP16": lambda: OnnxRuntimeEmbedder(out / "model.fp16.onnx", profile=prof),
        "ORT INT8 Q/DQ": lambda: OnnxRuntimeEmbedder(out / "model.int8.onnx", profile=prof),
        "ORT INT8 dynamic": lambda: OnnxRuntimeEmbedder(out / "model.int8-dynamic.onnx",
                                                        profile=prof),
    }
    skip = {s.strip().lower() for s in args.skip.split(",") if s.strip()}
    results = {}
    for name, make in rows.items():
        if name.lower() in skip or name.split()[-1].lower() in skip:
            continue
        emb = make()
        emb.encode(texts[:64])  # warm-up: first runs allocate
        t0 = time.perf_counter()
        vecs = emb.encode(texts)
        dt = time.perf_counter() - t0
        assert vecs.shape == (len(texts), 384) and np.isfinite(vecs).all()
        results[name] = len(texts) / dt
        print(f"  {name:18s} {results[name]:8.1f} sentences/s", flush=True)
    base = results.get("ORT FP32")
    print(f"\n{len(texts)} TAT-QA texts, batch {args.batch}, {platform.processor() or 'cpu'}, "
          f"{os.cpu_count()} CPUs")
    print("| runtime | sentences/s | vs ORT FP32 |\n|---|---:|---:|")
    for name, sps in results.items():
        print(f"| {name} | {sps:.1f} | {sps / base:.2f}× |" if base else f"| {name} | {sps:.1f} |")
    print_command(__file__)


if __name__ == "__main__":
    main()
