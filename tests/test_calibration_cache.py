"""The int8 calibration cache (engine/calibration_cache.py): a start that loads it quantizes
exactly as one that calibrates, and a corrupt or mismatched file is ignored and rebuilt."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from llm_engine import LLM, SamplingParams
from llm_engine.engine.calibration_cache import (
    CACHE_DIR,
    KEY_METADATA,
    calibration_key,
    load_maxima,
    save_maxima,
)
from llm_engine.utils.gguf_convert import convert_gguf

# The tiny GGUF's context (conftest.write_tiny_gguf): 4 calibration windows of 256 tokens.
ENGINE_ARGS = {"quantization": "int8", "device": "cpu", "max_model_len": 256,
               "kv_cache_memory": 16 << 20}
PROMPTS = [[5, 70, 100, 200, 260, 3, 9, 44], [30, 12, 12, 7]]
MAX_NEW = 12


@pytest.fixture
def model_dir(tmp_path: Path, write_tiny_gguf) -> Path:
    """A tiny llama with a tokenizer (calibration tokenizes its text), prepared afresh."""
    gguf_path, _ = write_tiny_gguf(tmp_path / "tiny.gguf", "llama", quant="F32")
    return convert_gguf(gguf_path, tmp_path / "model", progress=False)


def _cache_files(model_dir: Path) -> list[Path]:
    return sorted((model_dir / CACHE_DIR).glob("*.safetensors"))


def _quantized(llm: LLM) -> dict[str, tuple[torch.Tensor, torch.Tensor | None]]:
    """Each int8 layer's weight scales and smoothing: what the calibration decides."""
    model = llm.llm_engine.executor.driver.model
    return {name: (m.int8.scales, m.int8.inv_smooth)
            for name, m in model.named_modules() if getattr(m, "int8", None) is not None}


def _greedy(llm: LLM) -> list[list[int]]:
    params = SamplingParams(temperature=0.0, max_tokens=MAX_NEW, ignore_eos=True)
    outs = llm.generate([{"prompt_token_ids": p} for p in PROMPTS], params, use_tqdm=False)
    return [list(o.outputs[0].token_ids) for o in outs]


def _assert_same_quantization(a: LLM, b: LLM) -> None:
    qa, qb = _quantized(a), _quantized(b)
    assert qa.keys() == qb.keys() and qa
    for name, (scales, smooth) in qa.items():
        assert torch.equal(scales, qb[name][0]), name
        assert smooth is not None and torch.equal(smooth, qb[name][1]), name
    assert _greedy(a) == _greedy(b)


def test_a_cached_calibration_quantizes_exactly_as_a_fresh_one(model_dir: Path) -> None:
    fresh = LLM(str(model_dir), **ENGINE_ARGS)
    [path] = _cache_files(model_dir)
    written = path.stat().st_mtime_ns
    cached = LLM(str(model_dir), **ENGINE_ARGS)
    assert path.stat().st_mtime_ns == written  # loaded, not calibrated and written again
    _assert_same_quantization(fresh, cached)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "another key", "other layers"])
def test_a_corrupt_or_mismatched_cache_is_ignored_and_rebuilt(
        model_dir: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    fresh = LLM(str(model_dir), **ENGINE_ARGS)
    [path] = _cache_files(model_dir)
    good = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00" * 64)
    else:
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            key = f.metadata()[KEY_METADATA]
            maxima = {name: f.get_tensor(name) for name in f.keys()}
        if damage == "another key":
            key = "0" * len(key)
        else:
            maxima.pop(sorted(maxima)[0])
        save_maxima(path, key, maxima)
    with caplog.at_level(logging.WARNING, logger="llm_engine.engine.calibration_cache"):
        rebuilt = LLM(str(model_dir), **ENGINE_ARGS)
    assert f"int8 calibration cache {path} ignored" in caplog.text
    assert path.read_bytes() == good  # calibrated again and written back whole
    _assert_same_quantization(fresh, rebuilt)


def test_another_kv_cache_dtype_or_model_config_calibrates_again(model_dir: Path) -> None:
    LLM(str(model_dir), **ENGINE_ARGS)
    # A bf16 cache rounds the K/V the calibration's prefill reads back.
    LLM(str(model_dir), kv_cache_dtype="bfloat16", **ENGINE_ARGS)
    assert len(_cache_files(model_dir)) == 2
    config = model_dir / "config.json"
    fields = json.loads(config.read_text())
    fields["rms_norm_eps"] *= 10
    config.write_text(json.dumps(fields))
    LLM(str(model_dir), **ENGINE_ARGS)
    assert len(_cache_files(model_dir)) == 3


def test_the_key_follows_the_weights_the_windows_and_the_kernels(model_dir: Path) -> None:
    windows = [[1, 2, 3], [4, 5]]
    context = {"backends": "torch", "dtype": "torch.float32", "device": "cpu", "rank": "0/1"}
    key = calibration_key(model_dir, windows, context)
    assert calibration_key(model_dir, [[1, 2, 3], [4, 5]], dict(context)) == key
    assert calibration_key(model_dir, [[1, 2, 3], [4, 6]], context) != key
    assert calibration_key(model_dir, windows, {**context, "backends": "cpu kernels"}) != key
    assert calibration_key(model_dir, windows, {**context, "rank": "1/2"}) != key
    weights = model_dir / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # one bit of one weight
    weights.write_bytes(bytes(data))
    assert calibration_key(model_dir, windows, context) != key


def test_an_unwritable_folder_only_costs_the_cache(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would go")
    maxima = {"layer": torch.ones(4)}
    with caplog.at_level(logging.WARNING, logger="llm_engine.engine.calibration_cache"):
        save_maxima(blocker / "key.safetensors", "key", maxima)
    assert "int8 calibration not cached" in caplog.text
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-folder"]
    layers = {"layer": torch.nn.Linear(4, 2)}
    assert load_maxima(blocker / "key.safetensors", "key", layers) is None
