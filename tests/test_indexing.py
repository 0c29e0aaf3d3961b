"""Indexing a corpus: the default encoder (dynamic INT8 on CPU), each distinct chunk encoded
once, chunks encoded while the corpus is read, the encoder's identity (precision and file
hash) recorded in the index and checked at load, and no torch on ONNX Runtime's path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from paths import DEMO_CORPUS, REPO

from pipeline.cli import main
from retriever_trt.embedders.embedder import SHORT_SHA, Embedder
from retriever_trt.embedders.loader import CPU_ENCODER_FILE, default_embedder, load_embedder
from retriever_trt.indexing.encoding import encode_corpus
from retriever_trt.indexing.ingest import ingest
from retriever_trt.indexing.streaming_encoder import StreamingEncoder
from retriever_trt.search.retriever import Retriever
from retriever_trt.store.faiss_index import EmbedderMismatchError
from retriever_trt.store.storage import file_sha256

# Vectors of one text encoded in two batches of other lengths: ONNX Runtime FP32's sums
# differ in the last bits only.
SAME_VECTOR_ATOL = 1e-4
# Texts about different things: a vector handed back to the wrong text is far off this.
TOPICS = ["The board declared a quarterly dividend of $0.42 per share.",
          "Operating lease liabilities were $310 million at year end.",
          "The effective tax rate was 21.3% in fiscal 2019.",
          "Apple Inc. 10-K FY2024, p. 3\nTable of Contents",
          "Goodwill is tested for impairment annually in the fourth quarter.",
          "Revenue from subscriptions grew 12% to $4.2 billion."]


class CountingEmbedder(Embedder):
    """The real embedder, recording the texts each `encode` call carried; fails on
    `fail_on` when given (an encoder that stops midway)."""

    def __init__(self, inner: Embedder, fail_on: str | None = None) -> None:
        self.inner, self.fail_on = inner, fail_on
        self.model_id, self.precision, self.dim = inner.model_id, inner.precision, inner.dim
        self.tokenizer = getattr(inner, "tokenizer", None)
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail_on in texts:
            raise RuntimeError(f"encoder failed on {self.fail_on!r}")
        self.texts += texts
        return self.inner.encode(texts)


@pytest.fixture(scope="module")
def int8(engines_dir: Path) -> Embedder:
    """The default encoder: exported, then quantized, into the session's empty engines/."""
    return default_embedder(engines_dir, progress=False)


@pytest.fixture(scope="module")
def fp32(int8: Embedder) -> Embedder:
    return load_embedder(int8.path.parent / "model.onnx")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kb") / "kb.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"d{i}", "title": "Notes", "text": text})
                              for i, text in enumerate(TOPICS)))
    return path


def test_default_encoder_on_cpu_is_the_dynamic_int8_graph(int8) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("with a GPU the default encoder is the FP32 graph")
    assert int8.path.name == CPU_ENCODER_FILE and int8.precision == "int8"
    assert int8.file_sha256 == file_sha256(int8.path)


def test_each_distinct_text_is_encoded_once(fp32) -> None:
    texts = [TOPICS[0], TOPICS[1], TOPICS[0], TOPICS[2], TOPICS[1], TOPICS[0]]
    counting = CountingEmbedder(fp32)
    heard: list[int] = []
    vectors = encode_corpus(counting, texts, batch_size=2, progress=False, on_batch=heard.append)
    assert sorted(counting.texts) == sorted(TOPICS[:3])
    np.testing.assert_allclose(vectors, fp32.encode(texts), atol=SAME_VECTOR_ATOL)
    assert heard[-1] == len(texts)  # progress counts the texts asked for, duplicates too


def test_streaming_encoder_returns_each_texts_vector_in_order(fp32) -> None:
    added = [TOPICS[:3], [TOPICS[3], TOPICS[0]], [], TOPICS[3:], [TOPICS[5], TOPICS[1]]]
    counting = CountingEmbedder(fp32)
    with StreamingEncoder(counting, batch_size=2, window=2, progress=False) as encoder:
        for texts in added:
            encoder.add(texts)
        vectors = encoder.finish()
    every = [t for texts in added for t in texts]
    assert sorted(counting.texts) == sorted(TOPICS)
    np.testing.assert_allclose(vectors, fp32.encode(every), atol=SAME_VECTOR_ATOL)


