"""Engine arguments are checked when the config is made, with the field named."""

from __future__ import annotations

import pytest

from llm_engine import EngineConfig


@pytest.mark.parametrize("field,value", [
    ("block_size", 3), ("max_num_seqs", 0), ("max_num_batched_tokens", 0),
    ("kv_cache_memory", -1), ("gpu_memory_utilization", 1.5), ("num_gpu_blocks_override", 0),
    ("max_model_len", 0), ("device", "tpu"), ("dtype", "int4"), ("attention_backend", "flash"),
])
def test_bad_engine_args_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^{field} must be"):
        EngineConfig(**{field: value})


def test_unknown_engine_arg_is_refused() -> None:
    with pytest.raises(TypeError, match="gpu_mem"):
        EngineConfig(gpu_mem=0.5)  # type: ignore[call-arg]


def test_prompt_plus_max_tokens_over_the_context_is_refused(tmp_path) -> None:
    from test_engine_exactness import _tiny_model

    from llm_engine import LLMEngine, SamplingParams

    engine = LLMEngine(EngineConfig(model=str(_tiny_model(tmp_path, "llama")),
                                    skip_tokenizer_init=True, max_model_len=64,
                                    kv_cache_memory=16 << 20))
    with pytest.raises(ValueError, match=r"maximum context length is 64 tokens, but 70 "
                                         r"were requested \(10 in the prompt, 60 in max_tokens\)"):
        engine.add_request("r", list(range(10)), SamplingParams(max_tokens=60))
    assert not engine.has_unfinished_requests()
