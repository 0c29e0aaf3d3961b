"""Metadata that travels with exported files, so a runtime can find its tokenizer.

ONNX files carry `finrag.*` metadata_props (written by onnx_export); TensorRT plans
have a `<plan>.json` sidecar (written by the builder). Both name the model id,
precision and embedding width; the tokenizer is `tokenizer.json` beside the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer

META_PREFIX = "finrag."


def onnx_metadata(path: Path) -> dict[str, str]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return {p.key[len(META_PREFIX):]: p.value for p in model.metadata_props
            if p.key.startswith(META_PREFIX)}


def plan_metadata(plan_path: Path) -> dict:
    side = Path(str(plan_path) + ".json")
    return json.loads(side.read_text()) if side.is_file() else {}


def guess_precision(path: Path) -> str:
    name = Path(path).name
    for p in ("int8", "fp16"):
        if f".{p}" in name:
            return p
    return "fp32"


def tokenizer_for(path: Path, meta: dict) -> tuple[Tokenizer, int, Path]:
    """(tokenizer, max_seq_len, folder) for an artifact: beside it, then its source folder."""
    from retriever_trt.torch_embedder import default_encoder_dir, load_encoder_tokenizer

    candidates = [Path(path).parent]
    if meta.get("source_dir"):
        candidates.append(Path(meta["source_dir"]))
    for folder in candidates:
        if (folder / "tokenizer.json").is_file():
            tok, max_len = load_encoder_tokenizer(folder)
            return tok, int(meta.get("max_seq_len", max_len)), folder
    folder = default_encoder_dir()
    tok, max_len = load_encoder_tokenizer(folder)
    return tok, max_len, folder
