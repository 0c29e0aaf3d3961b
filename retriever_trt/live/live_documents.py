"""Live documents: uploads indexed in the background into a running retriever, durable in a
folder that every replica of a machine shares.

    documents/catalog.json          which documents exist, and their state (catalog.py)
    documents/files/<id>/<name>     each upload's bytes, kept until it is deleted
    documents/segments/<id>/        each indexed document: chunks, facts, vectors (segments.py)

An upload is stored, recorded `indexing`, then read, chunked and encoded by a worker
thread (the same `read_document` a folder index uses) and saved as a segment; only then is
it recorded `ready` and published to the retriever, whole, between two searches. Every
process polls the catalog and brings its retriever to it: documents another replica made
ready are loaded from their segments (never re-encoded), deleted ones removed. A document
left `indexing` by a process that died is taken up by whichever process gets its job lock
(an `flock`, which the kernel releases when its holder dies: job_lock.py).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from retriever_trt.documents import SUFFIXES, DocumentError
from retriever_trt.documents.limits import DEFAULT_LIMITS, DocumentLimits
from retriever_trt.indexing.parallel_encoder import Busy, EncodeThreads, ParallelEncoder, all_cores
from retriever_trt.live.catalog import Catalog, DocumentRecord, DocumentStatus
from retriever_trt.live.incoming import INCOMING, Incoming, UploadError, receive, remove_leftovers, safe_name
from retriever_trt.live.job_lock import claim, release, remove_unclaimed
from retriever_trt.live.read_job import JobCancelled, ReadRequest, read_in_child
from retriever_trt.live.segments import read_segment, write_segment
from retriever_trt.search.retriever import Retriever
from retriever_trt.store.document_store import DocumentStore
from retriever_trt.store.storage import IndexFileError

logger = logging.getLogger("finrag")

FILES, SEGMENTS = "files", "segments"
# Uploads are encoded in small batches: a question that arrives waits for at most the
# batches already running before the upload gives up cores to it (parallel_encoder.py).
# One-thread CPU sessions take smaller ones still (ParallelEncoder.preferred_batch).
ENCODE_BATCH = 16
__all__ = ["LiveConfig", "LiveDocuments", "UploadError"]


@dataclass(frozen=True)
class LiveConfig:
    chunk_tokens: int
    overlap: int
    workers: int = 1
    max_pending: int = 16
    max_bytes: int = 100 << 20
    poll_interval: float = 1.0
    limits: DocumentLimits = field(default=DEFAULT_LIMITS)
    # Cores the uploads' encoding takes, idle and while questions are answered
    # (parallel_encoder.py).
    encode_threads: EncodeThreads = field(default_factory=lambda: EncodeThreads(all_cores()))

    def __post_init__(self) -> None:
        if self.workers < 1 or self.max_pending < 1 or self.max_bytes < 1:
            raise ValueError("workers, max_pending and max_bytes must be at least 1")
        if self.poll_interval <= 0:
            raise ValueError(f"poll_interval must be positive, got {self.poll_interval}")


def document_id(collection: str, sha256: str) -> str:
    """Stable: the same bytes uploaded to the same collection are the same document."""
    return "doc-" + hashlib.sha256(f"{collection}\0{sha256}".encode()).hexdigest()[:24]


def visible(record: DocumentRecord, collections: frozenset[str] | None) -> bool:
    return collections is None or record.collection in collections


class LiveDocuments:
    def __init__(self, retriever: Retriever, embedder: Any, folder: str | Path,
                 config: LiveConfig, busy: Busy | None = None) -> None:
        """`busy()`: whether the process answers questions now (its uploads then encode on
        `config.encode_threads.busy` cores)."""
        self.retriever, self.embedder, self.config = retriever, embedder, config
        self.encoder = ParallelEncoder(embedder, config.encode_threads, busy)
        self.folder = Path(folder)
        self.files, self.segments = self.folder / FILES, self.folder / SEGMENTS
        self.files.mkdir(parents=True, exist_ok=True)
        self.segments.mkdir(parents=True, exist_ok=True)
        self.catalog = Catalog(self.folder)
        tokenizer = getattr(embedder, "tokenizer", None)
        # Sent to each reading process, which counts chunk tokens as the embedder does.
        self._tokenizer = tokenizer.to_str() if hasattr(tokenizer, "encode_batch") else None
        self._pool = ThreadPoolExecutor(config.workers, thread_name_prefix="finrag-ingest")
        self._lock = threading.Lock()      # catalog change + its in-memory effect, together
        self._admit = threading.Lock()     # uploads' room check + their enqueueing, together
        self._jobs: dict[str, int] = {}    # documents this process indexes -> job lock fd
        self._cancel: dict[str, threading.Event] = {}  # set when the document is deleted
        self._loaded: set[str] = set()     # documents published to the retriever
        self._progress: dict[str, float] = {}
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    # -- life cycle --------------------------------------------------------------------
    def start(self) -> None:
        """Remove what killed processes left, load the ready documents, take up the ones
        left indexing, then keep polling for other processes' changes."""
        self.load()
        self.sync()
        self._poller = threading.Thread(target=self._poll, name="finrag-documents",
                                        daemon=True)
        self._poller.start()

    def load(self) -> None:
        """What a restart finds: garbage removed, the ready documents in the retriever."""
        self._collect_garbage()
        self._reconcile()

    def stop(self) -> None:
        self._stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.encoder.close()

    def _poll(self) -> None:
        while not self._stop.wait(self.config.poll_interval):
            try:
                self.sync()
            except Exception:  # noqa: BLE001 - logged; the next poll tries again
                logger.exception("finrag: documents: sync with the catalog failed")

    # -- the API -----------------------------------------------------------------------
    def add(self, name: str, data: BinaryIO, collection: str) -> tuple[DocumentRecord, bool]:
        """Store one upload and queue it (see `add_all`)."""
        return self.add_all([(name, data)], collection)[0]

    def add_all(self, files: list[tuple[str, BinaryIO]],
                collection: str) -> list[tuple[DocumentRecord, bool]]:
        """Store a request's uploads and queue them, all or none: each file's (record,
        False) when its bytes are already a document of the collection, else (its new
        record, True). UploadError (and nothing stored) when one is refused, or when the
        new ones do not all fit under max_pending (429)."""
        names = [safe_name(name) for name, _ in files]
        for name in names:
            if not name.lower().endswith(SUFFIXES):
                raise UploadError(415, f"{name}: unsupported file type; upload one of "
                                       f"{', '.join(SUFFIXES)}")
        if self.room() <= 0:  # early, before the bytes are copied (checked again below)
            raise self._full(len(files))
        received: list[Incoming] = []
        try:
            for _, data in files:
                received.append(receive(data, self.files, self.config.max_bytes))
            with self._admit:  # the room counted and taken together
                return self._admit_all(names, received, collection)
        finally:
            for incoming in received:
                incoming.close()

    def _full(self, wanted: int) -> UploadError:
        return UploadError(429, f"{wanted} file(s) sent but room for {max(self.room(), 0)} "
                                f"while {len(self._jobs)} documents are indexed "
                                "(max_pending_documents); retry when one is ready")

    def _admit_all(self, names: list[str], received: list[Incoming],
                   collection: str) -> list[tuple[DocumentRecord, bool]]:
        known = self.catalog.records()
        new: dict[str, tuple[DocumentRecord, Incoming]] = {}
        for name, incoming in zip(names, received, strict=True):
            doc_id = document_id(collection, incoming.sha256)
            if doc_id not in known and doc_id not in new:
                new[doc_id] = (DocumentRecord(doc_id, name, collection, incoming.sha256,
                                              incoming.size), incoming)
        if len(new) > self.room():
            raise self._full(len(new))

        def record_new(records: dict[str, DocumentRecord]) -> set[str]:
            return {i for i, (r, _) in new.items() if records.setdefault(i, r) is r}

        locks: dict[str, int] = {}
        try:
            for doc_id, (record, incoming) in new.items():
                (self.files / doc_id).mkdir(exist_ok=True)
                lock = claim(self.files / doc_id)  # before the file lands: a starting
                if lock is None:  # process's clean-up leaves a claimed folder alone
                    raise UploadError(409, f"{record.name}: the same file is being uploaded "
                                           f"to {collection!r} right now; retry in a moment")
                locks[doc_id] = lock
                os.replace(incoming.path, self.files / doc_id / record.name)
            added = self.catalog.update(record_new)
        except BaseException:
            for doc_id, lock in locks.items():
                shutil.rmtree(self.files / doc_id, ignore_errors=True)
                release(lock)
            raise
        for doc_id, lock in locks.items():
            if doc_id in added:
                self._submit(new[doc_id][0], lock)
            else:  # another replica recorded the same bytes meanwhile
                release(lock)
        records = self.catalog.records()
        ids = [document_id(collection, incoming.sha256) for incoming in received]
        return [(records.get(i) or known.get(i) or new[i][0], i in added) for i in ids]

    def room(self) -> int:
        """How many more uploads this process takes before answering 429."""
        return self.config.max_pending - len(self._jobs)

    def get(self, doc_id: str, collections: frozenset[str] | None) -> DocumentRecord | None:
        record = self.catalog.records().get(doc_id)
        return record if record is not None and visible(record, collections) else None

    def list(self, collections: frozenset[str] | None,
             collection: str | None = None) -> list[DocumentRecord]:
        return sorted((r for r in self.catalog.records().values()
                       if visible(r, collections) and collection in (None, r.collection)),
                      key=lambda r: r.created)

    def progress(self, doc_id: str) -> float | None:
        """How far this process's indexing of the document is (0..1); None elsewhere."""
        return self._progress.get(doc_id)

    def delete(self, doc_id: str, collections: frozenset[str] | None) -> DocumentRecord | None:
        """Forget the document everywhere; None when the caller sees no such document."""
        def change(records: dict[str, DocumentRecord]) -> DocumentRecord | None:
            record = records.get(doc_id)
            if record is None or not visible(record, collections):
                return None
            return records.pop(doc_id)

        with self._lock:
            record = self.catalog.update(change)
            if record is not None and doc_id in self._loaded:
                self.retriever.remove(doc_id)
                self._loaded.discard(doc_id)
        if record is not None:
            self._stop_job(doc_id)
            shutil.rmtree(self.segments / doc_id, ignore_errors=True)
            shutil.rmtree(self.files / doc_id, ignore_errors=True)
        return record

    # -- catalog -> memory -------------------------------------------------------------
    def sync(self) -> None:
        """Bring the retriever to the catalog, and take up documents left indexing by a
        process that died."""
        records = self._reconcile()
        for doc_id in set(self._cancel) - set(records):
            self._stop_job(doc_id)  # deleted by another replica while we index it
        for doc_id, record in records.items():
            if record.status is DocumentStatus.INDEXING and doc_id not in self._jobs:
                lock = claim(self.files / doc_id)
                if lock is not None:
                    self._submit(record, lock)

    def _reconcile(self) -> dict[str, DocumentRecord]:
        """Load documents the catalog says are ready, drop the ones it no longer holds."""
        with self._lock:
            records = self.catalog.records()
            ready = {i for i, r in records.items() if r.status is DocumentStatus.READY}
            for gone in self._loaded - ready:
                self.retriever.remove(gone)
                self._loaded.discard(gone)
            self._load(sorted(ready - self._loaded))
        return records

    def _load(self, doc_ids: list[str]) -> None:
        """Publish ready documents from their segments, all in one add."""
        parts, vectors = [], []
        for doc_id in doc_ids:
            try:
                part, vecs = read_segment(self.segments / doc_id, self.embedder)
            except (IndexFileError, OSError, ValueError) as exc:
                logger.error("finrag: document %s: its segment does not load (%s)", doc_id, exc)
                self._mark(doc_id, DocumentStatus.FAILED, error=f"its index files are "
                           f"damaged ({exc}); delete it and upload it again")
                continue
            parts.append(part)
            vectors.append(vecs)
        if parts:
            merged = DocumentStore([c for p in parts for c in p.chunks],
                                   documents=[i for p in parts for i in p.info.values()])
            self.retriever.add(merged, np.concatenate(vectors))
            self._loaded.update(i for p in parts for i in p.info)

    # -- indexing ----------------------------------------------------------------------
    def _submit(self, record: DocumentRecord, lock: int) -> None:
        self._cancel[record.id] = threading.Event()
        self._jobs[record.id] = lock
        self._progress[record.id] = 0.0
        self._pool.submit(self._index, record)

    def _stop_job(self, doc_id: str) -> None:
        """Stop the document's job, queued or running: its reading process is killed, its
        encoding stops at the next batch."""
        cancel = self._cancel.get(doc_id)
        if cancel is not None:
            cancel.set()

    def _index(self, record: DocumentRecord) -> None:
        try:
            current = self.catalog.records().get(record.id)
            if current is None or current.status is not DocumentStatus.INDEXING:
                return  # deleted, or finished by another process before we took it up
            self._index_file(record, self._cancel[record.id])
        except JobCancelled:
            logger.info("finrag: indexing %s (%s) stopped: deleted", record.id, record.name)
        except DocumentError as exc:
            self._mark(record.id, DocumentStatus.FAILED, error=f"{record.name}: {exc.problem}")
        except Exception as exc:  # noqa: BLE001 - the document fails, the server goes on
            logger.exception("finrag: indexing %s (%s) failed", record.id, record.name)
            self._mark(record.id, DocumentStatus.FAILED, error=f"indexing failed: {exc}")
        finally:
            self._cancel.pop(record.id, None)
            self._progress.pop(record.id, None)
            release(self._jobs.pop(record.id, None))  # last: frees its room

    def _index_file(self, record: DocumentRecord, cancelled: threading.Event) -> None:
        """Read (in a child process), encode and save; stopped by `cancelled` (a delete)
        or past the limits' max_seconds, reading and encoding together."""
        path = self.files / record.id / record.name
        if not path.is_file():
            raise DocumentError(path, "the stored upload is missing; upload it again")
        limits = self.config.limits
        deadline = time.monotonic() + limits.max_seconds
        request = ReadRequest(path, record.id, self.config.chunk_tokens, self.config.overlap,
                              record.collection, limits, self._tokenizer)
        started = time.monotonic()
        chunks, info, pages = read_in_child(request, deadline, cancelled)
        read_s = time.monotonic() - started
        part = DocumentStore(chunks, documents=[info])
        texts = [part.index_text(i) for i in range(len(part))]
        self._progress[record.id] = 0.1

        def encoded(done: int) -> None:  # reading 10%, encoding 10-95%, saving the rest
            if cancelled.is_set():
                raise JobCancelled(record.id)
            if time.monotonic() > deadline:
                raise DocumentError(path, f"indexing it took over {limits.max_seconds:g} s, "
                                          "the limit of one document (document_max_seconds)")
            self._progress[record.id] = 0.1 + 0.85 * done / max(len(texts), 1)

        vectors = self.encoder.encode(texts, self.encoder.preferred_batch(ENCODE_BATCH),
                                       encoded)
        encode_s = time.monotonic() - started - read_s
        write_segment(self.segments / record.id, part, vectors, self.embedder)
        logger.info("finrag: indexed %s (%s): %d chunks, read in %.1f s, encoded in %.1f s "
                    "(%.0f chunks/s)", record.id, record.name, len(texts), read_s, encode_s,
                    len(texts) / max(encode_s, 1e-9))
        metadata = {**info.metadata.to_dict(), "pages": pages}
        with self._lock:
            # Searchable here before the catalog says ready, so a client that sees `ready`
            # finds it at once (other replicas load it at their next poll).
            self.retriever.add(part, vectors)
            if self._mark(record.id, DocumentStatus.READY, title=info.title,
                          chunks=len(part), metadata=metadata):
                self._loaded.add(record.id)
            else:  # deleted while it was indexed
                self.retriever.remove(record.id)
                shutil.rmtree(self.segments / record.id, ignore_errors=True)

    def _mark(self, doc_id: str, status: DocumentStatus, **values: Any) -> bool:
        """Set a document's state; False when it no longer exists."""
        def change(records: dict[str, DocumentRecord]) -> bool:
            record = records.get(doc_id)
            if record is None:
                return False
            record.status = status
            for key, value in values.items():
                setattr(record, key, value)
            return True

        return self.catalog.update(change)

    def _collect_garbage(self) -> None:
        """Files and segments of documents the catalog does not hold (a kill between a
        delete's catalog change and its file removal), and partial uploads of killed
        processes."""
        remove_leftovers(self.files)
        known = set(self.catalog.records())
        for folder in (self.files, self.segments):
            for entry in folder.iterdir():
                if entry.name.startswith(INCOMING):
                    continue  # remove_leftovers's
                if entry.is_dir() and not entry.name.startswith(".") and entry.name not in known:
                    if folder is self.files:
                        remove_unclaimed(entry)
                    else:
                        shutil.rmtree(entry, ignore_errors=True)

