"""finrag's retriever: embedders, FAISS index, document store, BM25 and hybrid retrieval."""

from retriever_trt.documents import Chunk, DocumentStore
from retriever_trt.embedder import Embedder
from retriever_trt.index import VectorIndex
from retriever_trt.ingest import load_corpus
from retriever_trt.retriever import Passage, Retriever

__all__ = [
    "Chunk",
    "DocumentStore",
    "Embedder",
    "Passage",
    "Retriever",
    "VectorIndex",
    "load_corpus",
]
