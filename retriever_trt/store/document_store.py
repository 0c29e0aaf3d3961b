"""The document store: the chunks an index points into, with their BM25 index.

Row i of the vector index and of BM25 is chunk i of the store; the corpus hash (over
every chunk's id and text) ties a saved index to the store it was built from.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from retriever_trt.documents.model import DocumentMetadata, Fact
from retriever_trt.search.bm25 import BM25, DEFAULT_B, DEFAULT_K1
from retriever_trt.search.filters import DEFAULT_COLLECTION, MetadataFilter
from retriever_trt.store.storage import (
    IndexFileError,
    atomic_directory,
    read_manifest,
    rebuild_hint,
    resolve_dir,
    write_manifest,
)

CHUNKS_FILE = "chunks.jsonl"
DOCUMENTS_FILE = "documents.jsonl"
FACTS_FILE = "facts.jsonl"
KIND = "document-store"


@dataclass(frozen=True)
class Chunk:
    """A passage of a source document.

    `sources` names where it came from, e.g. {"context": ..., "table_uid": ...} for a
    TAT-QA table or {"file": "notes/q3.md"} for a file, so answers can cite it. `table`
    holds the whole table (header rows included) on each chunk cut from one, so a retrieved
    piece of a table can be computed on and cited by (row, column) of the table it is from.
    """

    chunk_id: str
    doc_id: str
    title: str
    text: str
    sources: dict[str, str] = field(default_factory=dict)
    table: list[list[str]] | None = None


@dataclass
class DocumentInfo:
    """What the store keeps of a document besides its chunks: its human title, metadata, and
    its tagged facts with the table cell each is shown in (chunk id, row, column), and the
    collection it belongs to (what an API key may read)."""

    doc_id: str
    title: str
    metadata: DocumentMetadata = field(default_factory=DocumentMetadata)
    facts: list[Fact] = field(default_factory=list)
    fact_cells: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    collection: str = DEFAULT_COLLECTION
    # Statements read off a PDF's tables that failed their self-checks, each statement's
    # name ("balance sheet") -> where and why ("page 62: total assets 1 ≠ ..."); their
    # figures are not among `facts` (pipeline/rag/answers/filings/printed/statement_checks.py).
    unread: dict[str, str] = field(default_factory=dict)

    def header(self) -> dict[str, Any]:
        """The document as /ask's `filing` and the documents API show it."""
        return {"doc_id": self.doc_id, "title": self.title, "collection": self.collection,
                **self.metadata.to_dict()}


