"""The real TensorRT path: build a plan from the FP16 ONNX, compare with torch. Needs CUDA."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA device", allow_module_level=True)
trt = pytest.importorskip("tensorrt")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from retr_support import exported, model_dir  # noqa: E402

TEXTS = ["What was the total revenue in 2019?",
         "Net cash provided by operating activities increased by $12.4 million.",
         "Goodwill is tested for impairment annually."] * 5


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    from retriever_trt.build.builder import build_tensorrt
    from retriever_trt.embedders.profiles import Profile, Shape

    d = exported(tmp_path_factory)["dir"]
    out = d / "model.fp16.plan"
    prof = [Profile(Shape(1, 8), Shape(8, 64), Shape(32, 256))]
    build_tensorrt(d / "model.fp16.onnx", out, prof, 1 << 30, d / "timing.cache")
    return out


def test_tensorrt_fp16_matches_torch(plan):
    from retriever_trt.embedders.loader import load_embedder
    from retriever_trt.embedders.torch_embedder import TorchEmbedder

    e = load_embedder(plan)
    assert e.precision == "fp16" and e.dim == 384
    got = e.encode(TEXTS)
    ref = TorchEmbedder(model_dir()).encode(TEXTS)
    assert got.shape == ref.shape and got.dtype == np.float32
    assert (got * ref).sum(-1).min() >= 0.999


def test_retrexec_tensorrt(plan, capsys):
    from retriever_trt.build.retrexec import main

    rc = main([f"--loadEngine={plan}", "--shapes=input_ids:8x64,attention_mask:8x64",
               "--duration=1", "--warmUp=100"])
    out = capsys.readouterr().out
    assert rc == 0 and "GPU Compute Time" in out and "H2D Latency" in out
