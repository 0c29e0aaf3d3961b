"""Prompt-lookup speculative decoding: greedy output token for token as without drafts (and
as transformers), under prefix caching, chunked prefill and preemption; drafts never enter
the prefix cache; the rejection sampler keeps the request's distribution."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from engine_prompts import english_corpus
from test_engine_exactness import assert_all_blocks_free, engine_greedy, hf_greedy

from llm_engine import LLM, SamplingParams
from llm_engine.engine.block_manager import BlockManager
from llm_engine.sequence import Sequence
from llm_engine.spec_decode.config import SpeculativeConfig
from llm_engine.spec_decode.ngram_proposer import NgramProposer
from llm_engine.spec_decode.rejection_sampler import RejectionSampler

MAX_NEW = 24
SPEC = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4,
        "prompt_lookup_min": 2}
# Small cache, short context, a small step budget: enough for these prompts, and cheap to
# allocate and to profile at start-up.
ENGINE = {"max_model_len": 1024, "kv_cache_memory": 96 << 20, "max_num_batched_tokens": 512}


def copy_prompts(tokenizer, passage_lengths: list[int]) -> list[list[int]]:
    """A passage, then its start again: the model goes on copying, so drafts get accepted
    (and rejected where it stops copying)."""
    ids = tokenizer.encode(english_corpus(), add_special_tokens=False)
    again = tokenizer.encode("\n\nOnce more, word for word:\n", add_special_tokens=False)
    prompts = []
    for i, n in enumerate(passage_lengths):
        passage = ids[i * 500 : i * 500 + n]
        prompts.append(passage + again + passage[: n // 4])
    return prompts


@pytest.fixture(scope="module")
def case(prepared_default: Path):
    from llm_engine.tokenizer import Tokenizer

    prompts = copy_prompts(Tokenizer.from_pretrained(prepared_default), [40, 120, 250, 330])
    return prepared_default, prompts, hf_greedy(prepared_default, prompts, MAX_NEW)


@pytest.fixture(scope="module")
def plain(case) -> LLM:
    """The reference: the same engine without drafts. Its prefix cache is on so that the
    runs after its first reuse the prompts' blocks instead of prefilling the same 960
    tokens again (4.4 -> 1.7 s a run); the prefix cache's own exactness against
    transformers, and the engine's with it off, are test_engine_exactness's."""
    return LLM(str(case[0]), **ENGINE)


def spec_llm(model_dir: Path, **kwargs) -> LLM:
    return LLM(str(model_dir), speculative_config=SPEC, **{**ENGINE, **kwargs})


@pytest.fixture(scope="module")
def spec(case) -> LLM:
    """The engine with drafts in ENGINE's settings, for the tests that need no other: one
    engine for the module instead of one a test, each of which started cold and prefilled
    the same 960 prompt tokens again (about 3 s a test on one core). Each test checks the
    drafts of its own requests (`drafted` before, `assert_drafts_accepted` after); the
    first, test_greedy_matches_transformers_with_prefix_cache, starts it cold."""
    return spec_llm(case[0])


def drafted(llm: LLM) -> tuple[int, int, int]:
    """The engine's draft counters so far: tokens accepted, tokens drafted, drafting steps."""
    stats = llm.llm_engine.get_stats()
    return (stats.spec_decode_num_accepted_tokens, stats.spec_decode_num_draft_tokens,
            stats.spec_decode_num_drafts)


def assert_drafts_accepted(llm: LLM, since: tuple[int, int, int] = (0, 0, 0)) -> None:
    """Since `since` (a `drafted(llm)` taken before the requests), some drafted tokens were
    accepted and some rejected."""
    accepted, drafts, _ = (now - before for now, before in zip(drafted(llm), since, strict=True))
    assert 0 < accepted < drafts
    assert 0.0 < llm.llm_engine.get_stats().spec_decode_acceptance_rate < 1.0


def assert_cache_holds_verified_tokens_only(llm: LLM) -> None:
    """Every block a running sequence has registered holds its verified tokens there."""
    engine = llm.llm_engine
    bm, bs = engine.block_manager, engine.config.block_size
    for seq in engine.scheduler.running:
        for i, h in enumerate(seq.block_hashes):
            assert (i + 1) * bs <= seq.num_tokens
            cached = bm.blocks[bm.hash_to_block_id[h]]
            assert cached.token_ids == tuple(seq.token_ids[i * bs : (i + 1) * bs])


