"""INT8 quantization: static Q/DQ (for TensorRT and ORT) and dynamic (for ORT CPU).

Static recipe, chosen per node and written to the report:
  * only MatMuls with a weight initializer are candidates (per-channel symmetric
    weights, symmetric activations: the Q/DQ form TensorRT 10/11 builds from);
  * activation×activation MatMuls (attention QKᵀ and PV) stay FP32: no weights, and
    their inputs feed/come from Softmax, the most range-sensitive part of the model;
  * a candidate whose calibrated input range is one-sided (|max| ≥ `one_sided` × |min|
    or the reverse) stays FP32: a symmetric scale wastes half the INT8 levels and rounds
    the small side to zero. In MiniLM these are the six FFN down-projections fed by
    GELU (range about [-0.17, 25]); quantizing them is what wrecks the model.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from onnx_export.atomic import atomic_path
from onnx_export.calibration import (
    METHODS,
    TextCalibrationReader,
    cache_info,
    cache_matches,
    cache_meta,
    file_digest,
    load_ranges,
    samples_digest,
    stamp_cache,
)
from onnx_export.export import stamp_metadata

ONE_SIDED = 10.0


@dataclass
class NodeChoice:
    node: str
    quantized: bool
    reason: str
    input_absmax: float | None = None


@dataclass
class QuantReport:
    path: Path
    method: str
    cache_path: Path
    cache_reused: bool
    num_samples: int
    seq_len: int
    choices: list[NodeChoice] = field(default_factory=list)

    def lines(self) -> list[str]:
        q = sum(c.quantized for c in self.choices)
        out = [
            f"INT8 Q/DQ {self.path.name}: method={self.method}, "
            f"{'reused cache' if self.cache_reused else 'calibrated'} "
            f"{self.cache_path.name} ({self.num_samples} samples × {self.seq_len} tokens), "
            f"{q}/{len(self.choices)} MatMuls quantized",
        ]
        for c in self.choices:
            amax = "" if c.input_absmax is None else f" |x|max={c.input_absmax:.2f}"
            out.append(f"  {'INT8' if c.quantized else 'FP32'}  {c.node}{amax}: {c.reason}")
        return out


def _preprocess(fp32_path: Path, out_path: Path) -> None:
    from onnxruntime.quantization import quant_pre_process

    # The symbolic shape pass fails on this graph's dynamic attention-mask reshape;
    # ONNX shape inference alone is enough for the quantizer.
    quant_pre_process(str(fp32_path), str(out_path), skip_symbolic_shape=True)


def matmul_candidates(model: onnx.ModelProto) -> tuple[list[onnx.NodeProto], list[onnx.NodeProto]]:
    """(weight MatMuls, activation×activation MatMuls) in graph order."""
    inits = {i.name for i in model.graph.initializer}
    weight, act = [], []
    for node in model.graph.node:
        if node.op_type == "MatMul":
            (weight if node.input[1] in inits else act).append(node)
    return weight, act


def choose_nodes(model: onnx.ModelProto, ranges: dict[str, tuple[float, float]],
                 one_sided: float = ONE_SIDED) -> list[NodeChoice]:
    """Decide per MatMul whether it is quantized, with the reason (see module doc)."""
    weight, act = matmul_candidates(model)
    order = {n.name: i for i, n in enumerate(model.graph.node)}
    choices = []
    for node in weight:
        lo, hi = ranges.get(node.input[0], (0.0, 0.0))
        amax = max(abs(lo), abs(hi))
        small = min(abs(lo), abs(hi))
        if amax > 0 and amax >= one_sided * max(small, 1e-12):
            choices.append(NodeChoice(node.name, False, f"one-sided input range [{lo:.2f}, "
                                      f"{hi:.2f}] (ratio {amax / max(small, 1e-12):.0f} ≥ "
                                      f"{one_sided:g}): symmetric INT8 would waste half its "
                                      "levels and flatten the small side", amax))
        else:
            choices.append(NodeChoice(node.name, True, f"weight MatMul, input range [{lo:.2f}, "
                                      f"{hi:.2f}]: per-channel weights, symmetric activation",
                                      amax))
    for node in act:
        choices.append(NodeChoice(node.name, False, "activation×activation (attention): "
                                  "no weights, Softmax-adjacent"))
    choices.sort(key=lambda c: order[c.node])
    return choices


def quantize_qdq(
    fp32_path: Path,
    out_path: Path,
    model_dir: Path,
    texts: list[str] | None,
    method: str = "minmax",
    cache_path: Path | None = None,
    one_sided: float = ONE_SIDED,
    batch_size: int = 16,
    progress: bool = True,
) -> QuantReport:
    """Write `out_path` (Q/DQ INT8); calibrate on `texts` unless a matching cache exists."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    if method not in METHODS:
        raise ValueError(f"unknown calibration method {method!r}: use {', '.join(METHODS)}")
    fp32_path, out_path = Path(fp32_path), Path(out_path)
    cache_path = Path(cache_path or out_path.with_suffix(".calib.json"))
    model_digest = file_digest(fp32_path)
    data_digest = samples_digest(texts) if texts else None
    reuse = cache_path.is_file() and (
        cache_matches(cache_path, cache_meta(model_digest, method, data_digest, "matmul"))
        if data_digest else _cache_for_model(cache_path, model_digest, method)
    )
    if not reuse and not texts:
        raise ValueError(f"no calibration data and no matching cache at {cache_path}")
    reader = None
    if not reuse:
        reader = TextCalibrationReader(texts, model_dir, batch_size, progress)
        if cache_path.exists():
            cache_path.unlink()  # stale: ORT would otherwise load it instead of calibrating
    with tempfile.TemporaryDirectory(prefix="finrag-quant-") as tmp:
        pre = Path(tmp) / "pre.onnx"
        _preprocess(fp32_path, pre)
        options = {"ActivationSymmetric": True, "WeightSymmetric": True}
        if method == "percentile":
            options["CalibPercentile"] = 99.999
        common = dict(
            quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
            weight_type=QuantType.QInt8, calibrate_method=METHODS[method],
            calibration_cache_path=str(cache_path),
        )
        if not reuse:
            # Calibrate every MatMul tensor once so the cache serves any node selection.
            quantize_static(str(pre), str(Path(tmp) / "probe.onnx"), reader,
                            op_types_to_quantize=["MatMul"], extra_options=options, **common)
            stamp_cache(cache_path, cache_meta(model_digest, method, data_digest, "matmul"),
                        {"num_samples": reader.num_samples, "seq_len": reader.seq_len})
        choices = choose_nodes(onnx.load(str(pre)), load_ranges(cache_path), one_sided)
        with atomic_path(out_path) as tmp_out:
            quantize_static(str(pre), str(tmp_out), None, op_types_to_quantize=["MatMul"],
                            nodes_to_quantize=[c.node for c in choices if c.quantized],
                            extra_options=options, **common)
        stamp_metadata(out_path, {"precision": "int8"})
    info = cache_info(cache_path)
    return QuantReport(out_path, method, cache_path, reuse, int(info.get("num_samples", 0)),
                       int(info.get("seq_len", 0)), choices)


def _cache_for_model(cache_path: Path, model_digest: str, method: str) -> bool:
    import json

    meta = json.loads(cache_path.read_text()).get("finrag", {})
    return meta.get("model") == model_digest and meta.get("method") == method


def quantize_dynamic_int8(fp32_path: Path, out_path: Path) -> Path:
    """Dynamic INT8 for ORT CPU: weights INT8 offline, activations scaled per batch."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="finrag-dq-") as tmp:
        pre = Path(tmp) / "pre.onnx"
        _preprocess(Path(fp32_path), pre)
        with atomic_path(out_path) as tmp_out:
            # Same node policy as the static recipe would be ideal, but dynamic scales
            # track each batch's range, so outliers hurt far less: all weight MatMuls.
            quantize_dynamic(str(pre), str(tmp_out), op_types_to_quantize=["MatMul"],
                             per_channel=True, weight_type=QuantType.QInt8)
        stamp_metadata(Path(out_path), {"precision": "int8"})
    return Path(out_path)
