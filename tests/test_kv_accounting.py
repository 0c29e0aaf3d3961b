"""KV accounting: waste from the real allocator's block tables, engine stats, /metrics."""

from __future__ import annotations

import random

import pytest
import torch

from llm_engine import EngineConfig, LLMEngine, SamplingParams
from llm_engine.engine.block_manager import BlockManager
from llm_engine.engine.scheduler import Scheduler, SchedulerOutput
from llm_engine.sequence import Sequence


def waste_from_tables(sched: Scheduler, out: SchedulerOutput) -> float:
    """Slots holding no token / allocated slots once the step's tokens are written, each
    distinct block counted once."""
    bs = sched.block_size
    scheduled = dict(zip(out.seqs, out.num_tokens, strict=True))
    filled: dict[int, int] = {}
    for seq in sched.running:
        tokens = seq.num_computed_tokens + scheduled.get(seq, 0)
        for i, block in enumerate(seq.block_table):
            filled[block] = max(filled.get(block, 0), min(bs, max(tokens - i * bs, 0)))
    return 1 - sum(filled.values()) / (len(filled) * bs) if filled else 0.0


@pytest.mark.parametrize("prefix_caching", [True, False])
def test_waste_matches_the_block_tables_every_step(prefix_caching: bool) -> None:
    """The scheduler and allocator on their own, fed tokens step by step; shared prefixes
    and preemption included."""
    rng = random.Random(0)
    config = EngineConfig(block_size=4, max_num_batched_tokens=24,
                          enable_prefix_caching=prefix_caching, preemption_mode="swap")
    bm = BlockManager(40, 4, prefix_caching, num_host_blocks=64)
    sched = Scheduler(config, bm)
    shared = [rng.randrange(100) for _ in range(9)]
    budget = {}
    for i in range(10):
        prompt = (shared if i % 2 else []) + [rng.randrange(100) for _ in range(rng.randint(1, 30))]
        seq = Sequence(str(i), None, prompt, SamplingParams())
        budget[seq] = rng.randint(1, 20)
        sched.add(seq)
    peak = (0, 0.0)
    steps = 0
    while sched.has_unfinished():
        out = sched.schedule()
        expected = waste_from_tables(sched, out)
        assert sched.kv_waste == pytest.approx(expected)
        if bm.num_used_blocks >= peak[0]:
            peak = (bm.num_used_blocks, expected)
        for seq, n in zip(out.seqs, out.num_tokens, strict=True):
            seq.num_computed_tokens += n
            bm.cache_full_blocks(seq, seq.num_computed_tokens)
            if seq.num_computed_tokens == seq.num_tokens:
                seq.token_ids.append(rng.randrange(100))
                if seq.num_output_tokens >= budget[seq]:
                    sched.finish(seq)
        steps += 1
    assert (sched.peak_used_blocks, sched.kv_waste_at_peak) == (peak[0], pytest.approx(peak[1]))
    assert 0 < sched.kv_waste_at_peak < 0.5
    assert sched.preemptions["swap"] > 0  # 40 blocks of 4 are not enough for all at once
    assert bm.num_free_blocks == 40 and bm.num_free_host_blocks == 64


@pytest.fixture(scope="module")
def tiny_engine(tmp_path_factory: pytest.TempPathFactory) -> LLMEngine:
    from test_engine_exactness import _tiny_model

    folder = _tiny_model(tmp_path_factory.mktemp("tiny"), "llama")
    return LLMEngine(EngineConfig(model=str(folder), skip_tokenizer_init=True,
                                  num_gpu_blocks_override=12, max_model_len=144,
                                  max_num_batched_tokens=64, swap_space=1e-3))


def run(engine: LLMEngine, lengths: list[int]) -> None:
    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(0, 512, (n,), generator=gen).tolist() for n in lengths]
    engine.generate([{"prompt_token_ids": p} for p in prompts],
                    SamplingParams(temperature=0, max_tokens=16, ignore_eos=True))


