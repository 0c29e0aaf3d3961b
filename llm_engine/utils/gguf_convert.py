"""Convert a llama.cpp GGUF file into a Hugging Face model folder our engine can load.

The engine only loads Hugging Face folders (config.json + safetensors + tokenizer.json), so a GGUF
is dequantized to full precision once, here, and cached under engines/models/.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

# Bump whenever the output changes, so resolve_model re-prepares stale copies.
CONVERTER_VERSION = 2
MANIFEST = "finrag_prepared.json"

# GGUF architecture -> (HF architecture class, model_type). Only these have been checked
# against transformers' logits; other archs need their own name/permutation rules.
ARCHES: dict[str, tuple[str, str]] = {
    "llama": ("LlamaForCausalLM", "llama"),
    "qwen2": ("Qwen2ForCausalLM", "qwen2"),
}
# llama.cpp permutes Q/K rows for its interleaved (GPT-J style) rope only for these;
# qwen2 uses NEOX rope in llama.cpp and is stored unpermuted.
_PERMUTED_ARCHES = {"llama"}

_BLOCK_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
# Tensors llama.cpp writes that have no HF parameter (rope_freqs is folded into config).
_SKIPPED = {"rope_freqs.weight"}


def read_metadata(reader: Any) -> dict[str, Any]:
    """All key/value fields of a GGUFReader as plain Python values."""
    meta: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        meta[key] = field.contents()
    return meta


def hf_name(gguf_name: str) -> str:
    """The Hugging Face Llama/Qwen2 parameter name for a GGUF tensor name."""
    parts = gguf_name.split(".")
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in _BLOCK_NAMES:
        return f"model.layers.{int(parts[1])}.{_BLOCK_NAMES[parts[2]]}.{parts[3]}"
    if len(parts) == 2 and parts[0] in _TOP_NAMES:
        return f"{_TOP_NAMES[parts[0]]}.{parts[1]}"
    raise ValueError(f"GGUF tensor {gguf_name!r} has no Hugging Face equivalent known to us")


def unpermute(w: torch.Tensor, n_head: int) -> torch.Tensor:
    """Inverse of convert_hf_to_gguf's LlamaModel.permute (rows: [h, 2, d/2] -> [h, d/2, 2])."""
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


def dequantize(tensor: Any) -> np.ndarray:
    """A GGUF tensor as fp32, in torch (row-major, reversed GGUF) shape."""
    import gguf

    qtype = tensor.tensor_type
    shape = tuple(int(d) for d in reversed(tensor.shape.tolist()))
    try:
        data = gguf.quants.dequantize(tensor.data, qtype)
    except NotImplementedError as e:
        raise ValueError(
            f"GGUF tensor {tensor.name!r} uses quant type {qtype.name}, which gguf "
            f"{getattr(gguf, '__version__', '')} cannot dequantize; use an F16/Q8_0/Q4_K file"
        ) from e
    # Copy: F32/F16 come back as read-only views of the memory-mapped file.
    return np.array(data, dtype=np.float32).reshape(shape)


def _arch_meta(meta: dict[str, Any], arch: str, key: str, default: Any = None) -> Any:
    return meta.get(f"{arch}.{key}", default)


