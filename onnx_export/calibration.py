"""Calibration sample sets (text, JSONL, TAT-QA JSON), their data reader and cache file.

The cache is ONNX Runtime's own `TensorsData` JSON (per-tensor ranges), plus a `finrag`
key recording what produced it (model digest, method, sample-set digest), so a later
build reuses it only when all three match.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod

from onnx_export.atomic import write_text

METHODS = {
    "minmax": CalibrationMethod.MinMax,
    "entropy": CalibrationMethod.Entropy,
    "percentile": CalibrationMethod.Percentile,
}


class CalibDataError(ValueError):
    """A calibration file is missing, unreadable or holds no samples."""


def read_samples(path: str | Path, limit: int | None = None) -> list[str]:
    """Texts from a sample set: `.json` TAT-QA, `.jsonl` {"text": ...}, else one per line."""
    path = Path(path)
    if not path.is_file():
        raise CalibDataError(f"calibration data file not found: {path}")
    raw = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".json":
            texts = _tatqa_texts(json.loads(raw))
        elif path.suffix == ".jsonl":
            texts = [str(json.loads(line)["text"]) for line in raw.splitlines() if line.strip()]
        else:
            texts = [line.strip() for line in raw.splitlines() if line.strip()]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CalibDataError(f"cannot read calibration data {path}: {exc!r}") from None
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise CalibDataError(f"calibration data {path} holds no samples")
    return texts[:limit] if limit else texts


def _tatqa_texts(data: object) -> list[str]:
    """Paragraph texts then questions, interleaved per context so a prefix is a mix."""
    if not isinstance(data, list):
        raise TypeError("TAT-QA JSON must be a list of contexts")
    texts: list[str] = []
    for ctx in data:
        texts += [p["text"] for p in ctx.get("paragraphs", [])]
        texts += [q["question"] for q in ctx.get("questions", [])]
    return texts


def samples_digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def file_digest(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def calib_length(lengths: Sequence[int], max_len: int, multiple: int = 16) -> int:
    """One sequence length for every calibration batch.

    Histogram calibrators (entropy, percentile) stack every batch's tensors, so all
    batches must share a shape. The 95th-percentile length rounded up keeps padding
    (whose activations also enter the statistics) modest while covering most texts.
    """
    p95 = int(np.percentile(np.asarray(lengths), 95)) if lengths else multiple
    return int(min(max_len, -(-p95 // multiple) * multiple))


class TextCalibrationReader(CalibrationDataReader):
    """Feeds fixed-shape (batch, length) int64 batches; reports progress through tqdm."""

    def __init__(self, texts: Sequence[str], model_dir: Path, batch_size: int = 16,
                 progress: bool = True) -> None:
        from onnx_export.encoder import load_encoder_tokenizer, tokenize_batch

        tokenizer, max_len = load_encoder_tokenizer(Path(model_dir))
        lengths = [len(e.ids) for e in tokenizer.encode_batch(list(texts))]
        self.seq_len = calib_length(lengths, max_len)
        # Drop the ragged tail: every batch has the same shape (see calib_length).
        n = max(batch_size, len(texts) - len(texts) % batch_size)
        texts = list(texts)[:n] if len(texts) >= batch_size else list(texts)
        self.batch_size = min(batch_size, len(texts))
        self.batches = [
            tokenize_batch(tokenizer, texts[i : i + self.batch_size], pad_to=self.seq_len)
            for i in range(0, len(texts) - self.batch_size + 1, self.batch_size)
        ]
        self.num_samples = len(self.batches) * self.batch_size
        self.progress = progress
        self._it: Iterator[tuple[np.ndarray, np.ndarray]] | None = None

    def __len__(self) -> int:
        return len(self.batches)

    def _iterate(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        from tqdm import tqdm

        yield from tqdm(self.batches, desc="calibrating", unit="batch",
                        disable=not self.progress, leave=False)

    def get_next(self) -> dict[str, np.ndarray] | None:
        if self._it is None:
            self._it = self._iterate()
        nxt = next(self._it, None)
        if nxt is None:
            return None
        return {"input_ids": nxt[0], "attention_mask": nxt[1]}

    def rewind(self) -> None:
        self._it = None


def cache_meta(model_digest: str, method: str, data_digest: str, recipe: str) -> dict:
    return {"model": model_digest, "method": method, "samples": data_digest, "recipe": recipe}


def cache_matches(cache_path: Path, meta: dict) -> bool:
    """True when `cache_path` holds ranges produced from the same model, method and data."""
    try:
        stored = json.loads(Path(cache_path).read_text()).get("finrag")
    except (OSError, json.JSONDecodeError, AttributeError):
        return False
    return stored == meta


def stamp_cache(cache_path: Path, meta: dict, info: dict) -> None:
    """Add finrag's provenance (compared on reuse) and info (reported) to ORT's cache."""
    payload = json.loads(Path(cache_path).read_text())
    payload["finrag"] = meta
    payload["finrag_info"] = info
    write_text(cache_path, json.dumps(payload))


def cache_info(cache_path: Path) -> dict:
    try:
        return dict(json.loads(Path(cache_path).read_text()).get("finrag_info", {}))
    except (OSError, json.JSONDecodeError, AttributeError):
        return {}


def load_ranges(cache_path: Path) -> dict[str, tuple[float, float]]:
    """{tensor: (lowest, highest)} from a cache, for the report."""
    from onnxruntime.quantization import load_tensors_data

    data = load_tensors_data(cache_path)
    out = {}
    for name, td in data.data.items():
        lo, hi = np.asarray(td.range_value[0]), np.asarray(td.range_value[1])
        out[name] = (float(lo.min()), float(hi.max()))
    return out
