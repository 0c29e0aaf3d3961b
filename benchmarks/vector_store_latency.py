"""One dense search's latency: FAISS Flat in process against Milvus (FLAT), same corpus.

    python3 benchmarks/vector_store_latency.py [--chunks N] [--dim D] [--queries Q] [--k K]
        [--milvus-uri URI]

Synthetic unit vectors (the ranking is not what is measured), documents of 100 chunks in 4
collections. Each query is searched alone, as `Retriever.retrieve` does, with no filter, a
doc_id filter of 5 documents, and a tenant filter (one collection). Printed: p50 and p95 in
ms per backend and filter, and whether the two returned the same rows. milvus_uri defaults
to a milvus-lite file in a temporary folder (in-process gRPC server); give a server's
address to measure one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reproduce import print_command  # noqa: E402

from retriever_trt.documents.model import DocumentMetadata, Form  # noqa: E402
from retriever_trt.search.filters import MetadataFilter, within_tenant  # noqa: E402
from retriever_trt.store.document_store import Chunk, DocumentInfo, DocumentStore  # noqa: E402
from retriever_trt.store.faiss_index import VectorIndex  # noqa: E402
from retriever_trt.store.milvus_store import MilvusVectorStore  # noqa: E402
from retriever_trt.store.vector_store import MilvusConfig, VectorStore  # noqa: E402

CHUNKS_PER_DOC = 100
COLLECTIONS = ("alpha", "beta", "gamma", "delta")


def corpus(chunks: int) -> DocumentStore:
    docs = [f"doc-{i:05d}" for i in range(max(1, chunks // CHUNKS_PER_DOC))]
    rows = [Chunk(f"{d}#{j}", d, d, "") for d in docs for j in range(CHUNKS_PER_DOC)]
    infos = [DocumentInfo(d, d, DocumentMetadata(f"Company {i}", "", Form.TEN_K, 2024),
                          collection=COLLECTIONS[i % len(COLLECTIONS)])
             for i, d in enumerate(docs)]
    return DocumentStore(rows, documents=infos)


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def timed(backend: VectorStore, queries: np.ndarray, k: int, subset: np.ndarray | None,
          filt: MetadataFilter | None) -> tuple[list[float], list[np.ndarray]]:
    ms, rows = [], []
    for q in queries:
        start = time.perf_counter()
        _, got = backend.search_rows(q[None, :], k, subset, filt)
        ms.append((time.perf_counter() - start) * 1000)
        rows.append(got[0])
    return ms, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=20000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--milvus-uri")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    store = corpus(args.chunks)
    vectors, queries = unit(rng, len(store), args.dim), unit(rng, args.queries, args.dim)
    faiss_index = VectorIndex(args.dim, "Flat", use_gpu=False)
    faiss_index.build(vectors)
    with tempfile.TemporaryDirectory() as tmp:
        milvus = MilvusVectorStore(MilvusConfig(args.milvus_uri or f"{tmp}/bench.db"), args.dim)
        start = time.perf_counter()
        milvus.publish(vectors, 0, store)
        print(f"milvus: {len(store)} vectors written in {time.perf_counter() - start:.1f} s")
        docs = list(store.info)[:5]
        filters = {"none": None, "doc_id (5 docs)": MetadataFilter(doc_id=tuple(docs)),
                   "tenant (1 of 4)": within_tenant(None, frozenset({"alpha"}))}
        for name, filt in filters.items():
            subset = store.rows_where(filt) if filt is not None else None
            f_ms, f_rows = timed(faiss_index, queries, args.k, subset, filt)
            m_ms, m_rows = timed(milvus, queries, args.k, subset, filt)
            same = all(np.array_equal(a, b) for a, b in zip(f_rows, m_rows, strict=True))
            print(f"{name:16s} faiss p50 {_p(f_ms, 50):7.2f} p95 {_p(f_ms, 95):7.2f} ms | "
                  f"milvus p50 {_p(m_ms, 50):7.2f} p95 {_p(m_ms, 95):7.2f} ms | same rows {same}")
    print_command(__file__)


def _p(values: list[float], pct: int) -> float:
    return statistics.quantiles(values, n=100)[pct - 1]


if __name__ == "__main__":
    main()
