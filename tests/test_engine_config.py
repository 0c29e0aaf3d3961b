"""Engine arguments are checked when the config is made, with the field named."""

from __future__ import annotations

import pytest

from llm_engine import EngineConfig


@pytest.mark.parametrize("field,value", [
    ("block_size", 3), ("max_num_seqs", 0), ("max_num_batched_tokens", 0),
    ("kv_cache_memory", -1), ("gpu_memory_utilization", 1.5), ("num_gpu_blocks_override", 0),
    ("max_model_len", 0), ("device", "tpu"), ("dtype", "int4"), ("attention_backend", "flash"),
    ("swap_space", -1), ("preemption_mode", "drop"),
])
def test_bad_engine_args_name_the_field(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^{field} must be"):
        EngineConfig(**{field: value})


@pytest.mark.parametrize("settings", [{"device": "cuda"}, {"device": "cpu", "dtype": "bfloat16"},
                                      {"device": "cpu", "dtype": "float16"}])
def test_the_cpu_decode_kernel_is_refused_off_fp32_cpu(settings: dict[str, str]) -> None:
    """It reads fp32 queries on the host: elsewhere it would be accepted and never run."""
    with pytest.raises(ValueError, match=r"^attention_backend must be .*'cpu_kernel' needs fp32 "
                                         r"on CPU\), got 'cpu_kernel'"):
        EngineConfig(attention_backend="cpu_kernel", **settings)
    EngineConfig(attention_backend="torch", **settings)  # what the message offers is taken
    assert EngineConfig(attention_backend="cpu_kernel", device="cpu").attention_backend == "cpu_kernel"


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


def test_swap_mode_without_swap_space_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^preemption_mode must be None or 'recompute' when "
                                         r"swap_space=0"):
        EngineConfig(preemption_mode="swap", swap_space=0)


BLOCK = 6144  # bytes of one 16-token block of the tiny model (3 layers, 2 KV heads of 8, fp32)


def test_max_model_len_is_resolved_once_and_handed_to_the_runner(tmp_path, monkeypatch) -> None:
    from test_engine_exactness import _tiny_model

    from llm_engine import LLMEngine

    calls = []
    resolve = EngineConfig.resolve_max_model_len

    def counted(self, model_config):
        calls.append(model_config)
        return resolve(self, model_config)

    monkeypatch.setattr(EngineConfig, "resolve_max_model_len", counted)
    given = EngineConfig(model=str(_tiny_model(tmp_path, "llama")), skip_tokenizer_init=True,
                         kv_cache_memory=16 << 20)
    engine = LLMEngine(given)
    # The tiny model's max_position_embeddings; the caller's config is left as it was.
    assert len(calls) == 1 and engine.max_model_len == 1024 and given.max_model_len is None
    assert engine.config.max_model_len == engine.executor.driver.max_model_len == 1024


@pytest.mark.parametrize("args,source,remedy", [
    ({"num_gpu_blocks_override": 10}, "num_gpu_blocks_override=10",
     "raise num_gpu_blocks_override to at least 63"),
    ({"kv_cache_memory": 10 * BLOCK + 100}, f"kv_cache_memory={10 * BLOCK + 100} bytes",
     f"raise kv_cache_memory to at least {63 * BLOCK} bytes \\(0.4 MiB\\), or set "
     "num_gpu_blocks_override to at least 63"),
])
def test_max_model_len_over_the_cache_fails_at_start_naming_counts_and_settings(
        tmp_path, args: dict, source: str, remedy: str) -> None:
    from test_engine_exactness import _tiny_model

    from llm_engine import LLMEngine

    folder = _tiny_model(tmp_path, "llama")
    with pytest.raises(ValueError, match=(
            rf"^max_model_len=1000 tokens does not fit the KV cache, which holds 160 tokens "
            rf"\(10 blocks of 16; {source}\); one sequence of max_model_len tokens needs 63 "
            rf"blocks \(0.4 MiB, {BLOCK} bytes a block\): lower max_model_len to at most 160, "
            rf"or {remedy}$")):
        LLMEngine(EngineConfig(model=str(folder), skip_tokenizer_init=True, max_model_len=1000,
                               **args))


