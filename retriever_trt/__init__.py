"""finrag's retriever: embedding runtimes, engine builder, retrexec, profiles.

Backends are imported lazily so `import retriever_trt` needs neither torch nor TensorRT.
"""

from __future__ import annotations

from typing import Any

from retriever_trt.embedder import Embedder

_LAZY = {
    "TorchEmbedder": "retriever_trt.torch_embedder",
    "OnnxRuntimeEmbedder": "retriever_trt.ort_embedder",
    "TensorRTEmbedder": "retriever_trt.trt_embedder",
    "load_embedder": "retriever_trt.loader",
    "Profile": "retriever_trt.profiles",
}

__all__ = ["Embedder", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'retriever_trt' has no attribute {name!r}")