# -- the engine ---------------------------------------------------------------------
def test_greedy_matches_transformers_with_prefix_cache(case, plain, spec) -> None:
    _, prompts, expected = case
    llm, since = spec, drafted(spec)
    # (The engine without drafts equals transformers on prompts of 12 lengths in
    # test_engine_exactness; here the drafts must not change that.)
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    assert_drafts_accepted(llm, since)
    assert_all_blocks_free(llm)
    # Prompt + answer as new prompts: their hits include blocks written while drafting.
    longer = [p + e for p, e in zip(prompts, expected, strict=True)]
    before = llm.llm_engine.get_stats().prefix_cache_hits
    assert engine_greedy(llm, longer, MAX_NEW) == engine_greedy(plain, longer, MAX_NEW)
    assert llm.llm_engine.get_stats().prefix_cache_hits - before >= sum(map(len, prompts)) // 2
    assert_all_blocks_free(llm)


def test_greedy_matches_with_small_prefill_chunks(case) -> None:
    model_dir, prompts, expected = case
    # 24 tokens a step: prompts are chunked, and drafts are cut to what the budget leaves.
    llm = spec_llm(model_dir, max_num_batched_tokens=24)
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    assert_drafts_accepted(llm)
    assert_all_blocks_free(llm)


@pytest.mark.parametrize("mode", ["swap", "recompute"])
def test_greedy_matches_under_preemption(case, mode: str) -> None:
    model_dir, prompts, expected = case
    # 32 blocks of 16 = 512 tokens: the longest request (about 440) fits, all four do not.
    # The swap space holds every request (0.1 GiB: 145 blocks), so swapping never falls back.
    llm = spec_llm(model_dir, num_gpu_blocks_override=32, max_model_len=500,
                   preemption_mode=mode, swap_space=0.1 if mode == "swap" else 0,
                   kv_cache_memory=None)
    assert engine_greedy(llm, prompts, MAX_NEW) == expected
    stats = llm.llm_engine.get_stats()
    assert (stats.num_preemptions_swap if mode == "swap" else stats.num_preemptions_recompute) > 0
    assert_drafts_accepted(llm)
    assert_all_blocks_free(llm)


def test_drafts_never_enter_the_prefix_cache(case) -> None:
    model_dir, prompts, expected = case
    # Blocks of 4: most steps' drafts fill or cross a block boundary.
    llm = spec_llm(model_dir, block_size=4)
    engine = llm.llm_engine
    params = SamplingParams(temperature=0.0, max_tokens=MAX_NEW)
    for i, p in enumerate(prompts):
        engine.add_request(str(i), {"prompt_token_ids": p}, params)
    done = {}
    steps_with_drafts = 0
    while engine.has_unfinished_requests():
        steps_with_drafts += any(s.spec_token_ids for s in engine.scheduler.running)
        for out in engine.step():
            if out.finished:
                done[int(out.request_id)] = out.outputs[0].token_ids
        assert_cache_holds_verified_tokens_only(llm)
    assert [done[i] for i in range(len(prompts))] == expected
    assert steps_with_drafts > 0
    assert_drafts_accepted(llm)
    assert_all_blocks_free(llm)


