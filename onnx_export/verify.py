"""Compare an exported variant (FP16, INT8) with the FP32 graph on a sample set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onnx_export.export import CHECK_SENTENCES, OUTPUT_NAME
from onnx_export.quality import mean_cosine, nn_agreement


class PrecisionCheckError(RuntimeError):
    """A reduced-precision file strays too far from FP32."""


@dataclass
class Comparison:
    path: Path
    n: int
    mean_cosine: float
    min_cosine: float
    nn_agreement: float

    def __str__(self) -> str:
        return (f"cosine to FP32 mean {self.mean_cosine:.5f} min {self.min_cosine:.5f}, "
                f"NN agreement {self.nn_agreement:.3f} on {self.n} texts")

    def require(self, min_cosine: float) -> None:
        if self.min_cosine < min_cosine:
            raise PrecisionCheckError(f"{self.path.name}: min cosine to FP32 {self.min_cosine:.5f}"
                                      f" < {min_cosine} ({self})")


def encode_file(path: Path, model_dir: Path, texts: list[str], batch: int = 32) -> np.ndarray:
    """Embeddings from an ONNX file on ORT CPU, length-sorted batches (as a runtime would)."""
    import onnxruntime as ort

    from onnx_export.encoder import load_encoder_tokenizer, tokenize_batch

    tok, _ = load_encoder_tokenizer(Path(model_dir))
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = None
    for i in range(0, len(texts), batch):
        rows = order[i : i + batch]
        ids, mask = tokenize_batch(tok, [texts[j] for j in rows])
        emb = sess.run([OUTPUT_NAME], {"input_ids": ids, "attention_mask": mask})[0]
        if out is None:
            out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
        out[rows] = emb
    return out


def compare_files(ref_path: Path, path: Path, model_dir: Path,
                  texts: list[str] | None = None) -> Comparison:
    texts = texts or CHECK_SENTENCES
    ref = encode_file(ref_path, model_dir, texts)
    got = encode_file(path, model_dir, texts)
    cos = (ref * got).sum(-1)
    return Comparison(Path(path), len(texts), mean_cosine(ref, got), float(cos.min()),
                      nn_agreement(ref, got))