def test_streaming_encoder_failure_reaches_the_caller_and_stops(fp32) -> None:
    encoder = StreamingEncoder(CountingEmbedder(fp32, fail_on=TOPICS[1]), window=1,
                               progress=False)
    with pytest.raises(RuntimeError, match="encoder failed"), encoder:
        for text in TOPICS:
            encoder.add([text])
        encoder.finish()
    assert not encoder._thread.is_alive()
    reading_failed = StreamingEncoder(fp32, window=1, progress=False)
    with pytest.raises(ValueError, match="reading"), reading_failed:
        reading_failed.add(TOPICS)
        raise ValueError("reading failed")
    assert not reading_failed._thread.is_alive()


def test_ingest_hands_over_texts_in_the_stores_order(tmp_path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Leases\n\n" + " ".join(TOPICS * 40))
    (folder / "b.txt").write_text(TOPICS[2])
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    for corpus in (folder, DEMO_CORPUS):
        heard: list[str] = []
        store, _ = ingest(corpus, 60, 10, on_texts=heard.extend)
        assert heard == [store.index_text(i) for i in range(len(store))] and len(heard) > 2


def test_index_records_its_encoder_and_refuses_another(int8, fp32, corpus, tmp_path) -> None:
    out = tmp_path / "idx"
    built = Retriever.build(int8, corpus, out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["precision"], manifest["encoder_sha256"]) == ("int8", int8.file_sha256)
    # The same file: questions find their chunk, as the built retriever ranks them.
    question = ["What dividend did the board declare?"]
    loaded = Retriever.load(out, load_embedder(int8.path))
    assert loaded.retrieve(question, 1)[0][0].doc_id == built.retrieve(question, 1)[0][0].doc_id
    with pytest.raises(EmbedderMismatchError) as other_precision:
        Retriever.load(out, fp32)
    message = str(other_precision.value)
    assert "(int8, dim 384, file sha256 " + int8.file_sha256[:SHORT_SHA] in message
    assert "(fp32, dim 384, file sha256 " + fp32.file_sha256[:SHORT_SHA] in message
    # Another INT8 file of the same model (a re-export): same id, precision and width.
    from onnx_export.export import stamp_metadata

    other = tmp_path / "enc" / CPU_ENCODER_FILE
    shutil.copytree(int8.path.parent, other.parent)
    stamp_metadata(other, {"note": "re-exported"})
    same_kind = load_embedder(other)
    assert (same_kind.model_id, same_kind.precision) == (int8.model_id, int8.precision)
    with pytest.raises(EmbedderMismatchError, match=same_kind.file_sha256[:SHORT_SHA]):
        Retriever.load(out, same_kind)


def test_finrag_index_names_its_encoder(engines_dir, int8, corpus, tmp_path, capsys) -> None:
    assert main(["index", "--corpus", str(corpus), "--out", str(tmp_path / "idx"),
                 "--engines-dir", str(engines_dir)]) == 0
    out = capsys.readouterr().out
    assert f"encoder {int8.model_id} (int8, dim 384, file sha256 " \
           f"{int8.file_sha256[:SHORT_SHA]})" in out
    assert f"indexed {len(TOPICS)} chunks ({len(TOPICS)} distinct encoded)" in out


def python_imports_torch(code: str) -> bool:
    """Whether `code`, run in a fresh interpreter from the repository, imports torch."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\n"
                           "print('TORCH', 'torch' in sys.modules)"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1] == "TORCH True"


def test_index_help_and_onnx_index_path_import_no_torch(engines_dir, int8, corpus,
                                                       tmp_path) -> None:
    help_of = ("from pipeline.cli import main\ntry:\n    main([{!r}, '--help'])\n"
               "except SystemExit:\n    pass")
    assert not python_imports_torch(help_of.format("index"))
    # serve's engine flags are read off EngineConfig, which imports no torch either.
    assert not python_imports_torch(help_of.format("serve"))
    assert not python_imports_torch(
        "from retriever_trt.embedders.loader import load_embedder\n"
        "from retriever_trt.search.retriever import Retriever\n"
        f"Retriever.build(load_embedder({str(int8.path)!r}), {str(corpus)!r}, "
        f"{str(tmp_path / 'idx')!r}, progress=False)")
    # The whole command, settings included, with the default (INT8 ONNX) encoder.
    out = tmp_path / "cli-idx"
    assert not python_imports_torch(
        "from pipeline.cli import main\n"
        f"assert main(['index', '--corpus', {str(corpus)!r}, '--out', {str(out)!r}, "
        f"'--engines-dir', {str(engines_dir)!r}]) == 0")
    assert Retriever.load(out, int8).retrieve(["quarterly dividend"], 1)[0][0].doc_id == "d0"
    # The check can fail: the engine itself, loaded on first use of its name, needs torch.
    assert python_imports_torch("from llm_engine import LLMEngine")
