"""`vector_store: milvus` (retriever_trt/store/milvus_store.py) on a real milvus-lite: the same
top-k as FAISS Flat, metadata filters as Milvus expressions (quotes and backslashes in
names), deletes, several retrievers and processes on one store, and the documents API's
replicas over it."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from prereqs import MILVUS, missing, require_module

from retriever_trt.documents.model import DocumentMetadata, Form
from retriever_trt.embedders.embedder import Embedder
from retriever_trt.search.filters import MetadataFilter, within_tenant
from retriever_trt.search.retriever import Retriever
from retriever_trt.store import vector_store
from retriever_trt.store.document_store import Chunk, DocumentInfo, DocumentStore
from retriever_trt.store.faiss_index import VectorIndex
from retriever_trt.store.milvus_store import filter_expression, quote
from retriever_trt.store.vector_store import MilvusConfig, MilvusIndexType

DIM = 32
CHUNKS_PER_DOC = 12
ROOT = Path(__file__).resolve().parent.parent
# Names a filter expression must quote: a quote, a backslash, both kinds of quotes.
ODD_COMPANY = 'O\'Brien "Quoted" \\ Holdings'
ODD_TICKER = 'Q"T\\'
ODD_DOC = 'doc-"odd\\id'
DOCS = [  # doc_id, collection, company, ticker, form, fiscal year
    ("doc-a", "alpha", "Zephyrine Corp.", "ZEPH", Form.TEN_K, 2024),
    ("doc-b", "alpha", "Zephyrine Corp.", "ZEPH", Form.TEN_Q, 2023),
    ("doc-c", "beta", "Halvorsen Shipping Ltd.", "HALV", Form.TEN_K, 2024),
    (ODD_DOC, "beta", ODD_COMPANY, ODD_TICKER, Form.EIGHT_K, 2022),
    ("doc-e", "default", "", "", Form.OTHER, None),
]


@pytest.fixture(scope="module")
def milvus_lite() -> None:
    require_module("pymilvus", MILVUS)
    require_module("milvus_lite", MILVUS)


class HashEmbedder(Embedder):
    """Unit vectors drawn from a hash of the text: deterministic, and no model to load."""

    model_id, precision, dim = "hash-test", "fp32", DIM

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.stack([np.random.default_rng(
            int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
        ).standard_normal(DIM) for t in texts]).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def document(doc_id: str, collection: str, company: str, ticker: str, form: Form,
             year: int | None) -> DocumentStore:
    chunks = [Chunk(f"{doc_id}#{i}", doc_id, company or doc_id,
                    f"{company} {form.value} {year} passage {i} of {doc_id}")
              for i in range(CHUNKS_PER_DOC)]
    info = DocumentInfo(doc_id, company or doc_id, DocumentMetadata(company, ticker, form, year),
                        collection=collection)
    return DocumentStore(chunks, documents=[info])


def parts() -> list[DocumentStore]:
    return [document(*d) for d in DOCS]


def config(tmp_path: Path, index_type: MilvusIndexType = MilvusIndexType.FLAT) -> MilvusConfig:
    return MilvusConfig(str(tmp_path / "m.db"), index_type=index_type)


def both(tmp_path: Path, index_type: MilvusIndexType = MilvusIndexType.FLAT,
         ) -> tuple[Retriever, Retriever]:
    """The same documents in a FAISS Flat retriever and a Milvus one."""
    emb = HashEmbedder()
    faiss_r = Retriever.empty(emb)
    milvus_r = Retriever.empty(emb, milvus=config(tmp_path, index_type))
    for part in parts():
        vectors = emb.encode([part.index_text(i) for i in range(len(part))])
        faiss_r.add(part, vectors)
        milvus_r.add(part, vectors)
    return faiss_r, milvus_r


def count(retriever: Retriever) -> int:
    store = retriever.index
    rows = store._client.query(store.config.collection, filter="", output_fields=["count(*)"])
    return int(rows[0]["count(*)"])


# -- expressions (no Milvus needed) ----------------------------------------------------
def test_quote_escapes_what_a_milvus_string_cannot_hold():
    assert quote(ODD_COMPANY) == '"O\'Brien \\"Quoted\\" \\\\ Holdings"'
    assert quote("a\nb\tc") == '"a\\nb\\tc"'
    assert quote("bell\x07") is None  # no escape for it: left out of the expression


def test_filter_expression_reads_every_field_and_the_tenant():
    filt = within_tenant(MetadataFilter.from_dict(
        {"doc_id": ["d1", "d2"], "company": "Zephyrine Corp.", "form": "10-K",
         "fiscal_year": [2023, 2024], "collection": "alpha"}), frozenset({"alpha", "beta"}))
    assert filter_expression(filt) == (
        'doc_id in ["d1", "d2"] and collection in ["alpha", "beta"] and '
        'collection in ["alpha"] and (company in ["zephyrine corp.", "zephyrine"] or '
        'ticker in ["zephyrine corp.", "zephyrine"]) and form in ["10-K"] and '
        "fiscal_year in [2023, 2024]")
    assert filter_expression(None) == ""


def test_settings_name_the_install_step_when_pymilvus_is_missing(monkeypatch):
    from pipeline.settings_sources import SettingsError, load_settings

    real = vector_store.importlib.util.find_spec
    monkeypatch.setattr(vector_store.importlib.util, "find_spec",
                        lambda name: None if name == "pymilvus" else real(name))
    with pytest.raises(SettingsError, match="pip install pymilvus milvus-lite"):
        load_settings(None, {"vector_store": "milvus"}, environ={})
    with pytest.raises(ValueError, match="pip install pymilvus milvus-lite"):
        MilvusConfig("x.db")


# -- milvus-lite -------------------------------------------------------------------------
needs_milvus = pytest.mark.usefixtures("milvus_lite")


@needs_milvus
def test_same_top_k_as_faiss_flat(tmp_path):
    """FLAT is exact both sides: the same rows, the same scores."""
    faiss_r, milvus_r = both(tmp_path)
    queries = HashEmbedder().encode([f"question {i}" for i in range(8)])
    for k in (1, 5, 20):
        f_scores, f_rows = faiss_r.index.search_rows(queries, k, None, None)
        m_scores, m_rows = milvus_r.index.search_rows(queries, k, None, None)
        np.testing.assert_array_equal(m_rows, f_rows)
        np.testing.assert_allclose(m_scores, f_scores, rtol=1e-5, atol=1e-5)


@needs_milvus
@pytest.mark.parametrize("index_type", [MilvusIndexType.IVF_FLAT, MilvusIndexType.AUTOINDEX])
def test_approximate_index_types_build_and_find(tmp_path, index_type):
    faiss_r, milvus_r = both(tmp_path, index_type)
    queries = HashEmbedder().encode([f"question {i}" for i in range(8)])
    _, want = faiss_r.index.search_rows(queries, 10, None, None)
    _, got = milvus_r.index.search_rows(queries, 10, None, None)
    recall = np.mean([len(set(g) & set(w)) / 10 for g, w in zip(got, want, strict=True)])
    assert recall >= 0.9


FILTERS = [
    {"doc_id": ["doc-a", "doc-c"]},
    {"doc_id": ODD_DOC},
    {"collection": "beta"},
    {"company": ODD_COMPANY},
    {"company": ODD_TICKER},
    {"company": "zephyrine"},
    {"company": "ZEPH", "form": "10-Q"},
    {"form": ["10-K", "8-K"], "fiscal_year": 2024},
    {"fiscal_year": [2022, 2023]},
]


@needs_milvus
@pytest.mark.parametrize("tenant", [None, frozenset({"beta"}), frozenset({"default"}),
                                    frozenset()])
def test_filters_as_expressions_pass_what_the_store_passes(tmp_path, tenant):
    faiss_r, milvus_r = both(tmp_path)
    query = HashEmbedder().encode(["which passages pass"])
    for raw in [*FILTERS, None]:
        filt = within_tenant(MetadataFilter.from_dict(raw), tenant)
        subset = faiss_r.store.rows_where(filt) if filt is not None else None
        _, want = faiss_r.index.search_rows(query, 30, subset, filt)
        _, got = milvus_r.index.search_rows(query, 30, subset, filt)
        np.testing.assert_array_equal(got, want, err_msg=f"{raw} within {tenant}")
    odd = milvus_r.retrieve(["passage"], 50, "dense", [MetadataFilter.from_dict(
        {"company": ODD_COMPANY})])[0]
    assert {p.doc_id for p in odd} == {ODD_DOC}


@needs_milvus
def test_retriever_over_milvus_ranks_as_over_faiss_and_delete_removes(tmp_path):
    faiss_r, milvus_r = both(tmp_path)
    questions = ["Zephyrine 10-K 2024", "Halvorsen passage 3", "O'Brien passage"]
    for mode in ("dense", "hybrid"):
        assert _ids(milvus_r.retrieve(questions, 8, mode)) == \
            _ids(faiss_r.retrieve(questions, 8, mode))
    assert count(milvus_r) == len(DOCS) * CHUNKS_PER_DOC
    for retriever in (faiss_r, milvus_r):
        assert retriever.remove("doc-c")
    assert count(milvus_r) == (len(DOCS) - 1) * CHUNKS_PER_DOC
    for mode in ("dense", "hybrid"):
        got = _ids(milvus_r.retrieve(questions, 60, mode))
        assert got == _ids(faiss_r.retrieve(questions, 60, mode))
        assert all(not c.startswith("doc-c#") for ids in got for c in ids)


def _ids(passages: list[list]) -> list[list[str]]:
    return [[p.chunk_id for p in ps] for ps in passages]


@needs_milvus
def test_two_retrievers_share_one_milvus_lite_file(tmp_path):
    """Two replicas in one process: writes are upserts (no copies), each answers from the
    documents it loaded, and a delete through one is gone from the other's dense search."""
    emb = HashEmbedder()
    first = Retriever.empty(emb, milvus=config(tmp_path))
    second = Retriever.empty(emb, milvus=config(tmp_path))
    a, b = parts()[:2]
    vec_a, vec_b = (emb.encode([p.index_text(i) for i in range(len(p))]) for p in (a, b))
    first.add(a, vec_a)
    first.add(b, vec_b)
    second.add(a, vec_a)  # the second replica loads doc-a from its segment
    assert count(first) == count(second) == 2 * CHUNKS_PER_DOC
    assert {p.doc_id for p in second.retrieve(["passage"], 30, "dense")[0]} == {"doc-a"}
    first.remove("doc-a")
    assert second.retrieve(["passage"], 30, "dense")[0] == []
    assert count(second) == CHUNKS_PER_DOC


