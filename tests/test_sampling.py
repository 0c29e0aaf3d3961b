"""Every SamplingParams field has an effect, seeds reproduce, bad values are named."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import torch

from llm_engine import LLM, SamplingParams

STORY = "Write a short story about a bank and its quarterly earnings report."
# The chat template's own text: the instruct model answers it at length.
PROMPT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
          f"<|im_end|>\n<|im_start|>user\n{STORY}<|im_end|>\n<|im_start|>assistant\n")
EOS_PROMPT = "What is revenue? Answer:"  # the model answers this with EOS at once


@pytest.fixture(scope="module")
def llm(prepared_default: Path) -> LLM:
    return LLM(str(prepared_default), kv_cache_memory=256 << 20, max_model_len=2048)


def run(llm: LLM, prompt: str = PROMPT, **kw):
    kw.setdefault("max_tokens", 24)
    return llm.generate([prompt], SamplingParams(**kw), use_tqdm=False)[0].outputs[0]


def run_batch(llm: LLM, *params: dict):
    """One request a dict of sampling fields, all in one batch (each with its own sampler)."""
    sampling = [SamplingParams(**{"max_tokens": 24, **kw}) for kw in params]
    outs = llm.generate([PROMPT] * len(sampling), sampling, use_tqdm=False)
    return [o.outputs[0] for o in outs]


# The stop tests' reference: PROMPT's greedy answer, unstopped, long enough for all of them
# (a stop token among the first 24 tokens, stop strings in the first 40). Generated once for
# the module, not once a test: each test still compares its stopped runs with this engine's
# greedy text; that the engine's greedy runs agree with each other is
# test_greedy_is_argmax_and_deterministic's claim.
GREEDY_TOKENS = 40


@pytest.fixture(scope="module")
def greedy(llm: LLM):
    out = run(llm, temperature=0, max_tokens=GREEDY_TOKENS)
    assert len(out.token_ids) == GREEDY_TOKENS and out.finish_reason == "length"
    return out


def test_greedy_is_argmax_and_deterministic(llm: LLM) -> None:
    a, b = run(llm, temperature=0), run(llm, temperature=0)
    assert a.token_ids == b.token_ids and len(a.token_ids) == 24
    assert a.finish_reason == "length"


def test_seed_reproduces_and_differs(llm: LLM) -> None:
    a, b, c, greedy = run_batch(llm, {"temperature": 1.0, "seed": 1},
                                {"temperature": 1.0, "seed": 1},
                                {"temperature": 1.0, "seed": 2}, {"temperature": 0})
    assert a.token_ids == b.token_ids
    assert a.token_ids != c.token_ids
    assert a.token_ids != greedy.token_ids
    assert run(llm, temperature=1.0, seed=1).token_ids == a.token_ids  # and alone


def test_truncation_to_one_token_equals_greedy(llm: LLM) -> None:
    greedy, *truncated = run_batch(llm, {"temperature": 0},
                                   *({"temperature": 1.0, "seed": 3, field: value}
                                     for field, value in (("top_k", 1), ("top_p", 1e-6),
                                                          ("min_p", 1.0))))
    for out in truncated:
        assert out.token_ids == greedy.token_ids


def test_temperature_spreads_choices(llm: LLM) -> None:
    outs = run_batch(llm, *({"temperature": t, "seed": s, "max_tokens": 8}
                            for t in (0.05, 1.5) for s in range(4)))
    cold, hot = ({tuple(o.token_ids) for o in outs[k:k + 4]} for k in (0, 4))
    assert len(hot) > len(cold)


def _max_repeats(ids: list[int]) -> int:
    return max(Counter(ids).values())


def test_penalties_reduce_repetition(llm: LLM) -> None:
    penalties = [("repetition_penalty", 1.8), ("frequency_penalty", 1.5),
                 ("presence_penalty", 1.5)]
    base, *outs = run_batch(llm, {"temperature": 0, "max_tokens": 64},
                            *({"temperature": 0, "max_tokens": 64, field: value}
                              for field, value in penalties))
    for (field, _), out in zip(penalties, outs, strict=True):
        assert out.token_ids != base.token_ids, field
        assert _max_repeats(out.token_ids) <= _max_repeats(base.token_ids), field


def test_min_tokens_and_ignore_eos(llm: LLM) -> None:
    eos_first = run(llm, EOS_PROMPT, temperature=0)
    assert eos_first.finish_reason == "stop" and len(eos_first.token_ids) == 1
    held = run(llm, EOS_PROMPT, temperature=0, min_tokens=5)
    eos = llm.llm_engine.eos_token_ids
    assert len(held.token_ids) >= 5 and not eos & set(held.token_ids[:5])
    ignored = run(llm, EOS_PROMPT, temperature=0, ignore_eos=True, max_tokens=10)
    assert len(ignored.token_ids) == 10 and ignored.finish_reason == "length"


def test_stop_token_ids(llm: LLM, greedy) -> None:
    ids = greedy.token_ids
    stop_id = ids[5]
    out = run(llm, temperature=0, stop_token_ids=[stop_id])
    first = ids.index(stop_id)
    assert out.token_ids == ids[: first + 1]
    assert out.finish_reason == "stop" and out.stop_reason == stop_id


def test_stop_strings_are_cut(llm: LLM, greedy) -> None:
    text = greedy.text
    stop = text[12:17]
    assert stop.strip()
    out = run(llm, temperature=0, max_tokens=40, stop=[stop, "zzzz-never"])
    assert out.text == text[: text.index(stop)]
    assert out.finish_reason == "stop" and out.stop_reason == stop
    kept = run(llm, temperature=0, max_tokens=40, stop=stop, include_stop_str_in_output=True)
    assert kept.text == text[: text.index(stop) + len(stop)]


def test_max_tokens(llm: LLM) -> None:
    out = run(llm, temperature=0, max_tokens=3)
    assert len(out.token_ids) == 3 and out.finish_reason == "length"


def test_logprobs_match_transformers(llm: LLM, prepared_default: Path) -> None:
    from transformers import AutoModelForCausalLM

    out = run(llm, temperature=0, max_tokens=4, logprobs=3)
    assert len(out.logprobs) == 4
    for step, token in zip(out.logprobs, out.token_ids, strict=True):
        assert token in step and len(step) >= 3
        assert step[token] == max(step.values())  # greedy picks the most likely token
    tok = llm.get_tokenizer()
    assert tok.apply_chat_template([{"role": "user", "content": STORY}]) == PROMPT
    ids = tok.encode(PROMPT)
    model = AutoModelForCausalLM.from_pretrained(prepared_default, dtype=torch.float32)
    with torch.inference_mode():
        ref = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), -1)
    top = ref.topk(3)
    for lp, tid in zip(top.values.tolist(), top.indices.tolist(), strict=True):
        assert out.logprobs[0][tid] == pytest.approx(lp, abs=1e-3)
    assert out.cumulative_logprob == pytest.approx(
        sum(s[t] for s, t in zip(out.logprobs, out.token_ids, strict=True)))


def test_skip_special_tokens(llm: LLM) -> None:
    # The answer is EOS alone, whose text, as any stop token's, shows only when asked for.
    shown = run(llm, EOS_PROMPT, temperature=0, skip_special_tokens=False,
                include_stop_str_in_output=True)
    hidden = run(llm, EOS_PROMPT, temperature=0, include_stop_str_in_output=True)
    assert hidden.text == "" and shown.text != ""
    assert run(llm, EOS_PROMPT, temperature=0, skip_special_tokens=False).text == ""


@pytest.mark.parametrize("field,value,allowed", [
    ("temperature", -0.5, "in [0, 100]"),
    ("top_p", 0.0, "in (0, 1]"),
    ("top_k", -3, "-1 or 0"),
    ("min_p", 1.5, "in [0, 1]"),
    ("repetition_penalty", 0.0, "in (0, 2]"),
    ("presence_penalty", 3.0, "in [-2, 2]"),
    ("frequency_penalty", -2.5, "in [-2, 2]"),
    ("max_tokens", 0, ">= 1"),
    ("min_tokens", -1, ">= 0"),
    ("logprobs", 50, "in [0, 20]"),
    ("seed", -1, "in [0, 2**63)"),
    ("stop", [""], "non-empty"),
    ("stop_token_ids", [-4], "non-negative"),
])
def test_bad_values_name_the_field(field: str, value: object, allowed: str) -> None:
    with pytest.raises(ValueError, match=rf"^{field} must be .*{re.escape(allowed)}"):
        SamplingParams(**{field: value})


@pytest.mark.parametrize("field", ["stop_token_ids", "logprob_token_ids"])
def test_out_of_vocabulary_ids_are_refused_per_request(llm: LLM, field: str) -> None:
    engine = llm.llm_engine
    vocab = engine.model_config.vocab_size
    with pytest.raises(ValueError, match=rf"^{field} has token id {vocab + 7}, outside the "
                                         rf"model's vocabulary of {vocab} \(ids 0 to {vocab - 1}\)"):
        engine.add_request("oov", PROMPT, SamplingParams(**{field: [3, vocab + 7]}))
    assert "oov" not in engine.requests and not engine.has_unfinished_requests()
    # The batch it would have joined runs as usual.
    assert run(llm, temperature=0, max_tokens=3).finish_reason == "length"


def test_stop_strings_wait_for_min_tokens(llm: LLM, greedy) -> None:
    """vLLM: a stop string only counts in text generated after the first min_tokens tokens."""
    head = llm.get_tokenizer().decode(greedy.token_ids[:10])
    # A word of the first ten tokens' text that shows again later.
    stop = next(w for w in head.split() if len(w) > 3 and greedy.text.find(w, len(head)) != -1)
    early = run(llm, temperature=0, max_tokens=40, stop=[stop])
    assert early.text == greedy.text[: greedy.text.index(stop)]
    held = run(llm, temperature=0, max_tokens=40, stop=[stop], min_tokens=10)
    assert held.finish_reason == "stop" and held.stop_reason == stop
    assert held.text == greedy.text[: greedy.text.index(stop, len(head) - len(stop) + 1)]
    assert held.text.startswith(head)


def test_stop_token_text_is_left_out_unless_asked_for(llm: LLM, greedy) -> None:
    tok = llm.get_tokenizer()
    stop_id = greedy.token_ids[5]
    first = greedy.token_ids.index(stop_id)
    out = run(llm, temperature=0, stop_token_ids=[stop_id])
    assert out.token_ids == greedy.token_ids[: first + 1] and out.stop_reason == stop_id
    assert out.text == tok.decode(greedy.token_ids[:first])
    kept = run(llm, temperature=0, stop_token_ids=[stop_id], include_stop_str_in_output=True)
    assert kept.text == tok.decode(greedy.token_ids[: first + 1])
    assert kept.text != out.text
