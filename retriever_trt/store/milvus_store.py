"""`MilvusVectorStore`: the chunk vectors in one Milvus collection that every replica and
machine shares (`vector_store: milvus`; docs/documents_api.md, "One store for every replica").

One entity a chunk:

    chunk_id     VARCHAR primary key: a chunk's id is the same in every replica, its row is
                 not (each replica numbers rows in the order it loaded documents)
    doc_id, collection, company, ticker, form, fiscal_year
                 what `MetadataFilter` reads; company is `company_key` of the name, and
                 company/ticker/form/fiscal_year are null for a document without metadata
    vector       FLOAT_VECTOR(dim), searched by inner product (the vectors are unit length)

Writes are upserts keyed by chunk id, so a replica loading a document another one already
wrote rewrites the same entities instead of adding copies. A search pushes the metadata
filter down as a filter expression and maps the hits back to this process's rows by chunk
id: hits of documents this replica has not loaded yet (or no longer holds) are left out, so
it answers from exactly the documents its own store holds.

pymilvus is imported here only, and this module only when `vector_store` is milvus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from retriever_trt.search.filters import DEFAULT_COLLECTION, MetadataFilter, company_key
from retriever_trt.store.document_store import DocumentInfo, DocumentStore
from retriever_trt.store.vector_store import MILVUS_INSTALL, MilvusConfig, is_lite_uri

VECTOR, PRIMARY = "vector", "chunk_id"
# How milvus-lite names itself in get_server_version.
LITE_VERSION = "milvus_lite"
# The collection property naming the embedder whose vectors it holds.
IDENTITY = "finrag.embedder"
METRIC = "IP"
MAX_ID_CHARS = 1024
MAX_TEXT_CHARS = 1024
# Entities a request carries: 512 vectors of 1024 floats are 2 MiB, far below gRPC's limit.
UPSERT_BATCH = 512
# Each replica reads its own writes; other replicas' writes it only uses once it loaded the
# document itself (and wrote it again), so Strong's wait for every write is not needed.
CONSISTENCY = "Session"
# Hits of documents this replica does not hold are dropped: ask for some more than k.
OVERFETCH = 2
# Milvus's ceiling on a search's limit.
MAX_LIMIT = 16384
# A Milvus string literal knows these escapes (milvus-lite no \x or \u): a value holding
# another control character cannot be written, and is left out of the expression; no
# stored value holds one (company_key keeps letters and digits).
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote(value: str) -> str | None:
    """`value` as a double-quoted Milvus string literal; None when it cannot be written."""
    if any((ord(c) < 0x20 or ord(c) == 0x7F) and c not in _ESCAPES for c in value):
        return None
    return '"' + "".join(_ESCAPES.get(c, c) for c in value) + '"'


def _in(field: str, values: Iterable[str | int]) -> str:
    """`field in [...]`; strings are quoted, those that cannot be are left out."""
    items = [str(v) if isinstance(v, int) else quote(v) for v in values]
    return f"{field} in [{', '.join(sorted({i for i in items if i is not None}))}]"


def filter_expression(filt: MetadataFilter | None) -> str:
    """The Milvus filter expression passing what `filt.matches` passes ("" for no filter)."""
    if filt is None:
        return ""
    terms = []
    if filt.doc_id:
        terms.append(_in("doc_id", filt.doc_id))
    if filt.tenant is not None:
        terms.append(_in("collection", filt.tenant))
    if filt.collection:
        terms.append(_in("collection", filt.collection))
    if filt.company:  # a name or a ticker, as MetadataFilter.matches compares them
        names = {company_key(c) for c in filt.company} | {c.lower() for c in filt.company}
        terms.append(f"({_in('company', names)} or {_in('ticker', names)})")
    if filt.form:
        terms.append(_in("form", (f.value for f in filt.form)))
    if filt.fiscal_year:
        terms.append(_in("fiscal_year", filt.fiscal_year))
    return " and ".join(terms)


def entity_fields(doc_id: str, info: DocumentInfo | None) -> dict[str, Any]:
    """A chunk's filter fields, from its document (None: no metadata, so only doc_id and
    the default collection filter it, as in `MetadataFilter.matches`)."""
    if info is None:
        return {"doc_id": doc_id, "collection": DEFAULT_COLLECTION, "company": None,
                "ticker": None, "form": None, "fiscal_year": None}
    meta = info.metadata
    return {"doc_id": doc_id, "collection": info.collection,
            "company": company_key(meta.company), "ticker": meta.ticker.lower(),
            "form": meta.form.value, "fiscal_year": meta.fiscal_year}


def _import_pymilvus() -> Any:
    try:
        import pymilvus
    except ImportError as exc:
        raise ImportError(f"vector_store: milvus needs pymilvus ({exc}); install it with: "
                          f"{MILVUS_INSTALL}") from None
    return pymilvus


class MilvusVectorStore:
    def __init__(self, config: MilvusConfig, dim: int, model_id: str = "",
                 precision: str = "") -> None:
        self.config, self.dim = config, dim
        # Which embedder wrote the vectors: another one's vectors are not comparable.
        self.identity = f"finrag chunks: embedder {model_id} {precision} dim {dim}"
        self._client = self._connect()
        # milvus-lite (a .db file, or its server) searches rows not yet flushed by a Python
        # scan: 1.4 s a query over 20k rows, 41 ms once flushed into its FAISS segments
        # (benchmarks/vector_store_latency.py). A Milvus server seals segments itself and
        # rate-limits flush calls, so there it is left alone.
        self._flush = self._client.get_server_version().startswith(LITE_VERSION)
        self._ensure_collection()
        self._rows: dict[str, int] = {}          # chunk id -> this process's row
        self._doc_chunks: dict[str, list[str]] = {}
        self._next_row = 0

    def _connect(self) -> Any:
        pymilvus = _import_pymilvus()
        if is_lite_uri(self.config.uri):  # its folder, e.g. an --index folder not made yet
            Path(self.config.uri).parent.mkdir(parents=True, exist_ok=True)
        try:
            return pymilvus.MilvusClient(uri=self.config.uri)
        except pymilvus.MilvusException as exc:
            if is_lite_uri(self.config.uri):
                raise RuntimeError(
                    f"milvus_uri: milvus-lite cannot open {self.config.uri} ({exc.message}); "
                    "if another process has it open (one process only may), serve it with "
                    f"`milvus-lite server --data-dir {self.config.uri} --port 19530` and set "
                    "milvus_uri to http://127.0.0.1:19530") from None
            raise RuntimeError(f"milvus_uri: cannot reach Milvus at {self.config.uri} "
                               f"({exc.message})") from None

    def _ensure_collection(self) -> None:
        name = self.config.collection
        if self._client.has_collection(name):
            found = self._client.describe_collection(name).get("properties", {})
            if found.get(IDENTITY) != self.identity:
                raise RuntimeError(
                    f"milvus_collection: {name!r} at {self.config.uri} holds vectors of "
                    f"another embedder ({found.get(IDENTITY)!r}, this is {self.identity!r}); "
                    "choose another milvus_collection or drop it")
        else:
            self._client.create_collection(name, schema=self._schema(),
                                           consistency_level=CONSISTENCY,
                                           properties={IDENTITY: self.identity})
            # Not sync: an empty collection's index is built at once, and waiting for it
            # asks for a timestamp milvus-lite does not give.
            self._client.create_index(name, self._index_params(), sync=False)
        self._client.load_collection(name)

    def _schema(self) -> Any:
        data_type = _import_pymilvus().DataType
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field(PRIMARY, data_type.VARCHAR, is_primary=True, max_length=MAX_ID_CHARS)
        schema.add_field("doc_id", data_type.VARCHAR, max_length=MAX_ID_CHARS)
        schema.add_field("collection", data_type.VARCHAR, max_length=MAX_TEXT_CHARS)
        for name in ("company", "ticker", "form"):
            schema.add_field(name, data_type.VARCHAR, max_length=MAX_TEXT_CHARS, nullable=True)
        schema.add_field("fiscal_year", data_type.INT64, nullable=True)
        schema.add_field(VECTOR, data_type.FLOAT_VECTOR, dim=self.dim)
        return schema

    def _index_params(self) -> Any:
        params = self._client.prepare_index_params()
        kind = self.config.index_type
        extra = {"nlist": self.config.nlist} if "IVF" in kind.value else {}
        params.add_index(field_name=VECTOR, index_type=kind.value, metric_type=METRIC,
                         params=extra)
        return params

    def _search_params(self) -> dict[str, Any]:
        ivf = "IVF" in self.config.index_type.value
        return {"metric_type": METRIC, "params": {"nprobe": self.config.nprobe} if ivf else {}}

    # -- the VectorStore protocol --------------------------------------------------------
    def __len__(self) -> int:
        return self._next_row

    def publish(self, vectors: np.ndarray, first_row: int, part: DocumentStore) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(part), self.dim):
            raise ValueError(f"vectors must have shape ({len(part)}, {self.dim}), "
                             f"got {vectors.shape}")
        if first_row != self._next_row:
            raise ValueError(f"rows must follow on: {self._next_row} published, got {first_row}")
        too_long = next((c.chunk_id for c in part.chunks if len(c.chunk_id) > MAX_ID_CHARS), None)
        if too_long is not None:
            raise ValueError(f"chunk id over {MAX_ID_CHARS} characters: {too_long[:80]}...")
        entities = [{PRIMARY: c.chunk_id, **entity_fields(c.doc_id, part.info.get(c.doc_id)),
                     VECTOR: vectors[i].tolist()} for i, c in enumerate(part.chunks)]
        for start in range(0, len(entities), UPSERT_BATCH):
            self._client.upsert(self.config.collection, entities[start:start + UPSERT_BATCH])
        if self._flush:
            self._client.flush(self.config.collection)
        for row, chunk in enumerate(part.chunks, first_row):
            self._rows[chunk.chunk_id] = row
            self._doc_chunks.setdefault(chunk.doc_id, []).append(chunk.chunk_id)
        self._next_row += len(part)

    def forget(self, doc_id: str) -> None:
        # Deleting what another replica already deleted is a no-op: every replica may.
        self._client.delete(self.config.collection, filter=_in("doc_id", [doc_id]))
        for chunk_id in self._doc_chunks.pop(doc_id, []):
            self._rows.pop(chunk_id, None)

    def search_rows(self, queries: np.ndarray, k: int, subset: np.ndarray | None,
                    filt: MetadataFilter | None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows per query; the filter runs in Milvus (`subset` is not needed: deleted
        documents are gone there, and hits outside this store are dropped)."""
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        rows = np.full((len(queries), k), -1, dtype=np.int64)
        if k <= 0 or not self._rows:
            return scores, rows
        hits = self._client.search(
            self.config.collection, data=queries.tolist(), anns_field=VECTOR,
            limit=min(MAX_LIMIT, k * OVERFETCH), filter=filter_expression(filt),
            output_fields=[PRIMARY], search_params=self._search_params(),
            consistency_level=CONSISTENCY)
        for q, found in enumerate(hits):
            local = self._local(found)[:k]
            for j, (row, score) in enumerate(local):
                rows[q, j], scores[q, j] = row, score
        return scores, rows

    def _local(self, found: Sequence[dict[str, Any]]) -> list[tuple[int, float]]:
        """(row, score) of the hits this process's store holds, best first."""
        out = []
        for hit in found:
            row = self._rows.get(hit.get(PRIMARY, hit.get("id")))
            if row is not None:
                out.append((row, float(hit["distance"])))
        return out

    def close(self) -> None:
        self._client.close()
