"""finrag's retriever: embedding runtimes, engine builder, retrexec, shape profiles, FAISS
index, document store, BM25 and hybrid retrieval.

Embedding backends are imported lazily so `import retriever_trt` needs neither torch nor
TensorRT.
"""

from __future__ import annotations

from typing import Any

from retriever_trt.embedder import Embedder
from retriever_trt.index import VectorIndex
from retriever_trt.ingest import load_corpus
from retriever_trt.retriever import Passage, Retriever
from retriever_trt.store import Chunk, DocumentStore

_LAZY = {
    "TorchEmbedder": "retriever_trt.torch_embedder",
    "OnnxRuntimeEmbedder": "retriever_trt.ort_embedder",
    "TensorRTEmbedder": "retriever_trt.trt_embedder",
    "load_embedder": "retriever_trt.loader",
    "Profile": "retriever_trt.profiles",
}

__all__ = ["Chunk", "DocumentStore", "Embedder", "Passage", "Retriever", "VectorIndex",
           "load_corpus", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'retriever_trt' has no attribute {name!r}")
