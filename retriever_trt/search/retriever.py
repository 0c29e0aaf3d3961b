"""`Retriever`: embedder + vector store + document store (+ BM25), fused by reciprocal rank
with the tables' row match (row_match.py).

The vectors are in a FAISS `VectorIndex` in memory (default) or in a Milvus collection
shared by every replica (`MilvusVectorStore`, vector_store.py says how they differ).

Saved layout of `Retriever.save(dir)` (one atomic swap for the whole folder):
    dir/manifest.json   embedder, factory, corpus, counts, checksums
    dir/index/          VectorIndex (index.faiss + manifest.json)
    dir/store/          DocumentStore (chunks.jsonl, bm25.npz, bm25.json + manifest.json)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retriever_trt.embedders.embedder import Embedder
from retriever_trt.indexing.chunking import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_OVERLAP,
    TokenCounter,
    tokenizer_counter,
)
from retriever_trt.indexing.ingest import IngestReport, ingest
from retriever_trt.indexing.streaming_encoder import StreamingEncoder
from retriever_trt.search.bm25 import DEFAULT_B, DEFAULT_K1
from retriever_trt.search.filters import MetadataFilter
from retriever_trt.search.row_match import RowMatcher
from retriever_trt.store.document_store import DocumentStore
from retriever_trt.store.faiss_index import VectorIndex, check_embedder
from retriever_trt.store.storage import (
    IndexFileError,
    atomic_directory,
    read_manifest,
    rebuild_hint,
    resolve_dir,
    write_manifest,
)
from retriever_trt.store.vector_store import MilvusConfig, VectorStore

MODES = ("hybrid", "dense", "bm25")
KIND = "retriever"


@dataclass
class Passage:
    """One retrieved chunk; `sources` holds the ids of what it came from, for citations."""

    chunk_id: str
    doc_id: str
    text: str
    title: str
    score: float
    sources: dict[str, str] = field(default_factory=dict)


def chunk_counter(embedder: Embedder) -> TokenCounter | None:
    """Chunk sizes counted with the embedder's own tokenizer when it exposes one."""
    tokenizer = getattr(embedder, "tokenizer", None)
    return tokenizer_counter(tokenizer) if hasattr(tokenizer, "encode_batch") else None


