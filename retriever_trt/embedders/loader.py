"""`load_embedder(path)`: the runtime that fits the file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from retriever_trt.embedders.artifacts import (
    DEFAULT_EXPORT_DIR,
    DYNAMIC_INT8_FILE,
    ArtifactError,
    one_line,
    plan_rebuild_command,
)
from retriever_trt.embedders.embedder import Embedder, describe_encoder


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
            from retriever_trt.embedders.torch_embedder import TorchEmbedder

            return TorchEmbedder(path, **kwargs)
        raise ValueError(f"{path}: a folder must hold a Hugging Face encoder (config.json)")
    if not path.exists():
        raise FileNotFoundError(f"embedder file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder

        return OnnxRuntimeEmbedder(path, **kwargs)
    if suffix in (".plan", ".engine"):
        from retriever_trt.embedders.trt_embedder import TensorRTEmbedder

        try:
            return TensorRTEmbedder(path, **kwargs)
        except ValueError as exc:  # TensorRT could not deserialize it, or it is no encoder
            problem = one_line(exc, 300).removeprefix(f"{path}: ")
            raise ArtifactError(path, problem, plan_rebuild_command(path)) from None
    raise ValueError(f"{path}: unknown embedder file type {suffix!r} "
                     "(expected .onnx, .plan, .engine or a model folder)")


# The file of the bundled encoder that `default_embedder` runs on CPU: dynamic INT8 (weights
# INT8, activations scaled per batch) encodes 2.07x FP32's sentences/s on ONNX Runtime CPU
# and keeps TAT-QA dev's recall@5 within 0.01 of FP32 (benchmarks/RESULTS.md, Retrieval).
# On a GPU the FP32 file runs: the CUDA provider has no fast kernels for its integer MatMuls.
CPU_ENCODER_FILE = DYNAMIC_INT8_FILE
FP32_ENCODER_FILE = "model.onnx"


def default_embedder(engines_dir: str | Path, progress: bool = True) -> Embedder:
    """The bundled all-MiniLM-L6-v2 as an ONNX graph, exported once into `engines_dir`:
    its dynamic INT8 graph on ONNX Runtime CPU, its FP32 graph with the CUDA provider where
    onnxruntime-gpu finds a GPU (TensorRT plans are built on purpose with `retrexec`).
    An index records which (retriever_trt/store/faiss_index.py) and refuses questions from the other.
    """
    import onnxruntime as ort

    out = Path(engines_dir) / DEFAULT_EXPORT_DIR
    fp32 = out / FP32_ENCODER_FILE
    if not fp32.is_file():
        _export_default(out, progress)
    on_gpu = "CUDAExecutionProvider" in ort.get_available_providers()
    path = fp32 if on_gpu else out / CPU_ENCODER_FILE
    if not path.is_file():
        _quantize_default(fp32, path, progress)
    embedder = load_embedder(path, providers=["cuda"] if on_gpu else None)
    if progress:
        print(f"finrag: encoder {path} ({'FP32, CUDA' if on_gpu else 'INT8 dynamic, CPU'}; "
              f"{describe(embedder)})", file=sys.stderr)
    return embedder


def describe(embedder: Embedder) -> str:
    """The encoder's identity as an index records it, for a log line."""
    return describe_encoder(embedder.model_id, embedder.precision, embedder.dim,
                            embedder.file_sha256)


def _export_default(out: Path, progress: bool) -> None:
    from onnx_export.encoder import default_encoder_dir
    from onnx_export.export import export_folder

    if progress:
        print(f"finrag: exporting the default encoder to {out} (first run)", file=sys.stderr)
    try:
        export_folder(default_encoder_dir(), out)
    except Exception as exc:  # noqa: BLE001 - one line naming the command that redoes it
        raise RuntimeError(f"exporting the default encoder to {out} failed "
                           f"({type(exc).__name__}: {exc}); rebuild with "
                           f"python -m onnx_export --model=default --outDir={out}") from None


def _quantize_default(fp32: Path, path: Path, progress: bool) -> None:
    """The dynamic INT8 graph of `fp32` (a few seconds, once; the same bytes every time)."""
    from onnx_export.quantize import quantize_dynamic_int8

    if progress:
        print(f"finrag: quantizing the default encoder to {path} (first run)", file=sys.stderr)
    try:
        quantize_dynamic_int8(fp32, path)
    except Exception as exc:  # noqa: BLE001 - one line naming the command that redoes it
        raise RuntimeError(f"quantizing {fp32} to {path} failed ({type(exc).__name__}: "
                           f"{exc}); rebuild with python -m onnx_export --model=default "
                           f"--outDir={path.parent} --int8") from None
