"""Corpus ingestion: a folder of documents (SEC inline-XBRL HTML, PDF, .xlsx, .csv, .docx,
.txt, .md: `retriever_trt.documents` reads each), TAT-QA JSON, or JSONL `{id, title, text}`,
cut into chunks (`chunking.py`) into a `DocumentStore` with each document's metadata and
tagged facts.

A file that cannot be read is reported in one line naming it and skipped; the others are
indexed, and the `IngestReport` counts what failed so `finrag index` can exit non-zero.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from retriever_trt.documents import SUFFIXES, DocumentError, load_document
from retriever_trt.documents.limits import DEFAULT_LIMITS, DocumentLimits
from retriever_trt.indexing.chunking import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_OVERLAP,
    TokenCounter,
    approx_token_counts,
    chunk_document,
    document_title,
    pack_table,
    render_table,
    split_words,
    table_piece_tokens,
)
from retriever_trt.search.filters import DEFAULT_COLLECTION
from retriever_trt.store.document_store import Chunk, DocumentInfo, DocumentStore, index_text

# Hears each document's chunks as they are read (a `StreamingEncoder` encodes them while
# the next documents are read).
ChunkSink = Callable[[list[Chunk]], None]


class CorpusError(ValueError):
    """A corpus that cannot be read; the message names the file and the problem."""


@dataclass
class IngestReport:
    """What one ingestion read: counts for the summary line, and each failed file."""

    files: int = 0
    pages: int = 0
    chunks: int = 0
    seconds: float = 0.0
    failed: list[str] = field(default_factory=list)   # one line each: "path: problem"
    encoded: int = 0   # distinct chunk texts encoded (a repeated text is encoded once)

    def summary(self) -> str:
        rate = self.pages / self.seconds if self.seconds else 0.0
        return (f"read {self.files} files ({self.pages} pages, {self.chunks} chunks) in "
                f"{self.seconds:.1f} s, {rate:.1f} pages/s; {len(self.failed)} failed")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: not valid JSON ({exc})") from None


def iter_tatqa(path: Path, max_tokens: int, overlap: int, count: TokenCounter) -> Iterator[Chunk]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise CorpusError(f"{path}: a TAT-QA file is a JSON list of contexts")
    for n, ctx in enumerate(data):
        try:
            table_uid = ctx["table"]["uid"]
            rows, paragraphs = ctx["table"]["table"], ctx["paragraphs"]
        except (KeyError, TypeError) as exc:
            raise CorpusError(f"{path}: context {n} lacks {exc} (need table.uid, "
                              "table.table, paragraphs)") from None
        title = f"TAT-QA {table_uid}"
        base = {"context": table_uid, "table_uid": table_uid}
        table = [[str(cell) for cell in row] for row in rows]
        for i, text in enumerate(pack_table(*render_table(rows), table_piece_tokens(max_tokens),
                                            count)):
            yield Chunk(f"{table_uid}/table/{i}", table_uid, title, text, dict(base), table)
        for p in paragraphs:
            if not isinstance(p, dict) or "uid" not in p or "text" not in p:
                raise CorpusError(f"{path}: context {n} has a paragraph without uid/text")
            src = {**base, "paragraph_uid": p["uid"], "order": str(p.get("order", ""))}
            for i, text in enumerate(split_words(p["text"], max_tokens, overlap, count)):
                yield Chunk(f"{p['uid']}/{i}", table_uid, title, text, dict(src))


def iter_jsonl(path: Path, max_tokens: int, overlap: int, count: TokenCounter) -> Iterator[Chunk]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{path}:{lineno}: not valid JSON ({exc})") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("text"), str) or "id" not in rec:
                raise CorpusError(f'{path}:{lineno}: need an object {{"id", "title", "text"}}')
            doc_id, title = str(rec["id"]), str(rec.get("title") or "")
            src = {"doc": doc_id, "file": path.name, "line": str(lineno)}
            for i, text in enumerate(split_words(rec["text"], max_tokens, overlap, count)):
                yield Chunk(f"{doc_id}#{i}", doc_id, title, text, dict(src))


def corpus_files(root: Path) -> list[Path]:
    """The files of a folder that a loader reads, in path order; hidden files and folders
    (".git", editors' temporary files) are not documents."""
    return sorted(p for p in root.rglob("*")
                  if p.suffix.lower() in SUFFIXES and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(root).parts))