def rrf_fuse(rankings: Sequence[np.ndarray], rrf_k: int,
             weights: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted reciprocal-rank fusion: score(d) = sum over rankings i of
    weights[i] / (rrf_k + rank of d in i); equal weights when None."""
    fused: dict[int, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, idx in enumerate(ranking[ranking >= 0].tolist(), 1):
            fused[idx] = fused.get(idx, 0.0) + weight / (rrf_k + rank)
    ids = np.array(sorted(fused, key=lambda i: (-fused[i], i)), dtype=np.int64)
    return np.array([fused[i] for i in ids.tolist()], dtype=np.float32), ids


# Hybrid fusion: BM25's weight against dense's 1, and rrf_k. Chosen on half a of TAT-QA dev
# (recall@5, then MRR@10), reported on half b (benchmarks/retrieval_eval.py --choose-weights;
# the MiniLM ranking is weak on tables of numbers, so at equal weights it
# demoted BM25's hits (hybrid 0.776 recall@5 against BM25's 0.814); dense still adds the
# chunks BM25 ranks low.
DEFAULT_BM25_WEIGHT = 4.0
DEFAULT_RRF_K = 30
# The row match's weight in the same fusion (row_match.py): the table pieces of the dense
# and BM25 candidates that show a row the question names, most specific label first.
# Chosen on half a of TAT-QA dev (hybrid recall@5, then MRR@10; 0.5 to 6 swept), reported
# on half b (benchmarks/retrieval_eval.py --choose-row-match); 0 turns it off.
DEFAULT_ROW_MATCH_WEIGHT = 2.0
# How deep each ranking is read before fusing: a chunk ranked 30th by both can beat one
# ranked 3rd by only one of them.
FUSION_DEPTH = 50


class Retriever:
    def __init__(
        self,
        embedder: Embedder,
        index: VectorStore,
        store: DocumentStore,
        mode: str = "hybrid",
        rrf_k: int = DEFAULT_RRF_K,
        bm25_weight: float = DEFAULT_BM25_WEIGHT,
        row_match_weight: float = DEFAULT_ROW_MATCH_WEIGHT,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {MODES}")
        if bm25_weight < 0 or row_match_weight < 0 or rrf_k < 1:
            raise ValueError("bm25_weight and row_match_weight must be >= 0 and rrf_k >= 1, "
                             f"got {bm25_weight}, {row_match_weight}, {rrf_k}")
        if len(index) != len(store):
            raise ValueError(f"index holds {len(index)} vectors but the store {len(store)} chunks")
        if store.bm25 is None:
            store.build_bm25()
        self.embedder, self.index, self.store = embedder, index, store
        self.mode, self.rrf_k, self.bm25_weight = mode, rrf_k, bm25_weight
        self.row_match_weight = row_match_weight
        self.row_matcher = RowMatcher(store)
        # What building from a corpus read (None for a loaded index): `finrag index`'s summary.
        self.ingest_report: IngestReport | None = None

    def retrieve(
        self, questions: Sequence[str], k: int = 5, mode: str | None = None,
        filters: Sequence[MetadataFilter | None] | None = None,
    ) -> list[list[Passage]]:
        """Top-k passages per question; all questions go through one `encode` call.
        `filters[i]` limits question i to the chunks of the documents it passes."""
        mode = mode or self.mode
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {MODES}")
        questions = list(questions)
        if not questions:
            return []
        vectors = self.embedder.encode(questions) if mode != "bm25" else None
        with self.store.lock:  # an upload or delete is published whole, between searches
            live = self.store.live_rows()
            filters = list(filters or [None] * len(questions))
            subsets = [live if f is None else self.store.rows_where(f) for f in filters]
            return [self._rank(question, vectors, row, subsets[row], filters[row], k, mode)
                    for row, question in enumerate(questions)]

    def _rank(self, question: str, vectors: np.ndarray | None, row: int,
              subset: np.ndarray | None, filt: MetadataFilter | None, k: int,
              mode: str) -> list[Passage]:
        fused = mode == "hybrid" or self.row_match_weight > 0
        depth = min(max(FUSION_DEPTH, 4 * k) if fused else k, len(self.store))
        if depth == 0 or (subset is not None and len(subset) == 0):
            return []
        rankings, weights = [], []
        if mode != "bm25":
            scores, ids = self.index.search_rows(vectors[row : row + 1], depth, subset, filt)
            rankings.append(ids[0])
            weights.append(1.0)
        if mode != "dense":
            scores, ids = self.store.bm25.search([question], depth, subset)
            rankings.append(ids[0])
            weights.append(self.bm25_weight)
        if not fused:  # one ranking keeps its own scores (cosine or BM25), fused ones RRF's
            scores, ids = scores[0], ids[0]
        else:
            if self.row_match_weight > 0:
                # Candidates in the dense and BM25 fusion's order, which breaks the ties
                # between labels as specific (a "Total revenue" row in many tables).
                candidates = rrf_fuse(rankings, self.rrf_k, weights)[1]
                rankings.append(self.row_matcher.rank(question, candidates))
                weights.append(self.row_match_weight)
            scores, ids = rrf_fuse(rankings, self.rrf_k, weights)
        keep = ids >= 0
        return self._passages(ids[keep][:k], scores[keep][:k])

    def add(self, part: DocumentStore, vectors: np.ndarray) -> None:
        """Publish new documents (their chunks, metadata, facts and chunk vectors) to every
        part at once: a search sees all of them or none."""
        texts = [part.index_text(i) for i in range(len(part))]
        with self.store.lock:
            self.index.publish(vectors, len(self.store), part)
            self.store.bm25.extend(texts)
            self.store.extend(part.chunks, part.info.values())

    def remove(self, doc_id: str) -> bool:
        """Take a document out of every part; False when it is not held."""
        with self.store.lock:
            rows = self.store.remove(doc_id)
            self.store.bm25.remove(rows)
            self.index.forget(doc_id)
        return len(rows) > 0

    @classmethod
    def empty(cls, embedder: Embedder, factory: str = "Flat",
              milvus: MilvusConfig | None = None, **kwargs: Any) -> Retriever:
        """A retriever holding nothing yet (documents come through `add`); its vectors in
        Milvus when `milvus` is given, else in a FAISS `factory` index."""
        store = DocumentStore([], corpus="")
        store.build_bm25()
        index = (VectorIndex.for_embedder(embedder, factory) if milvus is None
                 else open_milvus(milvus, embedder))
        return cls(embedder, index, store, **kwargs)

    def _passages(self, ids: np.ndarray, scores: np.ndarray) -> list[Passage]:
        out = []
        for idx, score in zip(ids.tolist(), scores.tolist(), strict=True):
            c = self.store[idx]
            out.append(Passage(c.chunk_id, c.doc_id, c.text, c.title, score, dict(c.sources)))
        return out

    @classmethod
    def from_corpus(
        cls,
        embedder: Embedder,
        corpus_path: str | Path,
        factory: str = "Flat",
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        overlap: int = DEFAULT_OVERLAP,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        progress: bool = True,
        **kwargs: Any,
    ) -> Retriever:
        """Ingest, chunk, encode and index a corpus in memory: each document's chunks are
        encoded in a thread while the next documents are read (and BM25 is built)."""
        with StreamingEncoder(embedder, progress=progress) as encoder:
            store, report = ingest(corpus_path, chunk_tokens, overlap, chunk_counter(embedder),
                                   progress=progress, on_texts=encoder.add)
            if progress:
                print(f"finrag: {report.summary()}", file=sys.stderr)
            store.build_bm25(k1, b)
            vectors = encoder.finish()
        report.encoded = len(encoder.seen.first)
        if len(vectors) != len(store):  # the reader handed over every chunk, in order
            raise RuntimeError(f"{len(vectors)} vectors for {len(store)} chunks")
        index = VectorIndex.for_embedder(embedder, factory, corpus_hash=store.corpus_hash)
        index.build(vectors, progress=progress)
        retriever = cls(embedder, index, store, **kwargs)
        retriever.ingest_report = report
        return retriever

    @classmethod
    def build(
        cls, embedder: Embedder, corpus_path: str | Path, out_dir: str | Path, **kwargs: Any
    ) -> Retriever:
        """`finrag index --corpus PATH --out DIR`: build from a corpus and save."""
        retriever = cls.from_corpus(embedder, corpus_path, **kwargs)
        retriever.save(out_dir)
        return retriever

    def save(self, directory: str | Path) -> None:
        if not isinstance(self.index, VectorIndex):
            raise ValueError("a retriever over Milvus keeps its vectors there; `finrag index` "
                             "saves folders with a FAISS index (vector_store: faiss)")
        with atomic_directory(directory) as tmp:
            (tmp / "index").mkdir()
            (tmp / "store").mkdir()
            extra = {"corpus": self.store.corpus}
            self.index.write(tmp / "index", extra)
            self.store.write(tmp / "store")
            write_manifest(tmp, KIND, {**self.index.manifest_fields(), **extra,
                                       "embedder": embedder_source(self.embedder)})

    @classmethod
    def load(
        cls, directory: str | Path, embedder: Embedder, mode: str = "hybrid",
        rrf_k: int = DEFAULT_RRF_K, bm25_weight: float = DEFAULT_BM25_WEIGHT,
        row_match_weight: float = DEFAULT_ROW_MATCH_WEIGHT, milvus: MilvusConfig | None = None,
    ) -> Retriever:
        """A saved folder; with `milvus`, its vectors are written to the Milvus collection
        (upserts: the entities of a replica that started earlier are rewritten, not added)
        and searched there, and the FAISS index read from the folder is let go."""
        folder = resolve_dir(directory)
        # Checksums of the parts are checked by their own manifests below.
        manifest = read_manifest(folder, KIND, verify=False)
        check_embedder(manifest, embedder, folder)
        index = VectorIndex.load(folder / "index", expect_embedder=embedder)
        store = DocumentStore.load(folder / "store")
        hint = rebuild_hint(folder, manifest.get("corpus"))
        if index.corpus_hash != store.corpus_hash:
            raise IndexFileError(f"{folder}: index and store come from different corpora; {hint}")
        if len(index) != len(store):
            raise IndexFileError(f"{folder}: the index holds {len(index)} vectors but the store "
                                 f"{len(store)} chunks; {hint}")
        vectors: VectorStore = index
        if milvus is not None:
            vectors = open_milvus(milvus, embedder)
            vectors.publish(index.stored_vectors(), 0, store)
        return cls(embedder, vectors, store, mode, rrf_k, bm25_weight, row_match_weight)


def open_milvus(config: MilvusConfig, embedder: Embedder) -> VectorStore:
    # Imported here: pymilvus is optional, and only `vector_store: milvus` needs it.
    from retriever_trt.store.milvus_store import MilvusVectorStore

    return MilvusVectorStore(config, embedder.dim, embedder.model_id, embedder.precision)


def embedder_source(embedder: Any) -> str | None:
    """The file or folder an embedder was loaded from, recorded so a rebuild uses it again."""
    source = getattr(embedder, "path", None) or getattr(embedder, "model_dir", None)
    return str(Path(source).resolve()) if source is not None else None
