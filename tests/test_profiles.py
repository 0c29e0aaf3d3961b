"""Shape profiles: spec parsing, buckets, splitting, truncation, padding equivalence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from paths import FILINGS
from retr_support import exported

from retriever_trt.embedders.profiles import (
    DEFAULT_PROFILE,
    Profile,
    SequenceTooLongError,
    Shape,
    ShapeSpecError,
    make_batches,
    parse_shape_spec,
    profile_from_specs,
)


def test_parse_specs():
    assert parse_shape_spec("input_ids:1x16,attention_mask:1x16") == Shape(1, 16)
    assert parse_shape_spec(" input_ids : 8x128 ") == Shape(8, 128)
    p = profile_from_specs("input_ids:1x16,attention_mask:1x16",
                           "input_ids:8x64,attention_mask:8x64",
                           "input_ids:32x256,attention_mask:32x256")
    assert (p.min, p.opt, p.max) == (Shape(1, 16), Shape(8, 64), Shape(32, 256))
    assert p.spec("opt") == "input_ids:8x64,attention_mask:8x64"
    assert profile_from_specs(None, None, None) is None
    only_max = profile_from_specs(None, None, "input_ids:4x32")
    assert only_max.min == only_max.opt == only_max.max == Shape(4, 32)


@pytest.mark.parametrize("spec,msg", [
    ("input_ids:1x16,attention_mask:1x32", "same shape"),
    ("input_ids:1x16x3", "2 dims"),
    ("token_type_ids:1x16", "unknown input"),
    ("input_ids=1x16", "malformed"),
    ("input_ids:0x16", "≥ 1"),
    ("", "malformed"),
])
def test_bad_specs(spec, msg):
    with pytest.raises(ShapeSpecError, match=msg):
        parse_shape_spec(spec, "--optShapes")


def test_bad_profiles():
    with pytest.raises(ShapeSpecError, match="outside"):
        Profile(Shape(1, 16), Shape(64, 64), Shape(32, 128))
    with pytest.raises(ShapeSpecError, match="exceeds"):
        Profile(Shape(4, 256), Shape(4, 256), Shape(8, 128))


def test_buckets():
    p = Profile(Shape(1, 16), Shape(8, 64), Shape(32, 200))
    assert p.seq_buckets() == [16, 32, 64, 128, 200]
    assert [p.bucket(n) for n in (1, 16, 17, 100, 129, 200)] == [16, 16, 32, 128, 200, 200]
    assert Profile.uniform(Shape(2, 8)).seq_buckets() == [8]


def test_batches_split_sort_and_pad():
    p = Profile(Shape(2, 8), Shape(3, 16), Shape(3, 32))
    ids = [[101] + [7] * n + [102] for n in (20, 1, 5, 3, 12, 2, 9)]
    batches = list(make_batches(ids, [p]))
    rows = np.concatenate([b.rows for b in batches])
    assert sorted(rows.tolist()) == list(range(7))
    for b in batches:
        assert len(b.rows) <= 3 and b.input_ids.shape[0] >= 2
        assert b.input_ids.shape[1] in p.seq_buckets() and p.allows(Shape(*b.input_ids.shape))
        for r, src in enumerate(b.rows):
            n = len(ids[src])
            assert b.input_ids[r, :n].tolist() == ids[src] and b.attention_mask[r].sum() == n


def test_one_row_padded_to_min_batch():
    (b,) = make_batches([[101, 5, 102]], [Profile(Shape(4, 8), Shape(4, 8), Shape(4, 8))])
    assert b.input_ids.shape == (4, 8) and b.rows.tolist() == [0]


def test_multiple_profiles_pick_smallest_fitting():
    short = Profile(Shape(1, 8), Shape(16, 32), Shape(64, 32))
    long = Profile(Shape(1, 33), Shape(4, 128), Shape(8, 256))
    ids = [[1] * 10] * 5 + [[1] * 100] * 3
    picked = {(b.profile, b.input_ids.shape[1]) for b in make_batches(ids, [long, short])}
    assert picked == {(1, 16), (0, 128)}


def test_batches_padded_to_their_longest_rounded_up():
    p = Profile(Shape(1, 12), Shape(8, 64), Shape(8, 100))
    ids = [[1] * n for n in (3, 13, 17, 120)]
    with pytest.warns(UserWarning, match="exceed the profile's max sequence 100"):
        batches = list(make_batches(ids, [p], max_batch=1, seq_multiple=8))
    # the profile's min, a multiple of 8, its max: no power-of-two bucket (32, 64, 128)
    assert [b.input_ids.shape[1] for b in batches] == [12, 16, 24, 100]
    assert [int(b.attention_mask.sum()) for b in batches] == [3, 13, 17, 100]


def test_truncation_warns_or_refuses():
    p = Profile(Shape(1, 4), Shape(1, 8), Shape(2, 8))
    ids = [list(range(1, 20)), [1, 2]]
    with pytest.warns(UserWarning, match="exceed the profile's max sequence 8"):
        batches = list(make_batches(ids, [p]))
    assert max(b.input_ids.shape[1] for b in batches) == 8
    with pytest.raises(SequenceTooLongError):
        list(make_batches(ids, [p], overflow="error"))


def test_padding_does_not_change_embeddings(tmp_path_factory):
    from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder

    path = exported(tmp_path_factory)["dir"] / "model.onnx"
    texts = ["Net revenue rose.", "What was the operating margin in 2019 and how did it change"
             " compared with 2018?", "Goodwill", "Cash flow from operations was strong."] * 2
    base = OnnxRuntimeEmbedder(path)
    ref = base.encode(texts)
    padded = OnnxRuntimeEmbedder(path, profile=Profile(Shape(5, 64), Shape(5, 64), Shape(5, 128)))
    split = OnnxRuntimeEmbedder(path, profile=Profile(Shape(1, 1), Shape(2, 16), Shape(3, 256)))
    np.testing.assert_allclose(padded.encode(texts), ref, atol=2e-5)
    np.testing.assert_allclose(split.encode(texts), ref, atol=2e-5)
    assert ref.dtype == np.float32 and ref.shape == (8, 384)
    np.testing.assert_allclose(np.linalg.norm(ref, axis=1), 1.0, atol=1e-5)
    assert (base.precision, base.dim) == ("fp32", 384) and base.model_id
    tight = OnnxRuntimeEmbedder(path, profile=Profile(Shape(1, 4), Shape(1, 8), Shape(4, 8)),
                                overflow="error")
    with pytest.raises(SequenceTooLongError):
        tight.encode(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert base.encode([]).shape == (0, 384)


def test_default_profile_is_valid():
    assert DEFAULT_PROFILE.allows(DEFAULT_PROFILE.opt)


class ShapeLog:
    """An ONNX Runtime session that notes the shape of every batch it runs."""

    def __init__(self, inner) -> None:
        self.inner, self.shapes = inner, []

    def run(self, outputs, feeds):
        self.shapes.append(feeds["input_ids"].shape)
        return self.inner.run(outputs, feeds)


def test_padding_to_the_longest_keeps_a_filings_vectors(tmp_path_factory):
    """A 10-K's chunks encoded as `finrag index` does (batches sorted by tokens, each padded
    to its longest text) get the vectors the power-of-two buckets gave (121-136 tokens
    padded to 256), from about half the tokens."""
    from pipeline.settings import Settings
    from retriever_trt.embedders.ort_embedder import SEQ_MULTIPLE, OnnxRuntimeEmbedder
    from retriever_trt.indexing.chunking import DEFAULT_OVERLAP
    from retriever_trt.indexing.encoding import encode_corpus
    from retriever_trt.indexing.ingest import ingest
    from retriever_trt.search.retriever import chunk_counter

    path = exported(tmp_path_factory)["dir"] / "model.onnx"
    now, bucketed = OnnxRuntimeEmbedder(path), OnnxRuntimeEmbedder(path)
    assert now.seq_multiple == SEQ_MULTIPLE
    bucketed.seq_multiple = None  # what every batch got before, as TensorRT's provider does
    store, _ = ingest(FILINGS / "aapl-10-k-2024-11-01.html",
                      Settings.model_fields["chunk_tokens"].default, DEFAULT_OVERLAP,
                      chunk_counter(now))
    texts = [store.index_text(i) for i in range(0, len(store), 8)]
    now.session, bucketed.session = ShapeLog(now.session), ShapeLog(bucketed.session)
    after = encode_corpus(now, texts, progress=False)
    before = bucketed.encode(texts)
    assert (before * after).sum(axis=1).min() >= 0.9999
    np.testing.assert_allclose(after, before, atol=2e-5)
    assert all(seq % SEQ_MULTIPLE == 0 for _, seq in now.session.shapes)
    assert max(seq for _, seq in bucketed.session.shapes) == 256
    ran = [sum(b * s for b, s in log.shapes) for log in (now.session, bucketed.session)]
    assert ran[0] < 0.6 * ran[1]
