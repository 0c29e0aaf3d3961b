"""Where the chunk vectors live: the `vector_store` setting chooses one backend at start.

- `faiss` (default): `VectorIndex`, in the process's memory; each replica holds its own copy
  and follows the shared catalog (docs/documents_api.md).
- `milvus`: a Milvus collection (`milvus_store.MilvusVectorStore`), one for every replica
  and machine; metadata filters are pushed down as Milvus filter expressions.

Both answer the `VectorStore` protocol the `Retriever` uses. Rows are the local store's
rows: row i is chunk i of the process's `DocumentStore`, so BM25 and the vector ranking
speak of the same chunks whatever holds the vectors.

This module imports neither FAISS nor pymilvus: the settings read it to validate.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from retriever_trt.search.filters import MetadataFilter
    from retriever_trt.store.document_store import DocumentStore

MILVUS_INSTALL = "pip install pymilvus milvus-lite"
# milvus-lite's file: a `milvus_uri` ending so is opened in-process (pymilvus's own rule).
LITE_SUFFIX = ".db"
DEFAULT_MILVUS_FILE = "milvus.db"
DEFAULT_MILVUS_COLLECTION = "finrag_chunks"
# Milvus's own rule for collection names.
MILVUS_COLLECTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")


class VectorStoreKind(str, Enum):
    FAISS = "faiss"
    MILVUS = "milvus"


class MilvusIndexType(str, Enum):
    """Milvus index types finrag builds. FLAT is exact (FAISS Flat's ranking); AUTOINDEX
    lets Milvus choose; the GPU ones need a Milvus server built with GPU support."""

    FLAT = "FLAT"
    IVF_FLAT = "IVF_FLAT"
    AUTOINDEX = "AUTOINDEX"
    GPU_CAGRA = "GPU_CAGRA"
    GPU_IVF_FLAT = "GPU_IVF_FLAT"

    @property
    def on_gpu(self) -> bool:
        return self.value.startswith("GPU_")


def is_lite_uri(uri: str) -> bool:
    """A milvus-lite file (embedded, one process only) rather than a server's address."""
    return uri.endswith(LITE_SUFFIX) and "://" not in uri


@dataclass(frozen=True)
class MilvusConfig:
    uri: str
    collection: str = DEFAULT_MILVUS_COLLECTION
    index_type: MilvusIndexType = MilvusIndexType.FLAT
    # IVF lists (IVF_FLAT, GPU_IVF_FLAT): clusters built, and searched per query.
    nlist: int = 128
    nprobe: int = 16

    def __post_init__(self) -> None:
        problem = milvus_problem(self.uri, self.collection, self.index_type)
        if problem:
            raise ValueError(problem)


def milvus_problem(uri: str, collection: str, index_type: MilvusIndexType,
                   replicas: int = 1) -> str | None:
    """What is wrong with these Milvus settings (one line naming the setting), or None."""
    lite = is_lite_uri(uri)
    needed = ("pymilvus", "milvus_lite") if lite else ("pymilvus",)
    absent = [m for m in needed if importlib.util.find_spec(m) is None]
    if absent:
        return (f"vector_store: milvus needs the Python module {absent[0]}; install it with: "
                f"{MILVUS_INSTALL}")
    if not MILVUS_COLLECTION_NAME.fullmatch(collection):
        return (f"milvus_collection: {collection!r} is not a Milvus collection name (a letter "
                "or '_', then letters, digits or '_', at most 255)")
    if lite and index_type.on_gpu:
        return (f"milvus_index_type: {index_type.value} runs on a Milvus server with GPUs; "
                f"milvus-lite ({uri}) has FLAT, IVF_FLAT and AUTOINDEX")
    if lite and replicas > 1:
        # milvus-lite locks its folder: a second process cannot open it.
        return (f"milvus_uri: {uri} is a milvus-lite file, which one process only may open; "
                f"with {replicas} replicas run `milvus-lite server --data-dir {uri} --port "
                "19530` and set milvus_uri to http://127.0.0.1:19530 (or a Milvus server)")
    return None


def default_milvus_uri(index_dir: Path) -> str:
    return str(index_dir / DEFAULT_MILVUS_FILE)


class VectorStore(Protocol):
    """What the `Retriever` asks of a vector backend."""

    def __len__(self) -> int:
        """Rows published so far (removed ones included: rows are never renumbered)."""

    def publish(self, vectors: np.ndarray, first_row: int, part: DocumentStore) -> None:
        """Add `part`'s chunk vectors as rows first_row, first_row + 1, ..."""

    def forget(self, doc_id: str) -> None:
        """Take a document's vectors out (the store drops its rows at the same time)."""

    def search_rows(self, queries: np.ndarray, k: int, subset: np.ndarray | None,
                    filt: MetadataFilter | None) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows), each (n, k), best first, -1 past the hits. `subset`: the live rows
        `filt` passes, as the local store computed them; a backend may use either."""
