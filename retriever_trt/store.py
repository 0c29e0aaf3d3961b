"""The document store: the chunks an index points into, with their BM25 index.

Row i of the vector index and of BM25 is chunk i of the store; the corpus hash (over
every chunk's id and text) ties a saved index to the store it was built from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from retriever_trt.bm25 import BM25
from retriever_trt.storage import (
    IndexFileError,
    atomic_directory,
    read_manifest,
    rebuild_hint,
    resolve_dir,
    write_manifest,
)

CHUNKS_FILE = "chunks.jsonl"
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


class DocumentStore:
    def __init__(
        self,
        chunks: Iterable[Chunk],
        corpus: str = "",
        bm25: BM25 | None = None,
        index_titles: bool = True,
    ) -> None:
        self.chunks = list(chunks)
        ids = [c.chunk_id for c in self.chunks]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"duplicate chunk id {dup!r} in corpus {corpus or '(memory)'}")
        self.corpus = corpus
        self.bm25 = bm25
        self.index_titles = index_titles
        self._documents: dict[str, list[Chunk]] | None = None

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i: int) -> Chunk:
        return self.chunks[i]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)

    def document(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document, in corpus order (its table pieces, its paragraphs)."""
        if self._documents is None:
            self._documents = {}
            for c in self.chunks:
                self._documents.setdefault(c.doc_id, []).append(c)
        return self._documents.get(doc_id, [])

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
        c = self.chunks[i]
        return f"{c.title}\n{c.text}" if c.title and self.index_titles else c.text

    def build_bm25(self, k1: float = 1.2, b: float = 0.75) -> BM25:
        self.bm25 = BM25(k1, b).fit(self.index_text(i) for i in range(len(self)))
        return self.bm25

    def write(self, folder: Path) -> None:
        with open(folder / CHUNKS_FILE, "w", encoding="utf-8") as fh:
            for c in self.chunks:
                fh.write(json.dumps(asdict(c), ensure_ascii=False) + "\n")
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
        store = cls(chunks, manifest.get("corpus", ""), bm25, manifest["index_titles"])
        if store.corpus_hash != manifest["corpus_hash"] or (bm25 and len(bm25) != len(store)):
            raise IndexFileError(f"{folder}: chunks disagree with the manifest; {hint}")
        return store
