"""Search: the hybrid `Retriever` (dense + BM25 + the tables' row match, fused by rank),
metadata filters, and retrieval evaluation."""
