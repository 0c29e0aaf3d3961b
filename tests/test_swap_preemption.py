"""Preemption under a KV cache forced small: greedy output is the same whether sequences
are swapped out to host memory, recomputed, or never preempted; every block comes back.

The small random Llama of test_engine_exactness keeps these many-step runs fast; the
bundled SmolLM2 runs under preemption (auto mode, so swapping) against transformers in
test_engine_exactness.
"""

from __future__ import annotations

import pytest
import torch
from test_engine_exactness import _tiny_model

from llm_engine import LLM, EngineConfig, LLMEngine, SamplingParams

MAX_NEW = 16
BLOCK_BYTES = 2 * 3 * 2 * 8 * 4 * 16  # K and V, 3 layers, 2 KV heads of 8, fp32, 16 tokens
# One sequence needs at most 9 blocks of 16; all of them together about 30.
SMALL = dict(num_gpu_blocks_override=12, max_model_len=144, max_num_batched_tokens=64,
             skip_tokenizer_init=True)


def swap_gib(blocks: int) -> float:
    return blocks * BLOCK_BYTES / 2**30


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory):
    folder = _tiny_model(tmp_path_factory.mktemp("tiny"), "llama")
    gen = torch.Generator().manual_seed(3)
    base = [torch.randint(0, 512, (n,), generator=gen).tolist() for n in [40, 70, 25, 90, 55, 33]]
    # The last three share a two-block prefix, so swapping meets shared, cached blocks.
    prompts = base[:3] + [base[1][:32] + p for p in base[3:]]
    reference = LLM(str(folder), **{**SMALL, "num_gpu_blocks_override": 64})
    expected = generate(reference, prompts)
    assert reference.llm_engine.get_stats().num_preemptions == 0
    return folder, prompts, expected


def generate(llm: LLM, prompts: list[list[int]]) -> list[list[int]]:
    params = SamplingParams(temperature=0.0, max_tokens=MAX_NEW, ignore_eos=True)
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return [o.outputs[0].token_ids for o in outs]


def assert_everything_returned(engine: LLMEngine) -> None:
    stats = engine.get_stats()
    assert stats.num_running == stats.num_waiting == stats.num_swapped == 0
    assert stats.num_free_blocks == stats.num_blocks
    assert all(b.ref_count == 0 for b in engine.block_manager.blocks)
    assert stats.num_swapped_blocks == 0
    assert engine.block_manager.num_free_host_blocks == stats.num_host_blocks


@pytest.mark.parametrize("mode", ["swap", "recompute"])
@pytest.mark.parametrize("prefix_caching", [True, False])
def test_preempted_outputs_equal_unpreempted(case, mode: str, prefix_caching: bool) -> None:
    folder, prompts, expected = case
    llm = LLM(str(folder), preemption_mode=mode, swap_space=swap_gib(40),
              enable_prefix_caching=prefix_caching, **SMALL)
    assert generate(llm, prompts) == expected
    stats = llm.llm_engine.get_stats()
    other = "recompute" if mode == "swap" else "swap"
    assert getattr(stats, f"num_preemptions_{mode}") > 0
    assert getattr(stats, f"num_preemptions_{other}") == 0
    if mode == "swap":
        assert stats.num_blocks_swapped_out > 0 and stats.num_blocks_swapped_in > 0
    else:
        assert stats.num_blocks_swapped_out == stats.num_blocks_swapped_in == 0
    assert_everything_returned(llm.llm_engine)


def test_auto_mode_falls_back_to_recompute_when_swap_space_is_full(case) -> None:
    folder, prompts, expected = case
    llm = LLM(str(folder), swap_space=swap_gib(5), **SMALL)
    assert llm.llm_engine.block_manager.num_host_blocks == 5
    assert generate(llm, prompts) == expected
    stats = llm.llm_engine.get_stats()
    assert stats.num_preemptions_swap > 0 and stats.num_preemptions_recompute > 0
    assert_everything_returned(llm.llm_engine)