def test_stops_lengths_and_logprobs_inside_accepted_drafts(case, plain, spec) -> None:
    _, prompts, expected = case
    llm, since = spec, drafted(spec)
    tok = llm.get_tokenizer()
    stop_text = tok.decode(expected[3][9:12])  # ends mid-way through a run of drafts
    cases = [
        SamplingParams(temperature=0.0, max_tokens=7),
        SamplingParams(temperature=0.0, max_tokens=MAX_NEW, stop=[stop_text]),
        SamplingParams(temperature=0.0, max_tokens=MAX_NEW, stop_token_ids=[expected[2][6]]),
        SamplingParams(temperature=0.0, max_tokens=12, logprobs=3),
    ]
    feed = [{"prompt_token_ids": p} for p in prompts]
    # The reference, the engine without drafts, answers all four cases in one batch (its
    # greedy tokens do not depend on the batch: test_engine_exactness); the engine with
    # drafts answers each case alone, as before, so its drafts fall where they did.
    wants = plain.generate(feed * len(cases), [p for p in cases for _ in prompts], use_tqdm=False)
    finish = []
    for i, params in enumerate(cases):
        want = wants[i * len(prompts) : (i + 1) * len(prompts)]
        got = llm.generate(feed, params, use_tqdm=False)
        finish.append([o.outputs[0].finish_reason for o in got])
        for w, g in zip(want, got, strict=True):
            w, g = w.outputs[0], g.outputs[0]
            assert (g.token_ids, g.text, g.finish_reason, g.stop_reason) == \
                (w.token_ids, w.text, w.finish_reason, w.stop_reason)
            if params.logprobs:
                for lw, lg in zip(w.logprobs, g.logprobs, strict=True):
                    assert lw.keys() == lg.keys()
                    assert all(abs(lw[t] - lg[t]) < 1e-3 for t in lw)
    # The stop cases really stopped inside the answers.
    assert finish[1][3] == finish[2][2] == "stop"
    assert_drafts_accepted(llm, since)
    assert_all_blocks_free(llm)


def test_sampling_with_top_k_1_verifies_by_rejection_and_equals_greedy(case, spec) -> None:
    _, prompts, expected = case
    llm, since = spec, drafted(spec)
    params = SamplingParams(temperature=0.8, top_k=1, max_tokens=MAX_NEW, seed=3)
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    assert [o.outputs[0].token_ids for o in outs] == expected
    assert_drafts_accepted(llm, since)


def test_penalties_and_min_tokens_get_no_drafts(case, spec) -> None:
    prompts = case[1]
    llm, since = spec, drafted(spec)
    for params in (SamplingParams(temperature=0.0, max_tokens=8, repetition_penalty=1.2),
                   SamplingParams(temperature=0.0, max_tokens=8, min_tokens=8)):
        llm.generate([{"prompt_token_ids": prompts[1]}], params, use_tqdm=False)
    assert drafted(llm)[2] == since[2]  # not one drafting step


# -- the block manager --------------------------------------------------------------
def test_a_block_holding_drafts_is_not_cached_and_trim_frees_it() -> None:
    bm = BlockManager(8, 4)
    seq = Sequence("a", None, list(range(5)), SamplingParams())
    bm.allocate(seq, 4)  # tokens 0-3: one full block, cached
    seq.num_computed_tokens = 4
    seq.spec_token_ids = [5, 6, 7, 8]
    bm.allocate(seq, 1 + 4)  # token 4 and four drafts: blocks 1 and 2
    assert len(seq.block_table) == 3 and len(seq.block_hashes) == 1
    assert len(bm.hash_to_block_id) == 1
    # One draft accepted, plus the model's token: 7 tokens, two blocks kept.
    seq.token_ids += [5, 9]
    seq.num_computed_tokens = 6
    bm.trim(seq)
    assert len(seq.block_table) == 2 and bm.num_free_blocks == 6
    assert bm.blocks[seq.block_table[1]].hash == -1


# -- the proposer -------------------------------------------------------------------
def test_proposer_takes_the_longest_then_latest_match() -> None:
    prop = NgramProposer(SpeculativeConfig("ngram", 3, prompt_lookup_max=3, prompt_lookup_min=1))
    # Suffix [1, 2, 3]: matched in full at 0 (followed by 7 8 9); [2, 3] alone later (5 5).
    assert prop.propose([1, 2, 3, 7, 8, 9, 2, 3, 5, 5, 1, 2, 3]) == [7, 8, 9]
    # Suffix [4, 2, 3]: no 3-gram; the latest 2-gram [2, 3] is followed by 5 5 1.
    assert prop.propose([1, 2, 3, 7, 2, 3, 5, 5, 1, 4, 2, 3]) == [5, 5, 1]
    assert prop.propose([1, 2, 3, 7, 2, 3, 5, 5, 1, 4, 2, 3], max_drafts=1) == [5]
    # A match near the end proposes what follows, however short.
    assert prop.propose([5, 6, 5, 6]) == [5, 6]
    assert prop.propose([1, 2, 3, 4]) == []


