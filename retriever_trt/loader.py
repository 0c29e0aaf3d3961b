"""`load_embedder(path)`: the runtime that fits the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from retriever_trt.embedder import Embedder


def load_embedder(path: str | Path, **kwargs: Any) -> Embedder:
    """`.onnx` → ONNX Runtime, `.plan`/`.engine` → TensorRT, a folder with config.json → torch.

    Extra keyword arguments go to the backend (e.g. providers=["cuda"] for ONNX Runtime).
    """
    path = Path(path)
    if path.is_dir():
        if (path / "config.json").is_file():
            from retriever_trt.torch_embedder import TorchEmbedder

            return TorchEmbedder(path, **kwargs)
        raise ValueError(f"{path}: a folder must hold a Hugging Face encoder (config.json)")
    if not path.exists():
        raise FileNotFoundError(f"embedder file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        from retriever_trt.ort_embedder import OnnxRuntimeEmbedder

        return OnnxRuntimeEmbedder(path, **kwargs)
    if suffix in (".plan", ".engine"):
        from retriever_trt.trt_embedder import TensorRTEmbedder

        return TensorRTEmbedder(path, **kwargs)
    raise ValueError(f"{path}: unknown embedder file type {suffix!r} "
                     "(expected .onnx, .plan, .engine or a model folder)")