@needs_milvus
def test_load_writes_a_saved_folder_once(tmp_path):
    faiss_r, _ = both(tmp_path / "both")
    store = _fresh(faiss_r.store)
    saved = Retriever(faiss_r.embedder, _flat(faiss_r, store.corpus_hash), store)
    saved.save(tmp_path / "index")
    cfg = config(tmp_path)
    loaded = Retriever.load(tmp_path / "index", faiss_r.embedder, milvus=cfg)
    again = Retriever.load(tmp_path / "index", faiss_r.embedder, milvus=cfg)  # a restart
    assert count(again) == len(DOCS) * CHUNKS_PER_DOC
    questions = ["Zephyrine 10-K 2024", "Halvorsen passage 3"]
    assert _ids(loaded.retrieve(questions, 10)) == _ids(faiss_r.retrieve(questions, 10))
    with pytest.raises(ValueError, match="FAISS"):
        loaded.save(tmp_path / "elsewhere")


def _fresh(store: DocumentStore) -> DocumentStore:
    return DocumentStore(store.chunks, documents=store.info.values())


def _flat(retriever: Retriever, corpus_hash: str) -> VectorIndex:
    index = VectorIndex.for_embedder(retriever.embedder, corpus_hash=corpus_hash)
    index.build(retriever.index.stored_vectors())
    return index