def index_text(chunk: Chunk, with_title: bool) -> str:
    """What the encoder and BM25 see of `chunk` (`DocumentStore.index_text`)."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title and with_title else chunk.text


def _fact_record(doc_id: str, f: Fact, cell: tuple[str, int, int] | None) -> dict[str, Any]:
    return {"doc": doc_id, "id": f.fact_id, "concept": f.concept, "value": str(f.value),
            "unit": f.unit, "end": f.end.isoformat(),
            "start": f.start.isoformat() if f.start else None,
            "dims": [list(d) for d in f.dimensions], "decimals": f.decimals, "scale": f.scale,
            "shown": f.shown, "cell": list(cell) if cell else None}


def write_facts(path: Path, documents: Iterable[DocumentInfo]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for d in documents:
            for f in d.facts:
                fh.write(json.dumps(_fact_record(d.doc_id, f, d.fact_cells.get(f.fact_id)),
                                    ensure_ascii=False) + "\n")


def read_documents(folder: Path, hint: str) -> list[DocumentInfo]:
    """The documents and their facts; a store saved before documents were kept has none."""
    docs: dict[str, DocumentInfo] = {}
    path = folder / DOCUMENTS_FILE
    if not path.is_file():
        return []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                docs[rec["doc_id"]] = DocumentInfo(
                    rec["doc_id"], rec["title"], DocumentMetadata.from_dict(rec["metadata"]),
                    collection=rec.get("collection", DEFAULT_COLLECTION))
        with open(folder / FACTS_FILE, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                info = docs[r["doc"]]
                info.facts.append(Fact(
                    r["id"], r["concept"], Decimal(r["value"]), r["unit"],
                    date.fromisoformat(r["end"]),
                    date.fromisoformat(r["start"]) if r["start"] else None,
                    tuple(tuple(d) for d in r["dims"]), r["decimals"], r["scale"], r["shown"]))
                if r["cell"]:
                    info.fact_cells[r["id"]] = tuple(r["cell"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IndexFileError(f"{folder}: bad document records ({exc}); {hint}") from None
    return list(docs.values())


class DocumentStore:
    def __init__(
        self,
        chunks: Iterable[Chunk],
        corpus: str = "",
        bm25: BM25 | None = None,
        index_titles: bool = True,
        documents: Iterable[DocumentInfo] = (),
    ) -> None:
        self.chunks = list(chunks)
        ids = [c.chunk_id for c in self.chunks]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"duplicate chunk id {dup!r} in corpus {corpus or '(memory)'}")
        self.corpus = corpus
        self.bm25 = bm25
        self.index_titles = index_titles
        self.info: dict[str, DocumentInfo] = {d.doc_id: d for d in documents}
        self._documents: dict[str, list[Chunk]] | None = None
        self._rows: dict[str, list[int]] | None = None
        self._live: np.ndarray | None = None
        # Rows of removed documents (they stay in place until the index is rebuilt or
        # reloaded: row i of the vector index and of BM25 is chunk i).
        self.removed_rows = 0
        # Uploads and deletes change the store while questions read it: every reader of the
        # row maps and every writer holds this lock (the vector index and BM25 too).
        self.lock = threading.RLock()
        # Bumped by every extend/remove, so readers that cache what the store holds (the
        # filing answerer's company names) know to look again.
        self.generation = 0

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i: int) -> Chunk:
        return self.chunks[i]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)

    def document(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document, in corpus order (its table pieces, its paragraphs)."""
        with self.lock:
            if self._documents is None:
                self._documents = {d: [self.chunks[i] for i in rows]
                                   for d, rows in self._row_map().items()}
            return self._documents.get(doc_id, [])

    def _row_map(self) -> dict[str, list[int]]:
        if self._rows is None:
            self._rows = {}
            for i, c in enumerate(self.chunks):
                self._rows.setdefault(c.doc_id, []).append(i)
        return self._rows

    def rows_where(self, filt: MetadataFilter) -> np.ndarray:
        """The rows (chunk indices) of the documents `filt` passes."""
        with self.lock:
            rows = [i for doc_id, ids in self._row_map().items()
                    if filt.matches(doc_id, self.info.get(doc_id)) for i in ids]
        return np.asarray(sorted(rows), dtype=np.int64)

    def live_rows(self) -> np.ndarray | None:
        """Every row of a document still held; None while nothing was removed (no filter
        is needed then)."""
        with self.lock:
            if not self.removed_rows:
                return None
            if self._live is None:  # every unfiltered question asks: built once a change
                self._live = np.asarray(sorted(i for ids in self._row_map().values()
                                               for i in ids), dtype=np.int64)
            return self._live

    def extend(self, chunks: list[Chunk], documents: Iterable[DocumentInfo]) -> None:
        """Append the chunks of new documents (rows after the last)."""
        with self.lock:
            known = self._row_map()
            clash = next((c.chunk_id for c in chunks if c.doc_id in known), None)
            if clash is not None:
                raise ValueError(f"chunk {clash!r}: its document is already in the store")
            first = len(self.chunks)
            self.chunks.extend(chunks)
            for i, c in enumerate(chunks, first):
                known.setdefault(c.doc_id, []).append(i)
            self.info.update((d.doc_id, d) for d in documents)
            self._documents = self._live = None
            self.generation += 1

    def remove(self, doc_id: str) -> np.ndarray:
        """Forget a document (its chunks, metadata and facts); its rows, which the caller
        takes out of the vector index and BM25, are returned."""
        with self.lock:
            rows = np.asarray(self._row_map().pop(doc_id, []), dtype=np.int64)
            self.info.pop(doc_id, None)
            self.removed_rows += len(rows)
            self._documents = self._live = None
            self.generation += 1
        return rows

    @property
    def corpus_hash(self) -> str:
        digest = hashlib.sha256()
        for c in self.chunks:
            digest.update(c.chunk_id.encode() + b"\0" + c.text.encode() + b"\0")
        return digest.hexdigest()[:16]

    def index_text(self, i: int) -> str:
        """What the encoder and BM25 see: a title gives a paragraph its document's name.

        Titles that are only ids (TAT-QA's context uids) are left out: they cost the
        encoder 20 tokens of noise (dense recall@5 0.665 with them, 0.680 without)."""
        return index_text(self.chunks[i], self.index_titles)

    def build_bm25(self, k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> BM25:
        self.bm25 = BM25(k1, b).fit(self.index_text(i) for i in range(len(self)))
        return self.bm25

    def write(self, folder: Path) -> None:
        if self.removed_rows:
            raise ValueError("a store with removed documents keeps their rows in place; "
                             "rebuild it from its documents to save it")
        with open(folder / CHUNKS_FILE, "w", encoding="utf-8") as fh:
            for c in self.chunks:
                fh.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")
        with open(folder / DOCUMENTS_FILE, "w", encoding="utf-8") as fh:
            for d in self.info.values():
                fh.write(json.dumps({"doc_id": d.doc_id, "title": d.title,
                                     "collection": d.collection,
                                     "metadata": d.metadata.to_dict()}, ensure_ascii=False) + "\n")
        write_facts(folder / FACTS_FILE, self.info.values())
        if self.bm25 is not None:
            self.bm25.write(folder)
        write_manifest(folder, KIND, self.manifest_fields())

    def manifest_fields(self) -> dict[str, Any]:
        return {
            "count": len(self),
            "corpus": self.corpus,
            "corpus_hash": self.corpus_hash,
            "index_titles": self.index_titles,
            "bm25": None if self.bm25 is None else {"k1": self.bm25.k1, "b": self.bm25.b},
        }

    def save(self, directory: str | Path) -> None:
        with atomic_directory(directory) as tmp:
            self.write(tmp)

    @classmethod
    def load(cls, directory: str | Path) -> DocumentStore:
        folder = resolve_dir(directory)
        manifest = read_manifest(folder, KIND)
        hint = rebuild_hint(folder, manifest.get("corpus"))
        path = folder / CHUNKS_FILE
        chunks = []
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                try:
                    chunks.append(Chunk(**json.loads(line)))
                except (json.JSONDecodeError, TypeError) as exc:
                    raise IndexFileError(f"{path}:{lineno}: bad chunk ({exc}); {hint}") from None
        bm25 = BM25.read(folder) if manifest.get("bm25") else None
        documents = read_documents(folder, hint)
        store = cls(chunks, manifest.get("corpus", ""), bm25, manifest["index_titles"], documents)
        if store.corpus_hash != manifest["corpus_hash"] or (bm25 and len(bm25) != len(store)):
            raise IndexFileError(f"{folder}: chunks disagree with the manifest; {hint}")
        return store
