"""ONNX Runtime embedder: CPU, CUDA or TensorRT execution provider."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from retriever_trt.embedders.artifacts import guess_precision, onnx_session, session_metadata, tokenizer_for
from retriever_trt.embedders.embedder import Embedder
from retriever_trt.embedders.profiles import DEFAULT_PROFILE, Profile, clamp_profile, make_batches

PROVIDER_ALIASES = {
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "tensorrt": "TensorrtExecutionProvider",
}

# The CPU and CUDA providers run any shape, so a batch is padded only to its longest text,
# rounded up to this multiple: a few dozen shapes at most, as fast on a 10-K as exact
# lengths. The profile's power-of-two buckets padded its 121-136-token chunks to 256, twice
# the encoder's work (benchmarks/index_speed.py).
SEQ_MULTIPLE = 8

# ONNX Runtime's graph rewrites that make the CPU provider slower on this encoder. Its CPU
# SkipLayerNormalization kernel (the residual Add and LayerNormalization fused) took 16% of
# the INT8 graph's time on one thread, ~7x the plain LayerNormalization kernel it replaces
# per call: unfused, 1.14x the chunks a CPU second (benchmarks/RESULTS.md, issue 49). GPU
# providers keep every rewrite.
CPU_DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)


def resolve_providers(providers: Sequence[str | tuple] | str | None) -> list:
    """Names or aliases ('cpu', 'cuda', 'tensorrt'); CPU is always the last fallback."""
    if providers is None:
        return ["CPUExecutionProvider"]
    if isinstance(providers, str):
        providers = [providers]
    out = [PROVIDER_ALIASES.get(p, p) if isinstance(p, str) else p for p in providers]
    if "CPUExecutionProvider" not in out:
        out.append("CPUExecutionProvider")
    return out


class OnnxRuntimeEmbedder(Embedder):
    """Runs an onnx_export graph (ids, mask → pooled unit vectors) with ONNX Runtime."""

    def __init__(
        self,
        onnx_path: str | Path,
        providers: Sequence[str | tuple] | str | None = None,
        profile: Profile | None = None,
        overflow: str = "truncate",
        intra_op_threads: int = 0,
        disabled_optimizers: Sequence[str] | None = None,
    ) -> None:
        """`disabled_optimizers`: ONNX Runtime graph rewrites left out (None: those of
        CPU_DISABLED_OPTIMIZERS on the CPU provider alone, none on a GPU's)."""
        import onnxruntime as ort

        self.path = Path(onnx_path)
        if not self.path.is_file():
            raise FileNotFoundError(f"ONNX file not found: {self.path}")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = intra_op_threads
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        resolved = resolve_providers(providers)
        on_cpu = resolved == ["CPUExecutionProvider"]
        if disabled_optimizers is None:
            disabled_optimizers = CPU_DISABLED_OPTIMIZERS if on_cpu else ()
        self.disabled_optimizers = tuple(disabled_optimizers)
        self.session = onnx_session(self.path, opts, resolved, self.disabled_optimizers)
        meta = session_metadata(self.session)
        self.tokenizer, max_len, _ = tokenizer_for(self.path, meta)
        self.model_id = meta.get("model_id", self.path.stem.split(".")[0])
        self.precision = meta.get("precision", guess_precision(self.path))
        base = profile or DEFAULT_PROFILE
        # The encoder's position table bounds the sequence whatever the profile says.
        self.profile = clamp_profile(base, max_len)
        # The tokenizer truncates silently at the model's own limit (as TorchEmbedder
        # does); make_batches warns only when a profile is tighter than that.
        self.overflow = overflow
        # TensorRT's provider builds an engine for each new shape: it keeps to the buckets.
        self.seq_multiple = (None if "TensorrtExecutionProvider" in self.session.get_providers()
                             else SEQ_MULTIPLE)
        self.dim = int(meta.get("dim") or self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_ids(self.token_ids(texts))

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, [CLS] and [SEP] included, untruncated (`encode_ids`
        truncates to the profile)."""
        return [e.ids for e in self.tokenizer.encode_batch(list(texts))] if len(texts) else []

    def encode_ids(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """The vectors of texts tokenized by `token_ids`: a caller that sorted texts by their
        tokens encodes them without tokenizing them again."""
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        if not len(ids):
            return out
        for batch in make_batches(ids, [self.profile], self.overflow,
                                  seq_multiple=self.seq_multiple):
            emb = self.session.run(["embeddings"], {"input_ids": batch.input_ids,
                                                    "attention_mask": batch.attention_mask})[0]
            out[batch.rows] = emb[: len(batch.rows)]
        return out
