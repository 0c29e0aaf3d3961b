"""Live documents (retriever_trt/live/live_documents.py): uploads indexed into a running
retriever, deletes, tenants' collections, and what a restart finds, on the real embedder,
FAISS and BM25."""

from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest

from retriever_trt.indexing.ingest import ingest
from retriever_trt.live.catalog import DocumentStatus
from retriever_trt.live.live_documents import LiveConfig, LiveDocuments, UploadError, safe_name
from retriever_trt.search.bm25 import BM25
from retriever_trt.search.filters import MetadataFilter, within_tenant
from retriever_trt.search.retriever import Retriever, chunk_counter

CONFIG = LiveConfig(chunk_tokens=120, overlap=20, poll_interval=0.05)
ALPHA = ("Zephyrine Corp. reported revenue of $812 million for fiscal 2024, up from "
         "$790 million, on strong sales of its quartz turbines.")
BETA = ("Halvorsen Shipping Ltd. carried 1.2 million containers in 2024; its fleet of "
        "42 vessels sailed mostly between Oslo and Rotterdam.")


def wait_ready(live: LiveDocuments, doc_id: str) -> DocumentStatus:
    while (record := live.get(doc_id, None)) is not None and \
            record.status is DocumentStatus.INDEXING:
        time.sleep(0.02)
    return record.status if record is not None else None


def open_live(embedder, folder: Path) -> LiveDocuments:
    live = LiveDocuments(Retriever.empty(embedder), embedder, folder, CONFIG)
    live.start()
    return live


def upload(live: LiveDocuments, name: str, text: str, collection: str = "alpha") -> str:
    record, _ = live.add(name, io.BytesIO(text.encode()), collection)
    assert wait_ready(live, record.id) is DocumentStatus.READY, live.get(record.id, None)
    return record.id


def search_ids(live: LiveDocuments, question: str, tenant: frozenset[str] | None = None):
    filt = within_tenant(None, tenant)
    return [p.doc_id for p in live.retriever.retrieve([question], 5, filters=[filt])[0]]


def test_bm25_extend_and_remove_score_as_a_fresh_fit():
    texts = [ALPHA, BETA, "Revenue grew 10% in 2024.", "Cash flow from operations."]
    grown = BM25().fit(texts[:2]).extend(texts[2:])
    fresh = BM25().fit(texts)
    assert np.allclose(grown.scores("revenue 2024"), fresh.scores("revenue 2024"))
    fresh.remove(np.array([1, 3]))
    kept = BM25().fit([texts[0], texts[2]])
    assert np.allclose(fresh.scores("revenue 2024")[[0, 2]], kept.scores("revenue 2024"))
    assert fresh.scores("containers vessels")[1] == 0


def test_safe_names_stay_in_their_folder():
    assert safe_name("../../etc/passwd.txt") == "passwd.txt"
    assert safe_name("a\x00b/..\\c.md") == "c.md"
    assert safe_name("..") == "upload" and safe_name("") == "upload"


def test_upload_is_searchable_once_ready_and_gone_after_delete(embedder, tmp_path):
    live = open_live(embedder, tmp_path / "documents")
    try:
        doc_id = upload(live, "zephyrine.md", ALPHA)
        assert search_ids(live, "Zephyrine quartz turbines revenue")[:1] == [doc_id]
        again, created = live.add("copy.md", io.BytesIO(ALPHA.encode()), "alpha")
        assert (again.id, created) == (doc_id, False)
        assert live.delete(doc_id, frozenset({"beta"})) is None  # another tenant's: unseen
        assert live.delete(doc_id, None).id == doc_id
        assert doc_id not in search_ids(live, "Zephyrine quartz turbines revenue")
        assert not (tmp_path / "documents" / "segments" / doc_id).exists()
    finally:
        live.stop()


def test_same_chunks_as_a_folder_index(embedder, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "zephyrine.md").write_text(ALPHA * 12)
    store, _ = ingest(folder, CONFIG.chunk_tokens, CONFIG.overlap, chunk_counter(embedder))
    live = open_live(embedder, tmp_path / "documents")
    try:
        doc_id = upload(live, "zephyrine.md", ALPHA * 12)
        texts = [c.text for c in live.retriever.store.document(doc_id)]
        assert texts == [c.text for c in store] and len(texts) > 1
    finally:
        live.stop()


def test_tenants_see_only_their_collections(embedder, tmp_path):
    live = open_live(embedder, tmp_path / "documents")
    try:
        a = upload(live, "zephyrine.md", ALPHA, "alpha")
        b = upload(live, "halvorsen.md", BETA, "beta")
        # Questions made of the other tenant's own words find nothing of it.
        for words in (BETA, "Halvorsen Shipping containers vessels Oslo Rotterdam"):
            assert b not in search_ids(live, words, frozenset({"alpha"}))
        assert search_ids(live, BETA, frozenset({"beta"}))[:1] == [b]
        assert [r.id for r in live.list(frozenset({"alpha"}))] == [a]
        assert live.get(b, frozenset({"alpha"})) is None
        # A filter naming the other collection does not widen the tenant's scope.
        asked = within_tenant(MetadataFilter(collection=("beta",)), frozenset({"alpha"}))
        assert live.retriever.retrieve([BETA], 5, filters=[asked]) == [[]]
    finally:
        live.stop()


def test_bad_uploads_are_refused_and_leave_nothing(embedder, tmp_path):
    live = open_live(embedder, tmp_path / "documents")
    try:
        with pytest.raises(UploadError) as empty:
            live.add("empty.md", io.BytesIO(b""), "alpha")
        with pytest.raises(UploadError) as kind:
            live.add("tool.exe", io.BytesIO(b"MZ"), "alpha")
        assert (empty.value.status, kind.value.status) == (400, 415)
        record, _ = live.add("fake.pdf", io.BytesIO(b"this is not a PDF at all"), "alpha")
        assert wait_ready(live, record.id) is DocumentStatus.FAILED
        assert "fake.pdf" in live.get(record.id, None).error
        leftovers = [p.name for p in (tmp_path / "documents" / "files").iterdir()]
        assert leftovers == [record.id]  # the failed upload's own folder, nothing incoming
    finally:
        live.stop()


def test_restart_loads_ready_documents_and_replicas_follow(embedder, tmp_path):
    folder = tmp_path / "documents"
    first = open_live(embedder, folder)
    other = open_live(embedder, folder)  # a second replica on the same folder
    try:
        doc_id = upload(first, "zephyrine.md", ALPHA)
        while doc_id not in search_ids(other, "Zephyrine quartz turbines"):
            time.sleep(0.02)  # the other replica's poll loads the segment
        first.delete(doc_id, None)
        while doc_id in search_ids(other, "Zephyrine quartz turbines"):
            time.sleep(0.02)
        kept = upload(first, "halvorsen.md", BETA)
    finally:
        first.stop()
        other.stop()
    restarted = open_live(embedder, folder)
    try:
        assert search_ids(restarted, "Halvorsen containers vessels")[:1] == [kept]
        assert doc_id not in search_ids(restarted, "Zephyrine quartz turbines")
    finally:
        restarted.stop()
