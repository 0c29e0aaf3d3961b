"""The CPU encoder's two speed settings (issue 49): its ONNX Runtime session runs without the
SkipLayerNormalization rewrite (`ort_embedder.CPU_DISABLED_OPTIMIZERS`), and corpus encoding
on one-thread sessions goes in batches of `parallel_encoder.ONE_CORE_BATCH`. Both must leave
the vectors as they were: the real default encoder, real ONNX Runtime sessions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from retriever_trt.embedders.artifacts import onnx_session
from retriever_trt.embedders.embedder import Embedder
from retriever_trt.embedders.loader import FP32_ENCODER_FILE, default_embedder, load_embedder
from retriever_trt.embedders.ort_embedder import CPU_DISABLED_OPTIMIZERS, OnnxRuntimeEmbedder
from retriever_trt.indexing.encoding import DEFAULT_BATCH, encode_corpus
from retriever_trt.indexing.parallel_encoder import ONE_CORE_BATCH, EncodeThreads, ParallelEncoder
from retriever_trt.indexing.streaming_encoder import StreamingEncoder

FUSED_OP = "SkipLayerNormalization"
# The same graph with one rewrite less: float sums in another order, the last bits differ.
SAME_VECTOR_ATOL = 1e-4
# INT8 dynamic against FP32 on these sentences: the lowest cosine seen was 0.98 on 640
# filing chunks; a broken graph (a wrong rewrite, a dropped residual) falls far below.
MIN_COSINE_VS_FP32 = 0.97
TEXTS = [f"Segment {i} operating income was ${i * 41 + 7} million in fiscal {2016 + i % 8}, "
         f"{'up' if i % 3 else 'down'} {i % 11}% on higher {('volume', 'prices', 'mix')[i % 3]}"
         f"{' and lower restructuring charges' * (i % 4)}." for i in range(48)]


class Wrapped(Embedder):
    """A runtime other than ONNX Runtime on CPU, as ParallelEncoder sees it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.precision, self.dim = inner.model_id, inner.precision, inner.dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.encode(texts)


@pytest.fixture(scope="module")
def int8(engines_dir: Path) -> OnnxRuntimeEmbedder:
    embedder = default_embedder(engines_dir, progress=False)
    assert isinstance(embedder, OnnxRuntimeEmbedder)
    return embedder


def optimized_ops(path: Path, disabled: Sequence[str], out: Path) -> set[str]:
    """The op types of `path` after ONNX Runtime's CPU graph rewrites, less `disabled`."""
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.optimized_model_filepath = str(out)
    onnx_session(path, opts, ["CPUExecutionProvider"], disabled)
    return {node.op_type for node in onnx.load(str(out)).graph.node}


def test_cpu_session_skips_the_fused_layer_norm_and_embeds_alike(int8, tmp_path) -> None:
    assert int8.disabled_optimizers == CPU_DISABLED_OPTIMIZERS
    # ONNX Runtime ignores a name it does not know: the rewrite must exist and be switched off.
    assert FUSED_OP in optimized_ops(int8.path, (), tmp_path / "all.onnx")
    assert FUSED_OP not in optimized_ops(int8.path, int8.disabled_optimizers,
                                         tmp_path / "ours.onnx")
    fused = ort.InferenceSession(str(int8.path), providers=["CPUExecutionProvider"])
    ids = np.array([int8.tokenizer.encode(TEXTS[0]).ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    assert np.allclose(int8.session.run(["embeddings"], feed)[0],
                       fused.run(["embeddings"], feed)[0], atol=SAME_VECTOR_ATOL)
    fp32 = load_embedder(int8.path.parent / FP32_ENCODER_FILE).encode(TEXTS)
    assert (int8.encode(TEXTS) * fp32).sum(axis=1).min() >= MIN_COSINE_VS_FP32


def test_one_thread_cpu_sessions_encode_in_small_batches(int8) -> None:
    encoder = ParallelEncoder(int8, EncodeThreads(2))
    other = ParallelEncoder(Wrapped(int8), EncodeThreads(2))
    kept = ParallelEncoder(OnnxRuntimeEmbedder(int8.path, disabled_optimizers=()),
                           EncodeThreads(2))
    try:
        # The one-thread copies run the graph as the embedder they copy does.
        assert encoder.session.disabled_optimizers == CPU_DISABLED_OPTIMIZERS
        assert kept.session.disabled_optimizers == ()
        assert encoder.preferred_batch(DEFAULT_BATCH) == ONE_CORE_BATCH < DEFAULT_BATCH
        assert other.preferred_batch(DEFAULT_BATCH) == DEFAULT_BATCH  # a GPU's: large batches
    finally:
        for each in (encoder, other, kept):
            each.close()
    with StreamingEncoder(int8, window=len(TEXTS), progress=False) as streaming:
        assert streaming.batch_size == ONE_CORE_BATCH
        streaming.add(TEXTS)
        small = streaming.finish()
    # Dynamic INT8 scales activations per batch, so a text's vector moves with its batch
    # (cosine ~0.99 between small batches and 64): held to FP32, as the batches of 64 are.
    fp32 = load_embedder(int8.path.parent / FP32_ENCODER_FILE).encode(TEXTS)
    large = encode_corpus(int8, TEXTS, DEFAULT_BATCH, progress=False)
    assert (large * fp32).sum(axis=1).min() >= MIN_COSINE_VS_FP32
    assert (small * fp32).sum(axis=1).min() >= MIN_COSINE_VS_FP32


def test_streaming_encoder_refuses_a_batch_below_one(int8) -> None:
    with pytest.raises(ValueError, match="batch_size and window must be >= 1, got 0"):
        StreamingEncoder(int8, batch_size=0, progress=False)
