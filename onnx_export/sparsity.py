"""2:4 structured pruning of the linear layers' weights, as trtexec's `--sparsity=force`.

In each group of 4 consecutive weights along a linear layer's input (reduction)
dimension the 2 of largest magnitude are kept and the other 2 zeroed: the pattern
Ampere-and-later sparse tensor cores compress. Done without fine-tuning this costs
accuracy, so (as trtexec says) it is for measuring speed, and here also for measuring
what pruning alone costs in retrieval quality.

A weight is the constant B input of MatMul, Gemm or MatMulInteger: an initializer, or
one read through DequantizeLinear (the Q/DQ file), whose zeroed int8 values stay exactly
zero only when its zero point is 0, so a weight with another zero point is left alone.
Every other initializer (embeddings, biases, LayerNorm scales, Q/DQ scales) is untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from onnx_export.atomic import save_model
from onnx_export.export import set_metadata

GROUP = 4  # weights per group along the input dimension
KEEP = 2  # the largest-magnitude weights kept in each group
PATTERN = f"{KEEP}:{GROUP}"
LINEAR_OPS = ("MatMul", "Gemm", "MatMulInteger")
# Where each op's weight (B) input is, and where the zero point of a quantized one is.
WEIGHT_INPUT = 1
ZERO_POINT_INPUT = {"MatMulInteger": 3, "DequantizeLinear": 2}


@dataclass
class PruneReport:
    path: Path
    pruned: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "name: why"
    zeroed: int = 0
    total: int = 0

    def line(self) -> str:
        share = self.zeroed / self.total if self.total else 0.0
        out = (f"pruned {len(self.pruned)} linear weights to {PATTERN} ({self.zeroed:,} of "
               f"{self.total:,} weights zeroed, {share:.1%}) -> {self.path}")
        if self.skipped:
            out += f"; left dense: {'; '.join(self.skipped)}"
        return out


def prune_2_4(weight: np.ndarray, axis: int) -> np.ndarray:
    """`weight` with the 2 smallest magnitudes of each 4 consecutive along `axis` zeroed.

    Ties keep the earlier weights (a stable sort), so the result is deterministic."""
    moved = np.moveaxis(weight, axis, -1)
    groups = moved.reshape(*moved.shape[:-1], moved.shape[-1] // GROUP, GROUP)
    # float64 magnitudes: abs() of int8 -128 overflows in its own type.
    order = np.argsort(np.abs(groups.astype(np.float64)), axis=-1, kind="stable")
    keep = np.zeros(groups.shape, dtype=bool)
    np.put_along_axis(keep, order[..., GROUP - KEEP:], True, axis=-1)
    pruned = np.where(keep, groups, np.zeros((), dtype=weight.dtype)).reshape(moved.shape)
    return np.moveaxis(pruned, -1, axis)


def _input_axis(node: onnx.NodeProto, rank: int) -> int:
    """The axis of B that is the layer's input dimension (the one the product sums over)."""
    if node.op_type == "Gemm":
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 1 if trans_b else 0
    return rank - 2  # MatMul / MatMulInteger: B is (..., K, N)


def _zero_point_is_zero(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto]) -> bool:
    index = ZERO_POINT_INPUT.get(node.op_type)
    if index is None or len(node.input) <= index or not node.input[index]:
        return True
    zp = inits.get(node.input[index])
    return zp is not None and not numpy_helper.to_array(zp).any()


def _weight_of(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto],
               producers: dict[str, onnx.NodeProto]) -> tuple[str | None, str]:
    """(initializer name, why not) of a linear node's constant weight."""
    if len(node.input) <= WEIGHT_INPUT:
        return None, "no weight input"
    name = node.input[WEIGHT_INPUT]
    if not _zero_point_is_zero(node, inits):
        return None, "nonzero zero point"
    if name in inits:
        return name, ""
    dq = producers.get(name)
    if dq is not None and dq.op_type == "DequantizeLinear" and dq.input[0] in inits:
        if not _zero_point_is_zero(dq, inits):
            return None, "nonzero zero point"
        return dq.input[0], ""
    return None, "not a constant"  # activation x activation (attention): nothing to prune


def prune_model(model: onnx.ModelProto, report: PruneReport) -> None:
    """Prune each linear layer's constant weight in place, once per initializer."""
    inits = {t.name: t for t in model.graph.initializer}
    producers = {out: n for n in model.graph.node for out in n.output}
    axes: dict[str, set[int]] = {}
    for node in model.graph.node:
        if node.op_type not in LINEAR_OPS:
            continue
        name, why = _weight_of(node, inits, producers)
        if name is None:
            if why != "not a constant":
                report.skipped.append(f"{node.name or node.op_type}: {why}")
            continue
        dims = inits[name].dims
        if len(dims) < 2:
            report.skipped.append(f"{name}: a vector, not a matrix")
        elif dims[_input_axis(node, len(dims))] % GROUP:
            report.skipped.append(f"{name}: input dimension not a multiple of {GROUP}")
        else:
            axes.setdefault(name, set()).add(_input_axis(node, len(dims)))
    for name, found in sorted(axes.items()):
        if len(found) > 1:
            report.skipped.append(f"{name}: shared by layers reading it along other axes")
            continue
        weight = numpy_helper.to_array(inits[name])
        pruned = prune_2_4(weight, found.pop())
        inits[name].CopyFrom(numpy_helper.from_array(pruned, name))
        report.pruned.append(name)
        report.zeroed += int(np.count_nonzero(weight) - np.count_nonzero(pruned))
        report.total += weight.size


def sparse_path(source: Path) -> Path:
    """`model.fp16.onnx` -> `model.fp16.sparse24.onnx`, beside it."""
    source = Path(source)
    return source.with_name(f"{source.stem}.sparse{KEEP}{GROUP}{source.suffix}")


def write_pruned(source: Path, out_path: Path | None = None) -> PruneReport:
    """Write `source` with its linear weights pruned to 2:4 (atomically) and say what."""
    out = Path(out_path or sparse_path(source))
    model = onnx.load(str(source))
    report = PruneReport(out)
    prune_model(model, report)
    set_metadata(model, {"sparsity": f"{PATTERN} pruned (no fine-tune)"})
    save_model(model, out)
    return report