def test_abort_while_swapped_out_frees_its_host_blocks(case) -> None:
    folder, prompts, _ = case
    engine = LLM(str(folder), preemption_mode="swap", swap_space=swap_gib(40), **SMALL).llm_engine
    params = SamplingParams(temperature=0.0, max_tokens=MAX_NEW, ignore_eos=True)
    for i, p in enumerate(prompts):
        engine.add_request(str(i), p, params)
    while not engine.scheduler.swapped:
        engine.step()
    victim = engine.scheduler.swapped[0]
    held = len(victim.host_block_table)
    before = engine.get_stats().num_swapped_blocks
    engine.abort(victim.request_id)
    assert engine.get_stats().num_swapped_blocks == before - held
    while engine.has_unfinished_requests():
        engine.step()
    assert_everything_returned(engine)


def test_preemption_mode_swap_needs_swap_space(case) -> None:
    folder, _, _ = case
    with pytest.raises(ValueError, match=r"preemption_mode='swap' but swap_space=1e-06 GiB "
                                         rf"holds no block of {BLOCK_BYTES} bytes: raise swap_space"):
        LLM(str(folder), preemption_mode="swap", swap_space=1e-6, **SMALL)


def test_swap_space_defaults_to_a_quarter_of_the_cache_on_cpu(case) -> None:
    folder, _, _ = case
    assert LLM(str(folder), **SMALL).llm_engine.block_manager.num_host_blocks == 3
    assert LLM(str(folder), swap_space=0, **SMALL).llm_engine.block_manager.num_host_blocks == 0


def test_swap_space_comes_from_the_pipelines_host_memory(case) -> None:
    from pipeline.rag.host_buffers import HostBufferPool, HostMemory

    folder, prompts, expected = case
    memory = HostMemory(pinned=False)
    HostBufferPool(2, 4, 8, memory=memory)
    engine = LLMEngine(EngineConfig(model=str(folder), preemption_mode="swap",
                                    swap_space=swap_gib(40), **SMALL),
                       host_allocator=memory.allocator("kv swap"))
    assert memory.bytes_by_use == {"kv swap": 40 * BLOCK_BYTES, "embedding staging": 2 * 4 * 8 * 4}
    params = SamplingParams(temperature=0.0, max_tokens=MAX_NEW, ignore_eos=True)
    outs = engine.generate([{"prompt_token_ids": p} for p in prompts], params)
    assert [o.outputs[0].token_ids for o in outs] == expected
    assert engine.get_stats().num_preemptions_swap > 0


def test_server_settings_reach_the_engine() -> None:
    from pipeline.settings_sources import SettingsError, load_settings

    # A GPU deployment's engine arguments, from the environment as a container would set them.
    settings = load_settings(environ={"FINRAG_SWAP_SPACE": "4", "FINRAG_BLOCK_SIZE": "16",
                                      "FINRAG_TENSOR_PARALLEL_SIZE": "2",
                                      "FINRAG_GPU_MEMORY_UTILIZATION": "0.9",
                                      "FINRAG_PREEMPTION_MODE": "recompute"},
                             overrides={"num_gpu_blocks_override": 64})
    config = settings.engine
    assert (config.swap_space, config.block_size, config.tensor_parallel_size,
            config.gpu_memory_utilization, config.preemption_mode,
            config.num_gpu_blocks_override) == (4.0, 16, 2, 0.9, "recompute", 64)
    with pytest.raises(SettingsError, match=r"^invalid settings: preemption_mode: .*'drop'"):
        load_settings(overrides={"preemption_mode": "drop"})
    with pytest.raises(SettingsError, match=r"^invalid settings: block_size: .*power of two"):
        load_settings(overrides={"block_size": 24})


def test_tensor_parallel_ranks_swap_their_shards(case) -> None:
    """The brief's deployment swaps with tensor_parallel_size=2: every rank copies its
    share of the K/V heads out and back, in the same step."""
    folder, prompts, expected = case
    llm = LLM(str(folder), tensor_parallel_size=2, preemption_mode="swap",
              swap_space=swap_gib(40) / 2, **SMALL)  # a rank's block holds one K/V head of two
    try:
        assert llm.llm_engine.block_manager.num_host_blocks == 40
        assert generate(llm, prompts) == expected
        stats = llm.llm_engine.get_stats()
        assert stats.num_preemptions_swap > 0 and stats.num_preemptions_recompute == 0
        assert_everything_returned(llm.llm_engine)
    finally:
        llm.llm_engine.shutdown()
