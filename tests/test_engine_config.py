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
