"""`load_embedder(path)`: the runtime that fits the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from retriever_trt.artifacts import (
    DEFAULT_EXPORT_DIR,
    ArtifactError,
    one_line,
    plan_rebuild_command,
)
from retriever_trt.embedder import Embedder


def load_embedder(path: str | Path | None, engines_dir: str | Path = "engines",
                  **kwargs: Any) -> Embedder:
    """`.onnx` → ONNX Runtime, `.plan`/`.engine` → TensorRT, a folder with config.json → torch;
    None: the bundled encoder (`default_embedder(engines_dir)`).

    Extra keyword arguments go to the backend (e.g. providers=["cuda"] for ONNX Runtime).
    """
    if path is None:
        return default_embedder(engines_dir)
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

        try:
            return TensorRTEmbedder(path, **kwargs)
        except ValueError as exc:  # TensorRT could not deserialize it, or it is no encoder
            problem = one_line(exc, 300).removeprefix(f"{path}: ")
            raise ArtifactError(path, problem, plan_rebuild_command(path)) from None
    raise ValueError(f"{path}: unknown embedder file type {suffix!r} "
                     "(expected .onnx, .plan, .engine or a model folder)")


def default_embedder(engines_dir: str | Path, progress: bool = True) -> Embedder:
    """The bundled all-MiniLM-L6-v2 as an ONNX graph, exported once into `engines_dir`.

    Runs on ONNX Runtime with the CUDA provider where onnxruntime-gpu finds a GPU, the CPU
    provider otherwise (TensorRT plans are built on purpose with `retrexec`).
    """
    import sys

    out = Path(engines_dir) / DEFAULT_EXPORT_DIR
    onnx_path = out / "model.onnx"
    if not onnx_path.is_file():
        from onnx_export.encoder import default_encoder_dir
        from onnx_export.export import export_folder

        if progress:
            print(f"finrag: exporting the default encoder to {onnx_path} (first run)",
                  file=sys.stderr)
        try:
            export_folder(default_encoder_dir(), out)
        except Exception as exc:  # noqa: BLE001 - one line naming the command that redoes it
            raise RuntimeError(f"exporting the default encoder to {out} failed "
                               f"({type(exc).__name__}: {exc}); rebuild with "
                               f"python -m onnx_export --model=default --outDir={out}") from None
    elif progress:
        print(f"finrag: loading the encoder from {onnx_path}", file=sys.stderr)
    import onnxruntime as ort

    providers = ["cuda"] if "CUDAExecutionProvider" in ort.get_available_providers() else None
    return load_embedder(onnx_path, providers=providers)
