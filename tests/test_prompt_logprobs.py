"""prompt_logprobs must equal transformers' log-softmax over the prompt on the same weights
(fp32): the top-k token for token, values close, and the prompt token's own rank; the same
whether a prompt runs in one step or is split over several (chunked prefill), and with a
warm prefix cache (a request with prompt_logprobs takes no hit: it needs every position)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from engine_prompts import prompts_of_lengths

from llm_engine import LLM, InvalidRequestError, SamplingParams

LENGTHS = [3, 47, 130]
TOP = 5


def hf_prompt_logprobs(model_dir: Path, prompts: list[list[int]]) -> list[torch.Tensor]:
    """[len - 1, vocab] log-probabilities of each next prompt token's position."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    with torch.inference_mode():
        return [torch.log_softmax(model(torch.tensor([ids])).logits[0, :-1].float(), dim=-1)
                for ids in prompts]


@pytest.fixture(scope="module")
def case(prepared_default: Path):
    from llm_engine.tokenizer import Tokenizer

    tok = Tokenizer.from_pretrained(prepared_default)
    prompts = prompts_of_lengths(tok, LENGTHS, seed=3)
    return prepared_default, prompts, hf_prompt_logprobs(prepared_default, prompts), tok


def run(llm: LLM, prompts: list[list[int]], top: int = TOP, max_tokens: int = 2):
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, prompt_logprobs=top)
    return llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)


def check(outs, prompts, expected, tok, top: int = TOP) -> None:
    for out, ids, lp in zip(outs, prompts, expected, strict=True):
        got = out.prompt_logprobs
        assert got is not None and len(got) == len(ids) and got[0] is None
        for j in range(1, len(ids)):
            row, entry, token = lp[j - 1], got[j], ids[j]
            values, top_ids = row.topk(top)
            assert list(entry)[:1] == [token]  # the prompt token first, as vLLM
            ranked = sorted((t for t in entry if entry[t].rank <= top), key=lambda t: entry[t].rank)
            assert ranked == top_ids.tolist(), f"position {j}"
            for t, v in zip(top_ids.tolist(), values.tolist(), strict=True):
                assert entry[t].logprob == pytest.approx(v, abs=2e-4)
            assert entry[token].logprob == pytest.approx(float(row[token]), abs=2e-4)
            assert entry[token].rank == int((row >= row[token]).sum())
            assert entry[token].decoded_token == tok.decode([token], skip_special_tokens=False)
            assert len(entry) in (top, top + 1)


def test_prompt_logprobs_match_transformers_in_one_step(case) -> None:
    model_dir, prompts, expected, tok = case
    llm = LLM(str(model_dir), max_model_len=1024, kv_cache_memory=128 << 20)
    outs = run(llm, prompts)
    check(outs, prompts, expected, tok)
    # Output tokens are untouched by the extra logits, and other requests pay nothing.
    plain = llm.generate([{"prompt_token_ids": p} for p in prompts],
                         SamplingParams(temperature=0.0, max_tokens=2), use_tqdm=False)
    assert [o.outputs[0].token_ids for o in plain] == [o.outputs[0].token_ids for o in outs]
    assert all(o.prompt_logprobs is None for o in plain)


def test_prompt_logprobs_the_same_over_chunked_prefill(case) -> None:
    model_dir, prompts, expected, tok = case
    # 16-token steps: the 130-token prompt is computed over 9 steps, beside the others.
    llm = LLM(str(model_dir), max_model_len=1024, kv_cache_memory=128 << 20, max_num_batched_tokens=16,
              max_num_seqs=4)
    check(run(llm, prompts), prompts, expected, tok)


def test_prompt_logprobs_the_same_when_preempted_and_recomputed(case) -> None:
    model_dir, prompts, expected, tok = case
    # 12 blocks of 16 tokens for 17 blocks' worth of requests (24 tokens each to generate),
    # chunked by 32: sequences are preempted and their prompts computed again from the start,
    # which must not add or change a prompt position's entry.
    llm = LLM(str(model_dir), max_model_len=192, num_gpu_blocks_override=12,
              max_num_batched_tokens=32, preemption_mode="recompute",
              enable_prefix_caching=False)
    check(run(llm, prompts, max_tokens=24), prompts, expected, tok)
    assert llm.llm_engine.get_stats().num_preemptions_recompute > 0


def test_prompt_logprobs_take_no_prefix_cache_hit(case) -> None:
    model_dir, prompts, expected, tok = case
    llm = LLM(str(model_dir), max_model_len=1024, kv_cache_memory=128 << 20)
    plain = SamplingParams(temperature=0.0, max_tokens=2)
    llm.generate([{"prompt_token_ids": prompts[2]}], plain, use_tqdm=False)
    again = llm.generate([{"prompt_token_ids": prompts[2]}], plain, use_tqdm=False)[0]
    assert again.num_cached_tokens >= 128  # the prompt's blocks are cached
    out = run(llm, prompts[2:], top=0)[0]
    assert out.num_cached_tokens == 0
    check([out], prompts[2:], expected[2:], tok, top=0)


def test_prompt_logprobs_range_is_checked() -> None:
    with pytest.raises(InvalidRequestError, match=r"prompt_logprobs must be in \[0, 20\]"):
        SamplingParams(prompt_logprobs=21)
