"""FP16 conversion that keeps numerically fragile ops in FP32.

LayerNormalization (variance of 384 values), Softmax (exp of large logits), the
reductions and everything after the encoder (masked mean pooling, L2 norm) lose too
much in half precision; the big MatMuls, where the time goes, are FP16. The casts this
inserts make the file strongly typed, which is what TensorRT 10/11 builds from.
"""

from __future__ import annotations

from pathlib import Path

import onnx

from onnx_export.atomic import save_model
from onnx_export.export import set_metadata

FP32_OPS = [
    "LayerNormalization", "Softmax", "ReduceSum", "ReduceMean", "ReduceL2", "ReduceMax",
    "Pow", "Sqrt", "Erf", "Range", "CumSum",
]


def pooling_nodes(model: onnx.ModelProto) -> list[str]:
    """Nodes outside the HF encoder: the wrapper's pooling and normalisation.

    The exporter names nodes by module path; the encoder's start with `/model/`.
    """
    return [n.name for n in model.graph.node if n.name and not n.name.startswith("/model/")]


def convert_fp16(fp32_path: Path, out_path: Path) -> Path:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = onnx.load(str(fp32_path))
    fp16 = convert_float_to_float16(
        model,
        keep_io_types=True,  # callers keep feeding int64 ids and reading float32 vectors
        op_block_list=FP32_OPS,
        node_block_list=pooling_nodes(model),
    )
    topological_sort(fp16.graph)
    set_metadata(fp16, {"precision": "fp16"})
    onnx.checker.check_model(fp16)
    return save_model(fp16, out_path)


def topological_sort(graph: onnx.GraphProto) -> None:
    """Reorder nodes so each follows its producers (the converter appends its Casts)."""
    produced_by = {out: i for i, n in enumerate(graph.node) for out in n.output}
    order: list[int] = []
    state: dict[int, int] = {}  # 1 = visiting, 2 = done

    def visit(i: int) -> None:
        stack = [(i, iter(graph.node[i].input))]
        state[i] = 1
        while stack:
            node, inputs = stack[-1]
            for name in inputs:
                j = produced_by.get(name)
                if j is not None and state.get(j) is None:
                    state[j] = 1
                    stack.append((j, iter(graph.node[j].input)))
                    break
            else:
                stack.pop()
                state[node] = 2
                order.append(node)

    for i in range(len(graph.node)):
        if i not in state:
            visit(i)
    nodes = [graph.node[i] for i in order]
    del graph.node[:]
    graph.node.extend(nodes)
