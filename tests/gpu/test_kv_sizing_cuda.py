"""KV sizing and swapping on CUDA: the cache takes the share of device memory that the
weights and one profiled full-budget step leave, and swapped sequences decode exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def test_kv_cache_fills_the_utilization_share_and_a_full_step_stays_inside(
        prepared_default: Path) -> None:
    from engine_prompts import prompts_of_lengths

    from llm_engine import LLM, SamplingParams

    torch.cuda.empty_cache()
    _, total = torch.cuda.mem_get_info()
    share = 0.4
    llm = LLM(str(prepared_default), device="cuda", gpu_memory_utilization=share,
              max_num_batched_tokens=2048, swap_space=0.05)
    runner = llm.llm_engine.executor.driver
    plan = runner.kv_plan
    assert plan.source == "gpu_memory_utilization"
    assert runner.kv_cache.numel() * runner.kv_cache.element_size() \
        == plan.num_blocks * plan.bytes_per_block > 0
    assert runner.swap_space.cache.is_pinned()
    # A step of the full token budget, then decodes: all inside the share.
    torch.cuda.reset_peak_memory_stats()
    prompts = prompts_of_lengths(llm.get_tokenizer(), [700, 700, 700, 300])
    llm.generate([{"prompt_token_ids": p} for p in prompts],
                 SamplingParams(temperature=0, max_tokens=8), use_tqdm=False)
    assert torch.cuda.max_memory_reserved() <= share * total * 1.01


def test_max_model_len_that_cannot_fit_names_gpu_memory_utilization(
        prepared_default: Path) -> None:
    from llm_engine import LLM

    with pytest.raises(ValueError, match=r"does not fit the KV cache, which holds 0 tokens .*"
                                         r"gpu_memory_utilization"):
        LLM(str(prepared_default), device="cuda", gpu_memory_utilization=0.001)


@pytest.mark.parametrize("mode", ["swap", "recompute"])
def test_swapped_sequences_decode_exactly_on_cuda(prepared_default: Path, mode: str) -> None:
    from engine_prompts import prompts_of_lengths

    from llm_engine import LLM, SamplingParams

    args = dict(device="cuda", dtype="float32", max_model_len=700, swap_space=0.5,
                enable_prefix_caching=False)
    params = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
    reference = LLM(str(prepared_default), num_gpu_blocks_override=400, **args)
    prompts = prompts_of_lengths(reference.get_tokenizer(), [8, 600, 33, 150, 17, 420, 64, 290])
    requests = [{"prompt_token_ids": p} for p in prompts]
    expected = [o.outputs[0].token_ids for o in reference.generate(requests, params)]
    del reference
    llm = LLM(str(prepared_default), num_gpu_blocks_override=48, preemption_mode=mode, **args)
    assert [o.outputs[0].token_ids for o in llm.generate(requests, params)] == expected
    stats = llm.llm_engine.get_stats()
    assert getattr(stats, f"num_preemptions_{mode}") > 0
    assert stats.num_free_blocks == stats.num_blocks and stats.num_swapped_blocks == 0