def test_engine_stats_after_a_preempting_run(tiny_engine: LLMEngine) -> None:
    run(tiny_engine, [40, 70, 25, 90, 55, 33])
    stats = tiny_engine.get_stats()
    assert stats.num_used_blocks == 0 and stats.kv_cache_usage == 0.0
    assert stats.peak_num_used_blocks == 12
    # At the peak every block is in use; waste is the partly filled last blocks.
    assert 0 < stats.kv_cache_waste_at_peak < 0.2
    assert stats.num_preemptions == stats.num_preemptions_swap + stats.num_preemptions_recompute > 0
    assert stats.num_host_blocks == int(1e-3 * 2**30) // (2 * 3 * 2 * 8 * 4 * 16)
    assert stats.num_swapped_blocks == 0 and stats.swap_space_usage == 0.0
    assert stats.num_blocks_swapped_out >= stats.num_blocks_swapped_in > 0


def test_metrics_expose_the_kv_stats(tiny_engine: LLMEngine) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from pipeline.server.observability.metrics import Metrics

    # Metrics reads get_stats(), which LLMEngine and AsyncLLMEngine both have.
    metrics = Metrics(tiny_engine, "tiny")
    samples = {(s.name, s.labels.get("mode") or s.labels.get("state") or s.labels.get("direction")):
               s.value for fam in text_string_to_metric_families(metrics.render().decode())
               for s in fam.samples}
    stats = tiny_engine.get_stats()
    assert samples[("finrag:preemptions_total", "swap")] == stats.num_preemptions_swap
    assert samples[("finrag:preemptions_total", "recompute")] == stats.num_preemptions_recompute
    assert samples[("finrag:kv_cache_blocks", "free")] == stats.num_free_blocks
    assert samples[("finrag:kv_cache_blocks", "used")] == 0
    assert samples[("finrag:kv_blocks_swapped_total", "out")] == stats.num_blocks_swapped_out
    assert samples[("finrag:kv_cache_waste_at_peak_ratio", None)] == stats.kv_cache_waste_at_peak
    assert samples[("vllm:num_requests_swapped", None)] == 0
    assert samples[("vllm:cpu_cache_usage_perc", None)] == 0.0
    assert samples[("vllm:spec_decode_num_draft_tokens_total", None)] == \
        stats.spec_decode_num_draft_tokens
    assert samples[("vllm:spec_decode_num_accepted_tokens_total", None)] == \
        stats.spec_decode_num_accepted_tokens


def test_requests_admitted_together_share_their_prefix(tiny_engine: LLMEngine) -> None:
    """Four prompts with a 3-block common prefix, all admitted in one step: the prefix is
    computed once, and the outputs are those of an engine that shares nothing."""
    gen = torch.Generator().manual_seed(2)
    prefix = torch.randint(0, 512, (48,), generator=gen).tolist()
    prompts = [prefix + torch.randint(0, 512, (5,), generator=gen).tolist() for _ in range(4)]
    params = SamplingParams(temperature=0, max_tokens=4, ignore_eos=True)
    requests = [{"prompt_token_ids": p} for p in prompts]
    before = tiny_engine.get_stats().prefix_cache_hits
    shared = [o.outputs[0].token_ids for o in tiny_engine.generate(requests, params)]
    assert tiny_engine.get_stats().prefix_cache_hits - before == 3 * 48
    separate = LLMEngine(EngineConfig(model=str(tiny_engine.model_dir), skip_tokenizer_init=True,
                                      enable_prefix_caching=False, kv_cache_memory=1 << 20))
    assert shared == [o.outputs[0].token_ids for o in separate.generate(requests, params)]


def test_a_request_waiting_for_blocks_counts_its_prefix_lookup_once() -> None:
    """The hit rate counts each admission's lookup once, not every step it waited."""
    bm = BlockManager(6, 4)
    sched = Scheduler(EngineConfig(block_size=4, max_num_batched_tokens=64), bm)
    a = Sequence("a", None, list(range(17)), SamplingParams())  # 5 of the 6 blocks
    b = Sequence("b", None, list(range(8)) + [90, 91, 92, 93, 94], SamplingParams())
    sched.add(a)
    for step in range(4):
        out = sched.schedule()
        assert out.seqs == [a]  # b needs 2 new blocks besides the 2 it shares with a
        a.num_computed_tokens += out.num_tokens[0]
        bm.cache_full_blocks(a, a.num_computed_tokens)
        a.token_ids.append(100 + step)
        if step == 0:
            sched.add(b)
    sched.finish(a)
    assert sched.schedule().seqs == [b]
    assert (bm.prefix_queries, bm.prefix_hits) == (17 + 13, 8)
