"""Segments: one uploaded document as it is indexed, saved whole in its own folder.

A segment holds what the live index needs to take the document back after a restart
without reading or encoding it again: its chunks, metadata and facts (a `DocumentStore` of
one document) and its chunk vectors. It is written into a temporary folder and renamed
into place (`storage.atomic_directory`), so a segment folder is either complete or absent;
which segments count is the catalog's business (`catalog.py`), not the folder's.

    segment/manifest.json   kind, embedder (model id, precision, dim, file sha256), checksums
    segment/store/          the document's DocumentStore (chunks, documents, facts)
    segment/vectors.npy     float32 (chunks, dim), row i for chunk i
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from retriever_trt.store.document_store import DocumentStore
from retriever_trt.store.faiss_index import check_embedder, embedder_fields
from retriever_trt.store.storage import IndexFileError, atomic_directory, read_manifest, write_manifest

KIND = "segment"
VECTORS_FILE = "vectors.npy"


def write_segment(folder: Path, part: DocumentStore, vectors: np.ndarray, embedder: Any) -> None:
    if len(vectors) != len(part):
        raise ValueError(f"{len(vectors)} vectors for {len(part)} chunks")
    with atomic_directory(folder) as tmp:
        (tmp / "store").mkdir()
        part.write(tmp / "store")
        np.save(tmp / VECTORS_FILE, np.ascontiguousarray(vectors, dtype=np.float32))
        write_manifest(tmp, KIND, {**embedder_fields(embedder), "count": len(part)})


def read_segment(folder: Path, embedder: Any) -> tuple[DocumentStore, np.ndarray]:
    """The document's store and vectors; an `IndexFileError` names a damaged or foreign one."""
    manifest = read_manifest(folder, KIND)
    check_embedder(manifest, embedder, folder)
    part = DocumentStore.load(folder / "store")
    vectors = np.load(folder / VECTORS_FILE)
    if vectors.shape != (len(part), int(manifest["dim"])):
        raise IndexFileError(f"{folder}: {vectors.shape[0]} vectors for {len(part)} chunks")
    return part, vectors