def test_proposer_respects_prompt_lookup_min() -> None:
    prop = NgramProposer(SpeculativeConfig("ngram", 2, prompt_lookup_max=4, prompt_lookup_min=3))
    assert prop.propose([1, 2, 9, 9, 1, 2]) == []  # only a 2-gram
    assert prop.propose([1, 2, 3, 9, 1, 2, 3]) == [9, 1]


# -- the configuration --------------------------------------------------------------
def test_config_defaults_and_errors() -> None:
    cfg = SpeculativeConfig.from_dict({"method": "ngram", "num_speculative_tokens": 3})
    assert (cfg.prompt_lookup_max, cfg.prompt_lookup_min) == (5, 5)  # vLLM's defaults
    cfg = SpeculativeConfig.from_dict({"method": "ngram", "num_speculative_tokens": 3,
                                       "prompt_lookup_max": 4})
    assert (cfg.prompt_lookup_max, cfg.prompt_lookup_min) == (4, 4)
    with pytest.raises(ValueError, match=r"method must be one of \['ngram'\]"):
        SpeculativeConfig.from_dict({"method": "eagle", "num_speculative_tokens": 3})
    with pytest.raises(ValueError, match="unknown key.*'model'.*accepted.*prompt_lookup_min"):
        SpeculativeConfig.from_dict({"method": "ngram", "num_speculative_tokens": 3, "model": "x"})
    with pytest.raises(ValueError, match="num_speculative_tokens"):
        SpeculativeConfig.from_dict({"method": "ngram"})
    with pytest.raises(ValueError, match="must be <= prompt_lookup_max"):
        SpeculativeConfig.from_dict({"method": "ngram", "num_speculative_tokens": 3,
                                     "prompt_lookup_max": 2, "prompt_lookup_min": 3})
    with pytest.raises(ValueError, match="num_speculative_tokens must be an integer >= 1"):
        SpeculativeConfig.from_dict({"method": "ngram", "num_speculative_tokens": 0})


# -- the rejection sampler ----------------------------------------------------------
# chi-square critical values at p = 1e-6 (scipy.stats.chi2.isf(1e-6, df)): a correct
# sampler fails one check in a million seeds, and the seeds are fixed.
CHI2_1E6 = {2: 27.63, 4: 33.38}


def chi_square(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def test_rejection_sampling_keeps_the_target_distribution() -> None:
    # Two rows of target distributions over 5 tokens, drafts [1, 3]: token 1 is likely
    # under row 0, token 3 unlikely under row 1, so both acceptance and rejection happen.
    probs = torch.tensor([[0.10, 0.40, 0.20, 0.25, 0.05],
                          [0.30, 0.15, 0.35, 0.05, 0.15],
                          [0.20, 0.20, 0.20, 0.20, 0.20]])
    gen = torch.Generator().manual_seed(1234)
    trials = 40_000
    first = torch.zeros(5)
    second = torch.zeros(5)  # the token after an accepted first draft
    lengths = torch.zeros(4)
    for _ in range(trials):
        out = RejectionSampler.verify_sampled([1, 3], probs, gen)
        first[out[0]] += 1
        if len(out) > 1:
            second[out[1]] += 1
        lengths[len(out)] += 1
    assert chi_square(first, probs[0]) < CHI2_1E6[4]
    assert chi_square(second, probs[1]) < CHI2_1E6[4]
    # Tokens kept: 1 on rejection at row 0, 2 on acceptance then rejection, 3 with the bonus.
    p_len = torch.tensor([0.0, 1 - 0.40, 0.40 * (1 - 0.05), 0.40 * 0.05])
    assert chi_square(lengths[1:], p_len[1:]) < CHI2_1E6[2]


def test_greedy_verification_keeps_the_argmax_run() -> None:
    assert RejectionSampler.verify_greedy([4, 5, 6], [4, 5, 7, 8]) == [4, 5, 7]
    assert RejectionSampler.verify_greedy([4, 5], [4, 5, 9]) == [4, 5, 9]
    assert RejectionSampler.verify_greedy([4], [3, 1]) == [3]
