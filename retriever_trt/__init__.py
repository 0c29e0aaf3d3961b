"""finrag's retriever, one sub-package a concern: `embedders` (the runtimes, shape profiles),
`build` (engine builder, retrexec), `indexing` (ingest, chunking, corpus encoding), `store`
(document store, FAISS index, Milvus), `search` (BM25, row match, hybrid retrieval), `live`
(documents added while serving) and `documents` (a loader a format).

Embedding backends are imported lazily so `import retriever_trt` needs neither torch nor
TensorRT.
"""

from __future__ import annotations

from typing import Any

from retriever_trt.embedders.embedder import Embedder
from retriever_trt.indexing.ingest import load_corpus
from retriever_trt.search.retriever import Passage, Retriever
from retriever_trt.store.document_store import Chunk, DocumentStore
from retriever_trt.store.faiss_index import VectorIndex

_LAZY = {
    "TorchEmbedder": "retriever_trt.embedders.torch_embedder",
    "OnnxRuntimeEmbedder": "retriever_trt.embedders.ort_embedder",
    "TensorRTEmbedder": "retriever_trt.embedders.trt_embedder",
    "load_embedder": "retriever_trt.embedders.loader",
    "Profile": "retriever_trt.embedders.profiles",
}

__all__ = ["Chunk", "DocumentStore", "Embedder", "Passage", "Retriever", "VectorIndex",
           "load_corpus", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'retriever_trt' has no attribute {name!r}")