def read_document(file: Path, doc_id: str, max_tokens: int, overlap: int,
                  count: TokenCounter,
                  collection: str = DEFAULT_COLLECTION, limits: DocumentLimits = DEFAULT_LIMITS,
                  ) -> tuple[list[Chunk], DocumentInfo, int]:
    """One file's chunks, its document record and its page count: the same for a file of a
    folder and an upload. Raises `DocumentError` naming the file, also for one that costs
    more than `limits`."""
    doc = load_document(file, doc_id, limits)
    pieces, cells = chunk_document(doc, max_tokens, overlap, count)
    if len(pieces) > limits.max_chunks:
        raise DocumentError(file, f"{len(pieces):,} chunks, over the limit of "
                                  f"{limits.max_chunks:,} (document_max_chunks)")
    info = DocumentInfo(doc_id, document_title(doc), doc.metadata, doc.facts, cells, collection)
    return pieces, info, doc.metadata.pages or 1


def read_documents(root: Path, files: list[Path], max_tokens: int, overlap: int,
                   count: TokenCounter, report: IngestReport, progress: bool = True,
                   on_chunks: ChunkSink | None = None) -> tuple[list[Chunk], list[DocumentInfo]]:
    """Every readable one of `files` (doc ids relative to `root`); the ones that fail are
    reported and skipped. `on_chunks` hears each readable file's chunks once it is read."""
    chunks: list[Chunk] = []
    infos: list[DocumentInfo] = []
    bar = tqdm(files, desc="reading", unit="file", disable=not progress)
    for file in bar:
        try:
            pieces, info, pages = read_document(file, file.relative_to(root).as_posix(),
                                                max_tokens, overlap, count)
        except DocumentError as exc:
            report.failed.append(str(exc))
            print(f"finrag: skipped {exc}", file=sys.stderr)
            continue
        chunks += pieces
        infos.append(info)
        if on_chunks is not None:
            on_chunks(pieces)
        report.files += 1
        report.pages += pages
        bar.set_postfix(pages=report.pages, chunks=len(chunks), refresh=False)
    return chunks, infos


def detect_format(path: Path) -> str:
    if path.is_dir():
        return "folder"
    if path.suffix == ".jsonl":
        return "jsonl"
    if path.suffix == ".json":
        return "tatqa"
    if path.suffix.lower() in SUFFIXES:
        return "file"
    raise CorpusError(f"{path}: unknown corpus format (use a folder of documents "
                      f"({', '.join(SUFFIXES)}), one such file, a TAT-QA .json, or a .jsonl of "
                      '{"id", "title", "text"})')


def ingest(
    path: str | Path,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
    token_counter: TokenCounter | None = None,
    fmt: str | None = None,
    progress: bool = False,
    on_texts: Callable[[list[str]], None] | None = None,
) -> tuple[DocumentStore, IngestReport]:
    """Read a corpus into a DocumentStore; `fmt` is "folder", "file", "tatqa" or "jsonl".
    `on_texts` hears the texts to encode (`DocumentStore.index_text`) in the store's order,
    a document's at a time as it is read."""
    path = Path(path)
    if not path.exists():
        raise CorpusError(f"{path}: no such file or folder")
    fmt = fmt or detect_format(path)
    count = token_counter or approx_token_counts
    report, infos = IngestReport(), []
    # TAT-QA titles are context ids, kept for citations but not worth indexing.
    with_titles = fmt != "tatqa"

    def sink(pieces: list[Chunk]) -> None:
        if on_texts is not None:
            on_texts([index_text(c, with_titles) for c in pieces])

    t0 = time.perf_counter()
    if fmt in ("folder", "file"):
        root = path if fmt == "folder" else path.parent
        files = corpus_files(path) if fmt == "folder" else [path]
        if not files:
            raise CorpusError(f"{path}: no documents in this folder (looked for "
                              f"{', '.join(SUFFIXES)})")
        chunks, infos = read_documents(root, files, chunk_tokens, overlap, count, report, progress,
                                       sink)
    elif fmt in ("tatqa", "jsonl"):
        reader = iter_tatqa if fmt == "tatqa" else iter_jsonl
        chunks = list(reader(path, chunk_tokens, overlap, count))
        report.files = 1
        sink(chunks)
    else:
        raise CorpusError(f"{path}: unknown format {fmt!r}; choose one of folder, file, tatqa, jsonl")
    report.seconds, report.chunks = time.perf_counter() - t0, len(chunks)
    if not chunks:
        if report.failed:
            raise CorpusError(f"{path}: no document could be read: {'; '.join(report.failed[:3])}")
        raise CorpusError(f"{path}: no text found")
    try:
        store = DocumentStore(chunks, corpus=str(path), index_titles=with_titles,
                              documents=infos)
    except ValueError as exc:  # duplicate ids: the message names the corpus
        raise CorpusError(str(exc)) from None
    return store, report


def load_corpus(path: str | Path, chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                overlap: int = DEFAULT_OVERLAP, token_counter: TokenCounter | None = None,
                fmt: str | None = None) -> DocumentStore:
    """`ingest` without its report."""
    return ingest(path, chunk_tokens, overlap, token_counter, fmt)[0]
