"""Stores: the document store (chunks, metadata, facts, BM25), the vector stores (FAISS in
memory, Milvus shared) and the atomic saves and manifests they are written with."""
