"""The LLM engine's arguments as settings: `EngineConfig`'s fields, read from the dataclass
(each a top-level setting, `FINRAG_<NAME>` and a flag), which of them take JSON, and the
server's defaults where they differ from the engine's."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from llm_engine.config import EngineConfig
from llm_engine.spec_decode.config import SpeculativeConfig

# The server's own defaults where they differ from the engine's (EngineConfig keeps the
# names and checks): a RAG server on a small CPU host bounds its memory (512 MiB of KV
# rather than a quarter of the host) and its context (2048 tokens, which the request limits
# and the admission bound of settings.py are sized from), and serves fewer sequences at once.
# Answers copy figures and phrases from the passages in their own prompt, so prompt-lookup
# drafts are on: on RAG prompts benchmarks/spec_decode.py measured 1.4x to 2.5x the decode
# speed at 1, 4 and 32 running requests, so no disable_by_batch_size up to this
# max_num_seqs. Weights are int8 where the engine runs
# on CPU ("auto"): faster at equal TAT-QA answer quality (benchmarks/answer_eval.py). The KV
# cache is bf16 (on CUDA the activations' dtype already): on CPU twice the blocks in the
# same memory, decode reading half the bytes, and prompts attending at bf16: a 512-token
# prompt's first token 19% sooner (median; benchmarks/throughput.py), at equal EM and F1 on
# all of TAT-QA dev (benchmarks/answer_eval.py).
SERVER_ENGINE_DEFAULTS: dict[str, Any] = {
    "max_model_len": 2048, "max_num_seqs": 32, "max_num_batched_tokens": 1024,
    "kv_cache_memory": 512 << 20, "quantization": "auto", "kv_cache_dtype": "bfloat16",
    "speculative_config": SpeculativeConfig("ngram", num_speculative_tokens=4, prompt_lookup_max=4,
                                            prompt_lookup_min=2),
}


def engine_fields() -> dict[str, Any]:
    """EngineConfig's fields and their types, read from the dataclass."""
    hints = typing.get_type_hints(EngineConfig)
    return {f.name: hints[f.name] for f in dataclasses.fields(EngineConfig)}


def takes_json(tp: Any) -> bool:
    """A dict- or list-valued field: given as JSON on the command line and in FINRAG_*."""
    kinds = {typing.get_origin(a) or a for a in (typing.get_args(tp) or (tp,))}
    return bool(kinds & {dict, list})


ENGINE_FIELDS = engine_fields()
