"""Limits of a request that depend on the served model and the settings, checked before queuing.

Some ranges are known only once the model is loaded: the largest `max_tokens`
(`max_tokens_limit`, else max_model_len - 1) and the vocabulary size (`top_k`, token ids).
A request field marked with `bounded(name)` gets that maximum in the OpenAPI schema
(patched when /openapi.json is first asked for, see `patch_schema`) and is refused above
it with a message that names the field and the setting, never clamped. The token checks
refuse a question or a prompt that cannot fit max_model_len with its max_tokens, with the
numbers, and give the tokens a request holds for admission control.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field

from pipeline.server.errors import RequestRejected

LIMIT = "x-finrag-limit"
_WHY = {"max_tokens": "the server's max_tokens_limit setting, else max_model_len - 1",
        "vocab_size": "the model's vocabulary size",
        "max_token_id": "the model's vocabulary size - 1"}
# Python's whitespace (str.isspace), for a JSON-Schema pattern that says "not only blanks".
WHITESPACE = "".join(chr(i) for i in range(0x3001) if chr(i).isspace())
NOT_BLANK = f"[^{WHITESPACE}]"
# vLLM's "greedy" epsilon. Far below it logits / temperature overflows float32 and the
# sampler has nothing left to draw from (schemathesis found 5e-324); 0 means greedy.
MIN_TEMPERATURE = 1e-5


def bounded(limit: str, default: Any = None, **kwargs: Any) -> Any:
    """A Field (an int, or a list of ints) whose maximum is the served model's `limit`."""
    extra = {LIMIT: limit, **kwargs.pop("json_schema_extra", {})}
    return Field(default, json_schema_extra=extra, **kwargs)


def _temperature(value: float | None) -> float | None:
    if value is not None and 0.0 < value < MIN_TEMPERATURE:
        raise ValueError(f"give 0 (greedy) or {MIN_TEMPERATURE} to 2")
    return value


def temperature(default: float | None) -> Any:
    """The sampling temperature: 0 (greedy) or MIN_TEMPERATURE to 2."""
    return Field(default, description=f"0 (greedy) or {MIN_TEMPERATURE} to 2",
                 json_schema_extra={"not": {"exclusiveMinimum": 0,
                                            "exclusiveMaximum": MIN_TEMPERATURE}})


Temperature = Annotated[float, Field(ge=0.0, le=2.0), AfterValidator(_temperature)]


@dataclass(frozen=True)
class RequestLimits:
    max_tokens: int
    vocab_size: int
    max_model_len: int

    @classmethod
    def of(cls, app: Any) -> RequestLimits:
        pipe = app.state.pipeline
        engine = pipe.engine
        return cls(pipe.settings.max_request_tokens(engine.max_model_len),
                   engine.model_config.vocab_size, engine.max_model_len)

    @property
    def max_token_id(self) -> int:
        return self.vocab_size - 1

    def check(self, body: BaseModel) -> None:
        """Refuse a marked field over its maximum, naming the field and where it comes from."""
        for name, info in type(body).model_fields.items():
            extra = info.json_schema_extra
            if not isinstance(extra, dict) or LIMIT not in extra:
                continue
            value, limit = getattr(body, name), getattr(self, str(extra[LIMIT]))
            values = value if isinstance(value, list) else [value]
            top = max((v for v in values if isinstance(v, int)), default=None)
            if top is not None and top > limit:
                raise RequestRejected(f"{name}: at most {limit} on this server "
                                      f"({_WHY[str(extra[LIMIT])]}), got {top}")

    def patch_schema(self, schema: dict[str, Any]) -> None:
        """Write each marked field's maximum into the OpenAPI schema (ints, or int items)."""

        def bound(node: dict[str, Any], limit: int) -> None:
            for branch in node.get("anyOf", [node]):
                if branch.get("type") == "integer":
                    branch["maximum"] = limit
                elif branch.get("type") == "array" and branch.get("items", {}).get(
                        "type") == "integer":
                    branch["items"]["maximum"] = limit

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                if LIMIT in node:
                    bound(node, getattr(self, node[LIMIT]))
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(schema)

    # -- tokens -------------------------------------------------------------------------
    def check_prompt(self, n_prompt: int, max_tokens: int | None) -> None:
        """A /v1 prompt of `n_prompt` tokens must leave room for `max_tokens`."""
        if n_prompt == 0:
            raise RequestRejected("prompt: empty; send at least one token of text")
        if n_prompt >= self.max_model_len:
            raise RequestRejected(
                f"prompt: {n_prompt} tokens is too long; this model takes at most "
                f"{self.max_model_len - 1} prompt tokens (max_model_len={self.max_model_len})")
        if max_tokens is not None and n_prompt + max_tokens > self.max_model_len:
            raise RequestRejected(
                f"this model's maximum context length is {self.max_model_len} tokens, but "
                f"{n_prompt + max_tokens} were requested ({n_prompt} in the prompt, {max_tokens} "
                f"in max_tokens): lower max_tokens to at most {self.max_model_len - n_prompt} "
                "or shorten the prompt")


def ask_tokens(pipe: Any, question: str, top_k: int | None, max_tokens: int | None) -> int:
    """Refuse a question too long for the model with this max_tokens; else the tokens /ask holds.

    The generation prompt drops passages until it fits, so the question fits when the prompt
    with no passage leaves room for max_tokens. The count for admission is the intent prompt,
    the generation prompt with its passages at their bound (max_passage_chars / 4 tokens
    each) and max_tokens.
    """
    s = pipe.settings
    length = pipe.engine.max_model_len
    answer = max_tokens or s.max_tokens
    bare = len(pipe.generator.bare_prompt_ids(question))
    intent = len(pipe.intent.prompt_ids(question))
    if bare + answer > length or intent >= length:
        n_question = len(pipe.tokenizer.encode(" ".join(question.split()),
                                               add_special_tokens=False,
                                               split_special_tokens=True))
        copies = pipe.generator.question_copies
        template = bare - copies * n_question
        twice = "" if copies == 1 else f", which holds the question {copies} times"
        raise RequestRejected(
            f"question: {n_question} tokens is too long: with max_tokens={answer}, this model "
            f"(max_model_len={length}) takes questions of at most "
            f"{max((length - answer - template) // copies, 0)} tokens ({template} go to the "
            f"prompt template{twice}); shorten the question or lower max_tokens")
    passages = (top_k or s.top_k) * math.ceil(s.max_passage_chars / 4)
    return intent + min(bare + passages, length - answer) + answer
