"""Export a Hugging Face BERT-family encoder to ONNX with pooling inside the graph.

The graph takes `input_ids` and `attention_mask` (int64, dynamic batch × sequence),
builds zero token type ids itself, mean-pools over the mask and L2-normalises, so
every runtime (ONNX Runtime, TensorRT) returns ready-to-index vectors `embeddings`.
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch

from onnx_export.atomic import atomic_path

INPUT_NAMES = ("input_ids", "attention_mask")
OUTPUT_NAME = "embeddings"
OPSET = 17  # 17 has LayerNormalization as one op, which TensorRT and ORT fuse well
TOKENIZER_FILES = ("tokenizer.json", "sentence_bert_config.json", "tokenizer_config.json")

# Real finance sentences of varied length for the numerical check against torch.
CHECK_SENTENCES = [
    "What was the total revenue in 2019?",
    "Net cash provided by operating activities increased by $12.4 million compared to the"
    " prior year, primarily due to higher net income and changes in working capital.",
    "Goodwill is tested for impairment annually.",
    "The effective tax rate was 21.3% for fiscal 2019 and 24.1% for fiscal 2018, reflecting"
    " the impact of the Tax Cuts and Jobs Act on our deferred tax assets and liabilities,"
    " partially offset by non-deductible stock compensation and foreign rate differentials.",
    "How much did the company spend on research and development?",
    "Dividends declared per share",
    "Operating lease liabilities are recognised at the present value of remaining lease"
    " payments, discounted using our incremental borrowing rate.",
]


class EncoderCheckError(RuntimeError):
    """The exported graph does not reproduce the torch reference closely enough."""


class PooledEncoder(torch.nn.Module):
    """HF encoder + zero token types + masked mean pooling + L2 normalisation."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        token_type_ids = torch.zeros_like(input_ids)
        hidden = self.model(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        norm = pooled.norm(p=2, dim=-1, keepdim=True).clamp(min=1e-12)
        return pooled / norm


@dataclass
class ExportResult:
    path: Path
    dim: int
    max_abs_diff: float
    min_cosine: float


def _load_hf(model_dir: Path) -> torch.nn.Module:
    from transformers import AutoModel

    # Eager attention traces to plain MatMul/Softmax, which every runtime parses;
    # SDPA paths vary between transformers releases.
    try:
        model = AutoModel.from_pretrained(model_dir, attn_implementation="eager")
    except (TypeError, ValueError):
        model = AutoModel.from_pretrained(model_dir)
    return model.eval()


def export_onnx(model_dir: Path, out_path: Path, check: bool = True, atol: float = 1e-4) -> (
    ExportResult
):
    """Export `model_dir` to `out_path` (FP32), check it, compare with torch."""
    from onnx_export.encoder import load_encoder_tokenizer, tokenize_batch

    model_dir, out_path = Path(model_dir), Path(out_path)
    wrapper = PooledEncoder(_load_hf(model_dir)).eval()
    tokenizer, _ = load_encoder_tokenizer(model_dir)
    ids, mask = tokenize_batch(tokenizer, CHECK_SENTENCES[:2])
    dynamic_axes = {
        "input_ids": {0: "batch", 1: "sequence"},
        "attention_mask": {0: "batch", 1: "sequence"},
        OUTPUT_NAME: {0: "batch"},
    }
    with atomic_path(out_path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about python ints are expected
        with torch.inference_mode():
            torch.onnx.export(
                wrapper,
                (torch.from_numpy(ids), torch.from_numpy(mask)),
                str(tmp),
                input_names=list(INPUT_NAMES),
                output_names=[OUTPUT_NAME],
                dynamic_axes=dynamic_axes,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        dim = int(wrapper.model.config.hidden_size)
        _, max_len = load_encoder_tokenizer(model_dir)
        model_id = model_dir.name if model_dir.name != "model" else model_dir.parent.name
        proto = onnx.load(str(tmp))
        set_metadata(proto, {"model_id": model_id, "precision": "fp32", "dim": str(dim),
                             "max_seq_len": str(max_len), "source_dir": str(model_dir)})
        onnx.save_model(proto, str(tmp))
        del proto
        onnx.checker.check_model(str(tmp), full_check=True)
        diff, cos = check_against_torch(tmp, model_dir, atol) if check else (0.0, 1.0)
    return ExportResult(out_path, dim, diff, cos)


def export_folder(model_dir: Path, out_dir: Path, check: bool = True) -> ExportResult:
    """`out_dir/model.onnx` (FP32) with the tokenizer files beside it, where runtimes look."""
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (model_dir / name).is_file():
            shutil.copyfile(model_dir / name, out_dir / name)
    return export_onnx(model_dir, out_dir / "model.onnx", check=check)


def check_against_torch(onnx_path: Path, model_dir: Path, atol: float = 1e-4,
                        sentences: list[str] | None = None) -> tuple[float, float]:
    """Raise EncoderCheckError (with the numbers) unless ONNX matches torch within `atol`."""
    sentences = sentences or CHECK_SENTENCES
    diff, cos = compare_with_torch(onnx_path, model_dir, sentences)
    if diff > atol:
        raise EncoderCheckError(
            f"ONNX export of {model_dir} differs from torch: max abs diff {diff:.3g}"
            f" > {atol:g} (min cosine {cos:.6f}) on {len(sentences)} sentences"
        )
    return diff, cos


def set_metadata(model: onnx.ModelProto, values: dict[str, str]) -> None:
    """Set `finrag.*` metadata_props, which runtimes read to find model id and precision."""
    from onnx_export.encoder import META_PREFIX

    keep = [p for p in model.metadata_props
            if p.key not in {META_PREFIX + k for k in values}]
    del model.metadata_props[:]
    model.metadata_props.extend(keep)
    for key, value in values.items():
        model.metadata_props.add(key=META_PREFIX + key, value=value)


def stamp_metadata(path: Path, values: dict[str, str]) -> None:
    """Rewrite `path` (atomically) with `finrag.*` metadata set."""
    from onnx_export.atomic import save_model

    model = onnx.load(str(path))
    set_metadata(model, values)
    save_model(model, path)


def compare_with_torch(
    onnx_path: Path, model_dir: Path, sentences: list[str]
) -> tuple[float, float]:
    """(max abs diff, min cosine) between the ONNX graph on ORT CPU and TorchEmbedder."""
    import onnxruntime as ort

    from onnx_export.encoder import TorchEncoder, tokenize_batch

    ref = TorchEncoder(model_dir)
    expected = ref.encode(sentences)
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    ids, mask = tokenize_batch(ref.tokenizer, sentences)
    got = sess.run([OUTPUT_NAME], {"input_ids": ids, "attention_mask": mask})[0]
    diff = float(np.abs(got - expected).max())
    cos = float((got * expected).sum(-1).min())
    return diff, cos
