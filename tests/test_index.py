"""VectorIndex: factories, persistence, manifest checks, atomic saves, corrupt files."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from retriever_trt.store import faiss_index as index_mod
from retriever_trt.store import storage
from retriever_trt.store.faiss_index import EmbedderMismatchError, VectorIndex, min_training_vectors
from retriever_trt.store.storage import IndexFileError

DIM = 64


def unit(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return unit(1200, 0)


def self_recall(index: VectorIndex, vectors: np.ndarray, k: int) -> float:
    _, ids = index.search(vectors[:200], k)
    return float(np.mean([i in row for i, row in enumerate(ids)]))


@pytest.mark.parametrize(("factory", "k", "floor"), [("Flat", 1, 1.0), ("HNSW32", 1, 0.95),
                                                      ("IVF8,PQ8x4", 10, 0.8)])
def test_build_search_save_load(factory, k, floor, vectors, tmp_path):
    index = VectorIndex(DIM, factory, "enc", "fp32", "abc")
    index.build(vectors)
    assert len(index) == len(vectors)
    assert self_recall(index, vectors, k) >= floor
    scores, ids = index.search(vectors[:10], 5)
    assert scores.shape == ids.shape == (10, 5)
    assert np.all(np.diff(scores, axis=1) <= 1e-6), "scores must come best first"
    index.save(tmp_path / "idx")
    loaded = VectorIndex.load(tmp_path / "idx", expect_embedder=SimpleNamespace(
        model_id="enc", precision="fp32", dim=DIM))
    assert (loaded.factory, loaded.corpus_hash, len(loaded)) == (factory, "abc", len(vectors))
    np.testing.assert_array_equal(loaded.search(vectors[:10], 5)[1], ids)


def test_flat_scores_are_inner_products(vectors):
    index = VectorIndex(DIM)
    index.build(vectors[:50])
    scores, ids = index.search(vectors[50:52], 3)
    np.testing.assert_allclose(scores, np.take_along_axis(vectors[50:52] @ vectors[:50].T, ids, 1),
                               rtol=1e-5)


def test_add_appends_and_short_index_pads(vectors):
    index = VectorIndex(DIM)
    index.build(vectors[:3])
    index.add(vectors[3:5])
    scores, ids = index.search(vectors[:1], 8)
    assert len(index) == 5
    assert ids[0, 0] == 0 and list(ids[0, 5:]) == [-1, -1, -1]


def test_training_needs_enough_vectors(vectors):
    assert min_training_vectors("IVF64,PQ16") == 256
    assert min_training_vectors("IVF512,PQ8x4") == 512
    assert min_training_vectors("HNSW32") == 0
    with pytest.raises(ValueError, match=r"at least 256 vectors to train, got 100"):
        VectorIndex(DIM, "IVF16,PQ16").build(vectors[:100])


def test_bad_factory_and_shapes(vectors):
    with pytest.raises(ValueError, match="invalid FAISS factory 'IVF16,PQ7'"):
        VectorIndex(DIM, "IVF16,PQ7")
    index = VectorIndex(DIM)
    with pytest.raises(ValueError, match=r"shape \(n, 64\)"):
        index.build(np.zeros((3, 10), dtype=np.float32))
    with pytest.raises(ValueError, match="untrained"):
        VectorIndex(DIM, "IVF8,PQ8x4").add(vectors)


def test_embedder_mismatch_names_both(vectors, tmp_path):
    index = VectorIndex(DIM, "Flat", "minilm", "fp32")
    index.build(vectors[:10])
    index.save(tmp_path / "idx")
    other = SimpleNamespace(model_id="minilm", precision="int8", dim=DIM)
    with pytest.raises(EmbedderMismatchError, match=r"minilm \(fp32.*minilm \(int8"):
        VectorIndex.load(tmp_path / "idx", expect_embedder=other)


def _saved(tmp_path: Path, vectors: np.ndarray, n: int) -> Path:
    index = VectorIndex(DIM)
    index.build(vectors[:n])
    index.save(tmp_path / "idx")
    return tmp_path / "idx"


def test_failed_save_keeps_previous_index(vectors, tmp_path, monkeypatch):
    target = _saved(tmp_path, vectors, 10)
    bigger = VectorIndex(DIM)
    bigger.build(vectors[:20])

    def crash(index, path):  # a partial file, then the process "dies"
        Path(path).write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(index_mod.faiss, "write_index", crash)
    with pytest.raises(KeyboardInterrupt):
        bigger.save(target)
    monkeypatch.undo()
    assert len(VectorIndex.load(target)) == 10
    assert [p.name for p in tmp_path.iterdir()] == ["idx"], "temporary folder left behind"


def test_kill_between_renames_restores_previous(vectors, tmp_path, monkeypatch):
    target = _saved(tmp_path, vectors, 10)
    real_replace, calls = storage.os.replace, []

    def replace_then_die(src, dst):  # the old folder is moved aside, then the process dies
        calls.append(dst)
        if len(calls) == 2:
            raise SystemExit("killed")
        real_replace(src, dst)

    monkeypatch.setattr(storage.os, "replace", replace_then_die)
    with pytest.raises(SystemExit):
        VectorIndex(DIM).save(target)
    monkeypatch.undo()
    assert not target.exists()
    assert len(VectorIndex.load(target)) == 10


@pytest.mark.parametrize("damage", ["truncate", "delete", "manifest"])
def test_corrupt_files_name_path_and_rebuild_command(damage, vectors, tmp_path):
    target = _saved(tmp_path, vectors, 10)
    if damage == "truncate":
        data = (target / "index.faiss").read_bytes()
        (target / "index.faiss").write_bytes(data[: len(data) // 2])
    elif damage == "delete":
        (target / "index.faiss").unlink()
    else:
        (target / "manifest.json").write_text("{not json")
    culprit = "manifest.json" if damage == "manifest" else "index.faiss"
    with pytest.raises(IndexFileError, match=culprit) as info:
        VectorIndex.load(target)
    assert "finrag index --corpus" in str(info.value) and str(target) in str(info.value)


def test_missing_directory(tmp_path):
    with pytest.raises(IndexFileError, match="no saved index.*finrag index --corpus PATH --out"):
        VectorIndex.load(tmp_path / "nothing")
