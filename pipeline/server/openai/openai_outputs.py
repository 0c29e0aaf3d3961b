"""OpenAI's response pieces from engine outputs: choices, log-probabilities in the chat and
the completions shapes, usage. The shapes are vLLM's (tests/fixtures/vllm_protocol.json)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _token_text(tokenizer: Any, tid: int) -> str:
    return tokenizer.decode([tid], skip_special_tokens=False)


def chat_logprobs(tokenizer: Any, token_ids: Sequence[int], logprobs: Sequence[dict[int, float]],
                  top: int) -> dict[str, Any]:
    """`{"content": [{token, logprob, bytes, top_logprobs}]}` for each generated token."""
    content = []
    for tid, lps in zip(token_ids, logprobs, strict=False):
        text = _token_text(tokenizer, tid)
        ranked = sorted(lps.items(), key=lambda kv: -kv[1])[:top]
        content.append({
            "token": text, "logprob": lps[tid], "bytes": list(text.encode()),
            "top_logprobs": [{"token": (t := _token_text(tokenizer, k)), "logprob": v,
                              "bytes": list(t.encode())} for k, v in ranked]})
    return {"content": content}


def completion_logprobs(tokenizer: Any, token_ids: Sequence[int],
                        logprobs: Sequence[dict[int, float]], top: int,
                        offset: int = 0) -> dict[str, Any]:
    """`{tokens, token_logprobs, top_logprobs, text_offset}` (the legacy completions shape)."""
    tokens, values, tops, offsets = [], [], [], []
    at = offset
    for tid, lps in zip(token_ids, logprobs, strict=False):
        text = _token_text(tokenizer, tid)
        tokens.append(text)
        values.append(lps[tid])
        ranked = sorted(lps.items(), key=lambda kv: -kv[1])[:top]
        tops.append({_token_text(tokenizer, k): v for k, v in ranked} if top else None)
        offsets.append(at)
        at += len(text)
    return {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops,
            "text_offset": offsets}


def prompt_logprobs(entries: Sequence[dict[int, Any] | None] | None
                    ) -> list[dict[str, dict[str, Any]] | None] | None:
    """vLLM's prompt_logprobs: per prompt token, {token id: {logprob, rank, decoded_token}};
    -inf clamped to -9999.0 as vLLM does (JSON has no infinity)."""
    if entries is None:
        return None
    return [None if entry is None else {
        str(tid): {"logprob": max(lp.logprob, -9999.0), "rank": lp.rank,
                   "decoded_token": lp.decoded_token} for tid, lp in entry.items()}
        for entry in entries]


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}
