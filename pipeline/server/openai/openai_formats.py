"""What differs between /v1/chat/completions and /v1/completions answers: ids, object
names, the choice's shape, the log-probabilities' shape, the stream's opening chunk and where
the prompt's log-probabilities go. routes/openai.py serves both through one of these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from llm_engine import RequestOutput
from pipeline.server.openai.openai_outputs import chat_logprobs, completion_logprobs


@dataclass(frozen=True)
class CompletionFormat:
    """The legacy completions shapes (`text` choices)."""

    id_prefix: str = "cmpl"
    object: str = "text_completion"
    chunk_object: str = "text_completion"

    def choice(self, index: int, text: str, finish: str | None, delta: bool, lp: Any,
               prompt_lp: Any = None) -> dict[str, Any]:
        out = {"index": index, "text": text, "finish_reason": finish, "logprobs": lp}
        return out if delta else {**out, "prompt_logprobs": prompt_lp}

    def logprobs(self, tokenizer: Any, out: RequestOutput, top: int | None, start: int = 0,
                 offset: int = 0) -> Any:
        """The log-probabilities of `out`'s tokens from `start` (characters before them:
        `offset`); None when none were asked for."""
        o = out.outputs[0]
        if top is None or o.logprobs is None:
            return None
        return completion_logprobs(tokenizer, o.token_ids[start:], o.logprobs[start:], top,
                                   offset)

    def opening(self, indices: list[int]) -> list[dict[str, Any]] | None:
        """The choices of the stream's first chunk, before any token (None: no such chunk)."""
        return None

    def answer_extras(self, prompt_lps: list[Any]) -> dict[str, Any]:
        """Fields of the whole answer beyond id, choices and usage."""
        return {}


@dataclass(frozen=True)
class ChatFormat(CompletionFormat):
    """The chat shapes (`message` / `delta` choices)."""

    id_prefix: str = "chatcmpl"
    object: str = "chat.completion"
    chunk_object: str = "chat.completion.chunk"

    def choice(self, index: int, text: str, finish: str | None, delta: bool, lp: Any,
               prompt_lp: Any = None) -> dict[str, Any]:
        key = "delta" if delta else "message"
        msg = {"content": text} if delta else {"role": "assistant", "content": text}
        return {"index": index, key: msg, "finish_reason": finish, "logprobs": lp}

    def logprobs(self, tokenizer: Any, out: RequestOutput, top: int | None, start: int = 0,
                 offset: int = 0) -> Any:
        o = out.outputs[0]
        if top is None or o.logprobs is None:
            return None
        return chat_logprobs(tokenizer, o.token_ids[start:], o.logprobs[start:], top)

    def opening(self, indices: list[int]) -> list[dict[str, Any]] | None:
        return [{"index": i, "delta": {"role": "assistant", "content": ""},
                 "finish_reason": None, "logprobs": None} for i in indices]

    def answer_extras(self, prompt_lps: list[Any]) -> dict[str, Any]:
        # vLLM puts the chat's prompt log-probabilities on the response, not on a choice.
        return {"prompt_logprobs": prompt_lps[0]}


CHAT = ChatFormat()
COMPLETION = CompletionFormat()