def build_config(meta: dict[str, Any], has_output: bool, rope_freqs: np.ndarray | None,
                 dtype: torch.dtype) -> dict[str, Any]:
    """config.json contents from GGUF hyperparameters."""
    arch = meta["general.architecture"]
    hf_arch, model_type = ARCHES[arch]
    hidden = int(_arch_meta(meta, arch, "embedding_length"))
    n_head = int(_arch_meta(meta, arch, "attention.head_count"))
    n_kv = int(_arch_meta(meta, arch, "attention.head_count_kv", n_head))
    head_dim = int(_arch_meta(meta, arch, "attention.key_length", hidden // n_head))
    vocab = _arch_meta(meta, arch, "vocab_size") or len(meta["tokenizer.ggml.tokens"])
    dtype_name = str(dtype).removeprefix("torch.")
    cfg: dict[str, Any] = {
        "architectures": [hf_arch],
        "model_type": model_type,
        "vocab_size": int(vocab),
        "hidden_size": hidden,
        "intermediate_size": int(_arch_meta(meta, arch, "feed_forward_length")),
        "num_hidden_layers": int(_arch_meta(meta, arch, "block_count")),
        "num_attention_heads": n_head,
        "num_key_value_heads": n_kv,
        "head_dim": head_dim,
        "hidden_act": "silu",
        "rms_norm_eps": float(_arch_meta(meta, arch, "attention.layer_norm_rms_epsilon", 1e-6)),
        "rope_theta": float(_arch_meta(meta, arch, "rope.freq_base", 10000.0)),
        "max_position_embeddings": int(_arch_meta(meta, arch, "context_length", 2048)),
        "tie_word_embeddings": not has_output,
        "attention_bias": False,
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
        "pad_token_id": meta.get("tokenizer.ggml.padding_token_id"),
        "torch_dtype": dtype_name,
        "use_cache": True,
    }
    if arch == "qwen2":
        cfg["attention_bias"] = True  # q/k/v carry biases (Qwen2 ignores the flag)
    scaling = _rope_scaling(meta, arch, rope_freqs, head_dim, cfg["rope_theta"])
    if scaling is not None:
        cfg["rope_scaling"] = scaling
    return cfg


def _rope_scaling(meta: dict[str, Any], arch: str, rope_freqs: np.ndarray | None,
                  head_dim: int, theta: float) -> dict[str, Any] | None:
    kind = _arch_meta(meta, arch, "rope.scaling.type")
    if rope_freqs is not None:
        # Llama-3.1 style: llama.cpp bakes the per-frequency factors into rope_freqs and keeps no
        # low/high-frequency factors; rebuild them with Meta's published values and check.
        factor = float(rope_freqs.max())
        orig = int(_arch_meta(meta, arch, "rope.scaling.original_context_length", 8192))
        cand = {"rope_type": "llama3", "factor": factor, "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position_embeddings": orig}
        if not np.allclose(_llama3_factors(cand, head_dim, theta), rope_freqs, rtol=1e-3):
            raise ValueError("GGUF rope_freqs do not match Llama-3 rope scaling; unsupported model")
        return cand
    if kind in (None, "none"):
        return None
    scaling: dict[str, Any] = {"rope_type": kind,
                               "factor": float(_arch_meta(meta, arch, "rope.scaling.factor", 1.0))}
    orig = _arch_meta(meta, arch, "rope.scaling.original_context_length")
    if orig is not None:
        scaling["original_max_position_embeddings"] = int(orig)
    return scaling


def _llama3_factors(p: dict[str, Any], head_dim: int, theta: float) -> np.ndarray:
    """llama.cpp's rope_freqs for Llama-3 scaling (per frequency divisor)."""
    freqs = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    low_wl = p["original_max_position_embeddings"] / p["low_freq_factor"]
    high_wl = p["original_max_position_embeddings"] / p["high_freq_factor"]
    out = []
    for f in freqs:
        wl = 2 * np.pi / f
        if wl < high_wl:
            out.append(1.0)
        elif wl > low_wl:
            out.append(p["factor"])
        else:
            s = (p["original_max_position_embeddings"] / wl - p["low_freq_factor"]) / (
                p["high_freq_factor"] - p["low_freq_factor"])
            out.append(1.0 / ((1 - s) / p["factor"] + s))
    return np.asarray(out)


def iter_converted(reader: Any, meta: dict[str, Any], dtype: torch.dtype,
                   progress: bool) -> Iterator[tuple[str, torch.Tensor]]:
    """(HF name, tensor) for every GGUF tensor, dequantized and un-permuted."""
    from tqdm import tqdm

    arch = meta["general.architecture"]
    n_head = int(_arch_meta(meta, arch, "attention.head_count"))
    n_kv = int(_arch_meta(meta, arch, "attention.head_count_kv", n_head))
    for t in tqdm(reader.tensors, desc="dequantize", unit="tensor", disable=not progress):
        if t.name in _SKIPPED:
            continue
        w = torch.from_numpy(dequantize(t))
        if arch in _PERMUTED_ARCHES and t.name.endswith(("attn_q.weight", "attn_q.bias")):
            w = unpermute(w, n_head)
        elif arch in _PERMUTED_ARCHES and t.name.endswith(("attn_k.weight", "attn_k.bias")):
            w = unpermute(w, n_kv)
        yield hf_name(t.name), w.to(dtype).contiguous()


def source_fingerprint(gguf_path: Path) -> dict[str, Any]:
    """What identifies a source file cheaply (no hashing of hundreds of MB)."""
    st = gguf_path.stat()
    return {"source": str(gguf_path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "converter_version": CONVERTER_VERSION}


def convert_gguf(gguf_path: Path, out_dir: Path, dtype: torch.dtype = torch.float32,
                 progress: bool = True) -> Path:
    """Write a Hugging Face folder for `gguf_path` at `out_dir`, atomically; return out_dir."""
    import gguf
    from safetensors.torch import save_file

    from llm_engine.utils.gguf_tokenizer import build_tokenizer, special_token, stop_token_ids

    gguf_path, out_dir = Path(gguf_path), Path(out_dir)
    if not gguf_path.is_file():
        raise FileNotFoundError(f"GGUF file not found: {gguf_path}")
    reader = gguf.GGUFReader(gguf_path)
    meta = read_metadata(reader)
    arch = meta.get("general.architecture")
    if arch not in ARCHES:
        raise ValueError(f"{gguf_path}: GGUF architecture {arch!r} is not supported "
                         f"(supported: {', '.join(ARCHES)})")
    names = {t.name for t in reader.tensors}
    for name in names - _SKIPPED:
        hf_name(name)  # an unknown tensor fails now, not after minutes of dequantizing
    rope_freqs = next(
        (dequantize(t) for t in reader.tensors if t.name == "rope_freqs.weight"), None)
    config = build_config(meta, "output.weight" in names, rope_freqs, dtype)
    tokenizer = build_tokenizer(meta)  # before the slow part, so a bad vocab fails fast

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(out_dir)
    # Temp dir beside out_dir (same filesystem) so the final rename is atomic.
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide the model from other users
        tensors = dict(iter_converted(reader, meta, dtype, progress))
        if config["tie_word_embeddings"]:
            tensors.pop("lm_head.weight", None)
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        os.chmod(tmp / "model.safetensors", 0o644)
        del tensors
        tokenizer.save(str(tmp / "tokenizer.json"))
        _write_json(tmp / "config.json", config)
        _write_json(tmp / "tokenizer_config.json", _tokenizer_config(meta, special_token))
        stops = stop_token_ids(meta)
        _write_json(tmp / "generation_config.json", {
            "bos_token_id": config["bos_token_id"],
            "eos_token_id": stops if len(stops) > 1 else config["eos_token_id"],
            "pad_token_id": config["pad_token_id"],
        })
        # Manifest last: its presence means the folder is complete.
        manifest = {**source_fingerprint(gguf_path), "dtype": config["torch_dtype"]}
        _write_json(tmp / MANIFEST, manifest)
        _swap_into_place(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def _tokenizer_config(meta: dict[str, Any], special_token: Any) -> dict[str, Any]:
    from llm_engine.utils.gguf_tokenizer import add_bos_token

    arch = meta["general.architecture"]
    cfg: dict[str, Any] = {
        # The generic fast class loads tokenizer.json as written; model-specific classes in
        # transformers 5 may rebuild the pre-tokenizer from their own defaults.
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_bos_token": add_bos_token(meta),
        "add_eos_token": bool(meta.get("tokenizer.ggml.add_eos_token", False)),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(_arch_meta(meta, arch, "context_length", 2048)),
    }
    for key, name in (("bos", "bos_token"), ("eos", "eos_token"), ("padding", "pad_token"),
                      ("unknown", "unk_token")):
        text = special_token(meta, key)
        if text is not None:
            cfg[name] = text
    # Listed so transformers' all_special_ids (and ours) include <|im_start|> etc., as in the
    # original model's config; CONTROL tokens are exactly the ones the tokenizer treats as special.
    tokens, types = meta["tokenizer.ggml.tokens"], meta.get("tokenizer.ggml.token_type") or []
    extra = [t for t, ty in zip(tokens, types, strict=True) if ty == 3 and t not in cfg.values()]
    if extra:
        cfg["additional_special_tokens"] = extra
    if "tokenizer.chat_template" in meta:
        cfg["chat_template"] = meta["tokenizer.chat_template"]
    return cfg


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# A temp folder untouched this long belongs to a killed run, not to one still converting.
_STALE_SECONDS = 6 * 3600


def sweep_leftovers(out_dir: Path, older_than: float = _STALE_SECONDS) -> None:
    """Delete temp folders that killed conversions left beside out_dir (a caller that holds
    the folder's conversion lock knows they all are leftovers: `older_than=0`)."""
    now = time.time()
    for pattern in (f".{out_dir.name}.tmp-*", f".{out_dir.name}.old-*"):
        for path in out_dir.parent.glob(pattern):
            try:
                if now - path.stat().st_mtime >= older_than:
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                pass  # another process removed it first


def _swap_into_place(tmp: Path, out_dir: Path) -> None:
    """Rename tmp to out_dir; an old out_dir is moved aside first, then deleted."""
    old = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        os.rename(out_dir, old / "x")
    os.rename(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