@needs_milvus
def test_another_embedders_collection_is_refused(tmp_path):
    Retriever.empty(HashEmbedder(), milvus=config(tmp_path))
    other = HashEmbedder()
    other.model_id = "another-model"
    with pytest.raises(RuntimeError, match="another embedder"):
        Retriever.empty(other, milvus=config(tmp_path))


OPEN_IN_CHILD = """
import sys
from retriever_trt.store.milvus_store import MilvusVectorStore
from retriever_trt.store.vector_store import MilvusConfig
try:
    MilvusVectorStore(MilvusConfig(sys.argv[1]), 32, "hash-test", "fp32")
except RuntimeError as exc:
    print(exc)
"""


@needs_milvus
def test_a_second_process_cannot_open_a_milvus_lite_file(tmp_path):
    """milvus-lite locks its folder: a second process gets the fix, not a traceback."""
    held = Retriever.empty(HashEmbedder(), milvus=config(tmp_path))
    out = subprocess.run([sys.executable, "-c", OPEN_IN_CHILD, held.index.config.uri],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert "milvus-lite server --data-dir" in out.stdout, out.stderr[-2000:]


DELETE_IN_CHILD = """
import sys
from retriever_trt.store.milvus_store import MilvusVectorStore
from retriever_trt.store.vector_store import MilvusConfig
store = MilvusVectorStore(MilvusConfig(sys.argv[1]), 32, "hash-test", "fp32")
rows = store._client.query(store.config.collection, filter="", output_fields=["count(*)"])
print(rows[0]["count(*)"])
store.forget("doc-a")
"""


@pytest.fixture
def lite_server(milvus_lite, tmp_path) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "milvus_lite.cmdline", "server",
                             "--data-dir", str(tmp_path / "served"), "--host", "127.0.0.1",
                             "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                missing(f"milvus-lite server did not start: {proc.stderr.read()[-500:]!r}",
                        MILVUS)
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@needs_milvus
def test_processes_share_a_milvus_lite_server(tmp_path, lite_server):
    """Replicas in several processes: one `milvus-lite server`, milvus_uri its address."""
    emb = HashEmbedder()
    here = Retriever.empty(emb, milvus=MilvusConfig(lite_server))
    part = parts()[0]
    here.add(part, emb.encode([part.index_text(i) for i in range(len(part))]))
    out = subprocess.run([sys.executable, "-c", DELETE_IN_CHILD, lite_server],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == [str(CHUNKS_PER_DOC)], out.stderr[-2000:]
    assert here.retrieve(["passage"], 10, "dense")[0] == []


@needs_milvus
def test_documents_api_replicas_over_one_milvus(embedder, tmp_path):
    """LiveDocuments unchanged over Milvus: an upload through one replica is answered by the
    other once it loaded it, a delete reaches both, and a restart finds what was kept."""
    from test_live_documents import ALPHA, BETA, CONFIG, search_ids, upload

    from retriever_trt.live.live_documents import LiveDocuments

    def replica() -> LiveDocuments:
        live = LiveDocuments(Retriever.empty(embedder, milvus=config(tmp_path)), embedder,
                             tmp_path / "documents", CONFIG)
        live.start()
        return live

    first, other = replica(), replica()
    try:
        doc_id = upload(first, "zephyrine.md", ALPHA)
        while doc_id not in search_ids(other, "Zephyrine quartz turbines"):
            time.sleep(0.02)
        first.delete(doc_id, None)
        while doc_id in search_ids(other, "Zephyrine quartz turbines"):
            time.sleep(0.02)
        kept = upload(first, "halvorsen.md", BETA)
        assert count(first.retriever) == len(first.retriever.store.document(kept))
    finally:
        first.stop()
        other.stop()
    restarted = replica()
    try:
        assert search_ids(restarted, "Halvorsen containers vessels")[:1] == [kept]
        assert doc_id not in search_ids(restarted, "Zephyrine quartz turbines")
    finally:
        restarted.stop()


@needs_milvus
def test_load_retriever_follows_the_vector_store_setting(tmp_path):
    from pipeline.rag.index_loading import load_retriever
    from pipeline.settings_sources import load_settings

    settings = load_settings(None, {"vector_store": "milvus", "index": str(tmp_path / "idx")},
                             environ={})
    retriever = load_retriever(settings, HashEmbedder(), progress=False)
    assert retriever.index.config.uri == str(tmp_path / "idx" / "milvus.db")
    (tmp_path / "idx" / "documents").mkdir()
    restarted = load_retriever(settings, HashEmbedder(), progress=False)  # the file is no index
    assert len(restarted.store) == 0
    faiss_settings = load_settings(None, {"index": str(tmp_path / "other")}, environ={})
    assert isinstance(load_retriever(faiss_settings, HashEmbedder(), progress=False).index,
                      VectorIndex)
