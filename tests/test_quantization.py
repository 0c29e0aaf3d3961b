"""FP16 and INT8 variants: closeness to FP32, Q/DQ form, calibration cache, report, formats."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from retr_support import TATQA, exported, model_dir, tatqa_texts, write_jsonl

from onnx_export.calibration import CalibDataError, cache_matches, read_samples
from onnx_export.quality import mean_cosine, nn_agreement
from onnx_export.quantize import quantize_qdq
from onnx_export.verify import encode_file


@pytest.fixture(scope="session")
def art(tmp_path_factory):
    return exported(tmp_path_factory)


@pytest.fixture(scope="session")
def eval_texts():
    return tatqa_texts(160, offset=0)  # disjoint from the calibration slice (offset 500)


@pytest.fixture(scope="session")
def fp32_emb(art, eval_texts):
    return encode_file(art["dir"] / "model.onnx", model_dir(), eval_texts)


def test_fp16_close_to_fp32(art, eval_texts, fp32_emb):
    emb = encode_file(art["dir"] / "model.fp16.onnx", model_dir(), eval_texts)
    cos = (emb * fp32_emb).sum(-1)
    assert cos.min() >= 0.999, cos.min()
    model = onnx.load(str(art["dir"] / "model.fp16.onnx"))
    fp16_inits = [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT16]
    assert len(fp16_inits) >= 36  # the weight matrices really are half precision
    ln = [n for n in model.graph.node if n.op_type == "LayerNormalization"]
    by_name = {i.name: i for i in model.graph.initializer}
    # LayerNorm stays FP32: its scale is an FP32 initializer.
    assert all(by_name[n.input[1]].data_type == onnx.TensorProto.FLOAT for n in ln)
    assert "FP16" in art["report"] and "cosine to FP32" in art["report"]


def test_int8_qdq_quality(art, eval_texts, fp32_emb):
    emb = encode_file(art["dir"] / "model.int8.onnx", model_dir(), eval_texts)
    assert mean_cosine(fp32_emb, emb) >= 0.975
    assert nn_agreement(fp32_emb, emb) >= 0.80


def test_int8_dynamic_quality(art, eval_texts, fp32_emb):
    emb = encode_file(art["dir"] / "model.int8-dynamic.onnx", model_dir(), eval_texts)
    assert mean_cosine(fp32_emb, emb) >= 0.985
    assert nn_agreement(fp32_emb, emb) >= 0.85


def test_int8_is_symmetric_qdq_per_channel(art):
    model = onnx.load(str(art["dir"] / "model.int8.onnx"))
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    q = [n for n in model.graph.node if n.op_type == "QuantizeLinear"]
    dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear"]
    assert q and len(dq) >= len(q)
    for n in q + dq:
        if len(n.input) > 2:
            assert not inits[n.input[2]].any(), f"{n.name}: non-zero zero point"
    per_channel = [n for n in dq if inits.get(n.input[1]) is not None
                   and inits[n.input[1]].ndim == 1 and inits[n.input[1]].size > 1]
    assert len(per_channel) == 30  # one per quantized weight MatMul
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta.get("finrag.precision") == "int8"


def test_report_lists_every_matmul_with_reason(art):
    report = art["report"]
    rows = [line.strip() for line in report.splitlines() if line.startswith("  INT8 ")
            or line.startswith("  FP32 ")]
    assert len(rows) == 48  # 36 weight MatMuls + 12 attention MatMuls
    down = [r for r in rows if "/output/dense/MatMul" in r and "attention" not in r]
    assert len(down) == 6 and all(r.startswith("FP32") and "one-sided" in r for r in down)
    attn = [r for r in rows if "/attention/self/MatMul" in r]
    assert len(attn) == 12 and all(r.startswith("FP32") and "attention" in r for r in attn)
    assert sum(r.startswith("INT8") for r in rows) == 30
    assert "30/48 MatMuls quantized" in report


@pytest.mark.slow
def test_calibration_cache_reused(art, tmp_path):
    out = tmp_path / "again.int8.onnx"
    cache = art["dir"] / "model.int8.calib.json"
    before = cache.read_bytes()
    texts = read_samples(art["calib"], limit=48)
    rep = quantize_qdq(art["dir"] / "model.onnx", out, model_dir(), texts, "minmax", cache,
                       progress=False)
    assert rep.cache_reused and cache.read_bytes() == before
    # Without samples the cache alone suffices; a different method must not reuse it.
    rep2 = quantize_qdq(art["dir"] / "model.onnx", tmp_path / "c.onnx", model_dir(), None,
                        "minmax", cache, progress=False)
    assert rep2.cache_reused and rep2.num_samples == 48
    with pytest.raises(ValueError, match="no calibration data and no matching cache"):
        quantize_qdq(art["dir"] / "model.onnx", tmp_path / "d.onnx", model_dir(), None,
                     "entropy", cache, progress=False)
    meta = json.loads(cache.read_text())["finrag"]
    assert not cache_matches(cache, {**meta, "samples": "other"})


# Percentile, the other histogram method, is calibrated end to end by the README's export
# block (`python -m onnx_export ... --calibMethod=percentile`), whose samples, cache and
# closeness to FP32 test_readme.py checks: running it here too repeated 11 s of calibration.
@pytest.mark.slow
@pytest.mark.parametrize("method", ["entropy"])
def test_histogram_methods(art, tmp_path, method):
    # Varied lengths (batches must still share a shape), disjoint from the other slices.
    texts = tatqa_texts(16, offset=600)
    rep = quantize_qdq(art["dir"] / "model.onnx", tmp_path / "m.onnx", model_dir(), texts,
                       method, tmp_path / "cache.json", progress=False)
    assert not rep.cache_reused and rep.num_samples == 16 and rep.seq_len % 16 == 0
    assert json.loads((tmp_path / "cache.json").read_text())["finrag"]["method"] == method
    emb = encode_file(rep.path, model_dir(), texts)
    ref = encode_file(art["dir"] / "model.onnx", model_dir(), texts)
    assert mean_cosine(ref, emb) >= 0.95


def test_calib_data_formats(tmp_path):
    texts = ["first sample", "second sample", "third"]
    (tmp_path / "s.txt").write_text("\n".join(texts) + "\n\n")
    write_jsonl(tmp_path / "s.jsonl", texts)
    tatqa = [{"table": {"uid": "t", "table": [["a"]]},
              "paragraphs": [{"uid": "p", "order": 1, "text": "para one"}],
              "questions": [{"uid": "q", "question": "what?", "answer": "x"}]}]
    (tmp_path / "s.json").write_text(json.dumps(tatqa))
    assert read_samples(tmp_path / "s.txt") == texts
    assert read_samples(tmp_path / "s.jsonl") == texts
    assert read_samples(tmp_path / "s.json") == ["para one", "what?"]
    assert read_samples(tmp_path / "s.txt", limit=2) == texts[:2]
    (tmp_path / "bad.jsonl").write_text('{"txt": 1}\n')
    (tmp_path / "empty.txt").write_text("\n\n")
    for bad, msg in (("bad.jsonl", "cannot read"), ("empty.txt", "no samples"),
                     ("missing.txt", "not found")):
        with pytest.raises(CalibDataError, match=msg):
            read_samples(tmp_path / bad)


def test_tatqa_file_reads():
    texts = read_samples(TATQA)  # the bundled demo corpus: 678 texts
    assert len(texts) > 600 and all(isinstance(t, str) and t for t in texts[:50])
    assert np.mean([t.endswith("?") for t in texts]) > 0.2  # questions are in there