def test_cuda_budget_message_gives_the_utilization_that_would_fit() -> None:
    from llm_engine.engine.kv_sizing import KVCachePlan

    gib = 1 << 30
    # 80 GiB device, 0.9 of it: 16 GiB weights + 4 GiB activations + 1 GiB other leave 51 GiB.
    plan = KVCachePlan(num_blocks=1001, bytes_per_block=2 << 20, source="gpu_memory_utilization",
                       detail="(profile)", reserved_blocks=1, total_bytes=80 * gib,
                       fixed_bytes=21 * gib)
    plan.check_fits(16000, 16, EngineConfig())
    # 4,000 blocks of 2 MiB, and the CUDA graphs' scratch block: 7.8 GiB more than the 21
    # GiB fixed, 28.8 / 80 = 0.360.
    expected = (r"holds 16000 tokens \(1000 blocks of 16, one more kept back for CUDA graphs; "
                r"\(profile\)\); .* needs 4001 blocks with that one \(7.81 GiB, .*: lower "
                r"max_model_len to at most 16000, or raise gpu_memory_utilization to at least "
                r"0.360, lower max_num_batched_tokens \(now 2048")
    with pytest.raises(ValueError, match=expected):
        plan.check_fits(64000, 16, EngineConfig())
    tight = KVCachePlan(0, 2 << 20, "gpu_memory_utilization", "(profile)", 0, 80 * gib, 79 * gib)
    with pytest.raises(ValueError, match=r"lower max_model_len, or the device cannot hold it at "
                                         r"any gpu_memory_utilization"):
        tight.check_fits(64000, 16, EngineConfig())


def test_profile_forward_runs_the_whole_token_budget_on_a_scratch_cache(tmp_path) -> None:
    """The CUDA sizing's forward pass (its memory figures need CUDA: tests/gpu)."""
    from test_engine_exactness import _tiny_model

    from llm_engine import LLMEngine

    engine = LLMEngine(EngineConfig(model=str(_tiny_model(tmp_path, "llama")),
                                    skip_tokenizer_init=True, max_model_len=128,
                                    max_num_batched_tokens=300, kv_cache_memory=1 << 20))
    runner = engine.executor.driver
    # 300 tokens as prompts of at most max_model_len = 128: spans of 128, 128 and 44.
    assert runner._profile_forward() == 19 * BLOCK
    assert runner.kv_cache.shape[3] == 0  # the scratch cache is let go


def test_unchunked_prefill_budget_under_max_model_len_is_refused() -> None:
    """vLLM's check: without chunked prefill a prompt longer than the step budget would wait
    forever, blocking every request behind it."""
    with pytest.raises(ValueError, match=(
            r"^max_num_batched_tokens \(512\) is smaller than max_model_len \(1024\) with "
            r"enable_chunked_prefill=False: .* Raise max_num_batched_tokens to at least 1024, "
            r"lower max_model_len to at most 512, or set enable_chunked_prefill=True$")):
        EngineConfig(enable_chunked_prefill=False, max_num_batched_tokens=512, max_model_len=1024)
    EngineConfig(enable_chunked_prefill=False, max_num_batched_tokens=1024, max_model_len=1024)
    EngineConfig(max_num_batched_tokens=512, max_model_len=1024)  # chunked: fine


def test_unchunked_prefill_budget_under_the_models_length_is_refused_at_start(tmp_path) -> None:
    from test_engine_exactness import _tiny_model

    from llm_engine import LLMEngine

    folder = _tiny_model(tmp_path, "llama")  # max_position_embeddings=1024
    with pytest.raises(ValueError, match=r"max_num_batched_tokens \(512\) is smaller than "
                                         r"max_model_len \(1024\)"):
        LLMEngine(EngineConfig(model=str(folder), skip_tokenizer_init=True,
                               enable_chunked_prefill=False, max_num_batched_tokens=512,
                               kv_cache_memory=16 << 20))


def test_max_model_len_over_the_models_positions_is_refused_at_start(tmp_path) -> None:
    from test_engine_exactness import _tiny_model

    from llm_engine import LLMEngine

    folder = _tiny_model(tmp_path, "llama")  # max_position_embeddings=1024
    with pytest.raises(ValueError, match=r"^max_model_len \(2000\) is greater than the model's "
                                         r"max_position_embeddings \(1024, config.json\): lower "
                                         r"max_model_len to at most 1024$"):
        LLMEngine(EngineConfig(model=str(folder), skip_tokenizer_init=True, max_model_len=2000,
                               kv_cache_memory=16 << 20))
    engine = LLMEngine(EngineConfig(model=str(folder), skip_tokenizer_init=True,
                                    max_model_len=1024, kv_cache_memory=16 << 20))
    assert engine.max_model_len == 1024


def test_prefix_caching_hash_algo_is_checked() -> None:
    assert EngineConfig().prefix_caching_hash_algo == "sha256"
    with pytest.raises(ValueError, match=r"^prefix_caching_hash_algo must be 'sha256' or "
                                         r"'builtin', got 'md5'"):
        EngineConfig(prefix_caching_hash_algo="md5")
