"""Shared fixtures: the default model prepared once per session, the session servers that
modules of the same settings share, tiny GGUF writers, the TAT-QA dev file (the demo corpus
when absent) and one session embedder; the `e2e` marker for modules that start the real
server."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from live_server import dev_contexts, running_app
from paths import TATQA
from prereqs import ENCODER, LLM, missing

from llm_engine.utils.gguf_tokenizer import CONTROL, USER_DEFINED

SUBSET_CONTEXTS = 30
# What a module imports from live_server to start the real server in process, and the
# session servers below.
SERVER_STARTERS = ("running_app", "running_server")
SESSION_SERVERS = ("ask_server", "api_server")
# The computed-answer and response_format modules ask about the first 6 dev contexts, with
# every question sent on to retrieval (routing is tested, and tuned, elsewhere).
ASK_CONTEXTS = 6
ALWAYS_RETRIEVE = [{"name": "finance_question", "description": "finance question"},
                   {"name": "other_question", "description": "any other question"}]
# A bug in the answer rules raises in the tests (strict_rules) rather than becoming a silent
# "no number": in the servers live_server starts, and in the `finrag serve` processes tests
# start, which inherit this variable.
os.environ["FINRAG_STRICT_RULES"] = "true"
# An engines folder that several pytest runs share (the Makefile's `test` sets it for its
# two runs, and removes the folder after): the model prepared, the encoder exported and the
# int8 calibration made by the first run are what the next one loads, instead of building
# them all again (about 25 s on 2 cores before the cluster tests' first start). Unset, each
# run builds its own (once for all its xdist workers).
SHARED_ENGINES_ENV = "TESTS_ENGINES_DIR"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `e2e` every test that uses a session server, and every test of a module that
    starts the real server through live_server, so that none lands in `make test-fast`
    unmarked. Modules that start `finrag serve` as a process mark themselves."""
    for item in items:
        module = getattr(item, "module", None)
        starts = module is not None and any(hasattr(module, n) for n in SERVER_STARTERS)
        if starts or set(SESSION_SERVERS) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def ask_server(prepared_default: Path, engines_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """One server for test_ask_computed.py and test_ask_response_format.py: (base URL,
    app), answers of up to 48 tokens (room for a small JSON document)."""
    with running_app(dev_contexts(ASK_CONTEXTS), engines_dir, tmp_path_factory.mktemp("ask"),
                     max_tokens=48, intent_labels=ALWAYS_RETRIEVE) as served:
        yield served


@pytest.fixture(scope="session")
def api_server(prepared_default: Path, engines_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """One server for test_openai_api.py and test_request_isolation.py: (base URL, app),
    2 contexts, answers of up to 16 tokens."""
    with running_app(dev_contexts(2), engines_dir, tmp_path_factory.mktemp("api"),
                     max_tokens=16) as served:
        yield served


@pytest.fixture(scope="session")
def tatqa_path() -> Path:
    """The bundled demo corpus: TAT-QA's first 60 dev contexts (tests/paths.py)."""
    return TATQA


@pytest.fixture(scope="session")
def tatqa_subset(tatqa_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first SUBSET_CONTEXTS contexts, small enough to encode on 2 CPU cores."""
    data = json.loads(tatqa_path.read_text())[:SUBSET_CONTEXTS]
    path = tmp_path_factory.mktemp("tatqa") / "subset.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="session")
def embedder():
    try:
        from retriever_trt.embedders.torch_embedder import TorchEmbedder

        return TorchEmbedder()
    except (FileNotFoundError, ImportError) as exc:
        missing(f"the torch reference embedder cannot load ({exc})", ENCODER)


@pytest.fixture(scope="session")
def default_gguf() -> Path:
    from llm_engine.utils.model_path import default_gguf as find

    try:
        return find()
    except FileNotFoundError as e:
        missing(str(e), LLM)


@pytest.fixture(scope="session")
def engines_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's engines/; under pytest-xdist one for all workers of the run (the
    folder above each worker's own), so the prepared model (model preparation locks its
    folder) and the encoder's graphs (exported here, under a lock, before any worker reads
    them) are built once a run, not once a worker. With TESTS_ENGINES_DIR set, that folder,
    shared by runs: `make test`'s second run (the Ray cluster tests, alone) finds what its
    first built."""
    shared_by_runs = os.environ.get(SHARED_ENGINES_ENV)
    if not shared_by_runs and not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.mktemp("engines")
    from llm_engine.utils.file_lock import file_lock
    from retriever_trt.embedders.loader import default_embedder

    if shared_by_runs:
        shared = Path(shared_by_runs)
    else:
        shared = tmp_path_factory.getbasetemp().parent / "engines"
    shared.mkdir(parents=True, exist_ok=True)
    with file_lock(shared / ".encoder.lock"):
        default_embedder(shared, progress=False)
    return shared


@pytest.fixture(scope="session")
def fp32_greedy(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., list[list[int]]]:
    """greedy(llm, prompts, max_new): each prompt's greedy tokens (max_new of them, EOS
    ignored) from `llm`, an engine with fp32 weights and an fp32 KV cache, computed once a
    run for the same model, prompts and length. test_int8_weights.py and
    test_kv_cache_dtype.py each compare against the same fp32 text (6 prompts, 32 tokens:
    about 5 s on one core); under pytest-xdist the first worker to ask computes it, under
    a lock, in the folder above the workers' own, and the other reads it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / "fp32-greedy"
        folder.mkdir(exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("fp32-greedy")

    def greedy(llm: Any, prompts: list[list[int]], max_new: int) -> list[list[int]]:
        import hashlib

        import torch

        from llm_engine import SamplingParams
        from llm_engine.utils.file_lock import file_lock

        config = llm.llm_engine.config
        assert config.quantization_method is None, config.quantization_method
        assert config.torch_dtype == config.torch_kv_cache_dtype == torch.float32
        key = hashlib.sha256(json.dumps([str(llm.llm_engine.model_dir), prompts, max_new])
                             .encode()).hexdigest()[:16]
        path = folder / f"{key}.json"
        with file_lock(folder / f"{key}.lock"):
            if not path.is_file():
                params = SamplingParams(temperature=0.0, max_tokens=max_new, ignore_eos=True)
                outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params,
                                    use_tqdm=False)
                partial = path.with_suffix(".partial")
                partial.write_text(json.dumps([o.outputs[0].token_ids for o in outs]))
                partial.replace(path)
            return json.loads(path.read_text())

    return greedy


@pytest.fixture(scope="session")
def prepared_default(default_gguf: Path, engines_dir: Path) -> Path:
    """The default model converted once (about 10 s) and shared by all tests."""
    from llm_engine.utils.model_path import resolve_model

    return resolve_model("default", engines_dir=engines_dir, progress=False)


def _permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf's LlamaModel.permute: how llama.cpp stores HF q/k rows."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def _tiny_spm_vocab() -> tuple[list[str], list[int], list[float]]:
    """A SentencePiece-style vocabulary: <unk>, <s>, </s>, byte pieces, scored pieces."""
    pieces = ["\u2581", "t", "h", "e", "a", "r", "i", "n", "o", "s", "1", "2", "\u2581t", "he",
              "\u2581the", "in", "\u2581a", "er", "\u25811", "\u2581\u2581", "at", "\u2581in"]
    tokens = (["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + pieces
              + ["<|im_start|>", "<|im_end|>", "<think>"])
    types = [2, CONTROL, CONTROL] + [6] * 256 + [1] * len(pieces) + [CONTROL, CONTROL, USER_DEFINED]
    # Shuffled-looking scores so merge order is not simply vocabulary order.
    scores = [0.0] * 259 + [-((i * 7) % len(pieces)) - 1.0 for i in range(len(pieces))] + [0.0] * 3
    return tokens, types, scores


def _tiny_vocab() -> tuple[list[str], list[int], list[str]]:
    """Specials, the 256 byte-level symbols, and a few merges, as a gpt2-model GGUF stores them."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    alphabet = sorted(bytes_to_unicode().values())
    merges = ["Ġ t", "h e", "Ġt he", "i n", "Ġ a", "e r", "Ġ 1"]
    merged = ["".join(m.split(" ")) for m in merges]
    tokens = specials + alphabet + merged + ["<think>"]
    types = [CONTROL] * 3 + [1] * (len(alphabet) + len(merged)) + [USER_DEFINED]
    return tokens, types, merges


TinyWriter = Callable[..., tuple[Path, dict[str, np.ndarray]]]


# The tiny model's shape: big enough for every code path, small enough to write at once.
TINY_HIDDEN, TINY_HEADS, TINY_KV_HEADS, TINY_FFN, TINY_LAYERS = 64, 4, 2, 128, 2


def _tiny_header(w, arch: str, vocab: tuple, pre: str, add_bos: bool, spm: bool) -> None:
    """The tiny model's metadata and tokenizer, as llama.cpp's converter writes them."""
    tokens, types, extra = vocab
    w.add_block_count(TINY_LAYERS)
    w.add_context_length(256)
    w.add_embedding_length(TINY_HIDDEN)
    w.add_feed_forward_length(TINY_FFN)
    w.add_head_count(TINY_HEADS)
    w.add_head_count_kv(TINY_KV_HEADS)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    if arch == "llama":
        w.add_rope_dimension_count(TINY_HIDDEN // TINY_HEADS)
        w.add_vocab_size(len(tokens))
    w.add_token_list(tokens)
    w.add_token_types(types)
    if spm:
        w.add_tokenizer_model("llama")
        w.add_token_scores(extra)
        w.add_unk_token_id(0)
    else:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(pre)
        w.add_token_merges(extra)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(0)
    w.add_add_bos_token(add_bos)
    w.add_chat_template(
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


class _TinyTensors:
    """Adds random tensors to a GGUF writer (quantized as asked, Q/K rows permuted as
    llama.cpp stores them) and keeps their fp32 values under the Hugging Face names."""

    def __init__(self, w, quant: str, seed: int) -> None:
        import gguf

        self.w, self.gguf = w, gguf
        self.qtype = getattr(gguf.GGMLQuantizationType, quant)
        self.rng = np.random.default_rng(seed)
        self.hf: dict[str, np.ndarray] = {}

    def rnd(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape).astype(np.float32) * 0.2

    def add(self, gname: str, hname: str, arr: np.ndarray, quantize: bool = True,
            permute_heads: int | None = None) -> None:
        arr = arr.astype(np.float32)
        stored = _permute(arr, permute_heads) if permute_heads else arr
        if quantize and arr.ndim == 2 and self.qtype != self.gguf.GGMLQuantizationType.F32:
            self.w.add_tensor(gname, self.gguf.quants.quantize(stored, self.qtype),
                              raw_dtype=self.qtype)
        else:
            self.w.add_tensor(gname, stored)
        self.hf[hname] = arr

    def layer(self, i: int, arch: str) -> None:
        t, hidden, ffn = self, TINY_HIDDEN, TINY_FFN
        kv = TINY_KV_HEADS * (hidden // TINY_HEADS)
        b, h = f"blk.{i}", f"model.layers.{i}"
        perm = arch == "llama"
        t.add(f"{b}.attn_q.weight", f"{h}.self_attn.q_proj.weight", t.rnd(hidden, hidden),
              permute_heads=TINY_HEADS if perm else None)
        t.add(f"{b}.attn_k.weight", f"{h}.self_attn.k_proj.weight", t.rnd(kv, hidden),
              permute_heads=TINY_KV_HEADS if perm else None)
        t.add(f"{b}.attn_v.weight", f"{h}.self_attn.v_proj.weight", t.rnd(kv, hidden))
        if arch == "qwen2":
            t.add(f"{b}.attn_q.bias", f"{h}.self_attn.q_proj.bias", t.rnd(hidden))
            t.add(f"{b}.attn_k.bias", f"{h}.self_attn.k_proj.bias", t.rnd(kv))
            t.add(f"{b}.attn_v.bias", f"{h}.self_attn.v_proj.bias", t.rnd(kv))
        t.add(f"{b}.attn_output.weight", f"{h}.self_attn.o_proj.weight", t.rnd(hidden, hidden))
        # F32 on purpose: exercises the unquantized path next to the quantized one.
        t.add(f"{b}.ffn_gate.weight", f"{h}.mlp.gate_proj.weight", t.rnd(ffn, hidden), False)
        t.add(f"{b}.ffn_up.weight", f"{h}.mlp.up_proj.weight", t.rnd(ffn, hidden))
        t.add(f"{b}.ffn_down.weight", f"{h}.mlp.down_proj.weight", t.rnd(hidden, ffn))
        t.add(f"{b}.attn_norm.weight", f"{h}.input_layernorm.weight", 1 + t.rnd(hidden))
        t.add(f"{b}.ffn_norm.weight", f"{h}.post_attention_layernorm.weight", 1 + t.rnd(hidden))


@pytest.fixture(scope="session")
def write_tiny_gguf() -> TinyWriter:
    """Returns write(path, arch, ...) -> (path, HF-named fp32 weights that went into the file)."""

    def write(path: Path, arch: str = "llama", quant: str = "Q8_0", tied: bool = False,
              pre: str = "smollm", add_bos: bool = False, seed: int = 0,
              rope_freqs: bool = False, spm: bool = False) -> tuple[Path, dict]:
        import gguf

        vocab = _tiny_spm_vocab() if spm else _tiny_vocab()
        w = gguf.GGUFWriter(str(path), arch)
        _tiny_header(w, arch, vocab, pre, add_bos, spm)
        t = _TinyTensors(w, quant, seed)
        t.add("token_embd.weight", "model.embed_tokens.weight", t.rnd(len(vocab[0]), TINY_HIDDEN))
        for i in range(TINY_LAYERS):
            t.layer(i, arch)
        t.add("output_norm.weight", "model.norm.weight", 1 + t.rnd(TINY_HIDDEN))
        if rope_freqs:
            # What convert_hf_to_gguf writes for Llama-3.1 (factor 8, low 1, high 4).
            from llm_engine.utils.gguf_convert import _llama3_factors

            params = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                      "original_max_position_embeddings": 64}
            w.add_rope_scaling_orig_ctx_len(64)
            w.add_tensor("rope_freqs.weight", _llama3_factors(
                params, TINY_HIDDEN // TINY_HEADS, 10000.0).astype(np.float32))
        if not tied:
            t.add("output.weight", "lm_head.weight", t.rnd(len(vocab[0]), TINY_HIDDEN))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return path, t.hf

    return write
