"""Sampling parameters, with vLLM's names and checks."""

from __future__ import annotations

from dataclasses import dataclass, field

from llm_engine.engine.errors import InvalidRequestError
from llm_engine.structured_output import StructuredOutputsParams


@dataclass
class SamplingParams:
    """How to pick each next token and when to stop.

    `temperature=0` means greedy. Penalties follow vLLM: `repetition_penalty` over prompt
    and output tokens (>1 discourages), `presence_penalty`/`frequency_penalty` over output
    tokens only. `logprobs=n` returns the top-n log-probabilities of each step;
    `prompt_logprobs=n` those of each prompt token (its own, with its rank, and the top-n),
    as vLLM. A request with prompt_logprobs takes no prefix-cache hit: it needs the logits
    of every prompt position, and a cached block keeps K/V only (vLLM v1 does the same).
    """

    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    seed: int | None = None
    stop: list[str] | str | None = None
    stop_token_ids: list[int] | None = None
    max_tokens: int | None = 16
    min_tokens: int = 0
    ignore_eos: bool = False
    logprobs: int | None = None
    prompt_logprobs: int | None = None
    # finrag extension: always report these tokens' log-probabilities too (with `logprobs`),
    # so a caller can score fixed choices (intent labels) in a single step.
    logprob_token_ids: list[int] | None = None
    skip_special_tokens: bool = True
    include_stop_str_in_output: bool = False
    # vLLM's structured output: a JSON schema, any JSON object, a regex, a choice or a grammar
    # (a StructuredOutputsParams, or a dict of its fields).
    structured_outputs: StructuredOutputsParams | None = None
    stop_strings: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> InvalidRequestError:
            return InvalidRequestError(f"{name} must be {allowed}, got {getattr(self, name)!r}")

        if isinstance(self.structured_outputs, dict):
            self.structured_outputs = StructuredOutputsParams(**self.structured_outputs)
        if self.n != 1:
            raise bad("n", "1 (parallel sampling is not supported)")
        if not 0.0 <= self.temperature <= 100.0:
            raise bad("temperature", "in [0, 100]")
        if not 0.0 < self.top_p <= 1.0:
            raise bad("top_p", "in (0, 1]")
        if self.top_k < -1:
            raise bad("top_k", "-1 or 0 (disabled) or a positive integer")
        if not 0.0 <= self.min_p <= 1.0:
            raise bad("min_p", "in [0, 1]")
        if not 0.0 < self.repetition_penalty <= 2.0:
            raise bad("repetition_penalty", "in (0, 2]")
        if not -2.0 <= self.presence_penalty <= 2.0:
            raise bad("presence_penalty", "in [-2, 2]")
        if not -2.0 <= self.frequency_penalty <= 2.0:
            raise bad("frequency_penalty", "in [-2, 2]")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise bad("max_tokens", ">= 1")
        if self.min_tokens < 0 or (self.max_tokens is not None and self.min_tokens > self.max_tokens):
            raise bad("min_tokens", ">= 0 and <= max_tokens")
        if self.logprobs is not None and not 0 <= self.logprobs <= 20:
            raise bad("logprobs", "in [0, 20]")
        if self.prompt_logprobs is not None and not 0 <= self.prompt_logprobs <= 20:
            raise bad("prompt_logprobs", "in [0, 20]")
        if self.logprob_token_ids and self.logprobs is None:
            self.logprobs = 0
        if any(not isinstance(t, int) or t < 0 for t in self.logprob_token_ids or []):
            raise bad("logprob_token_ids", "a list of non-negative token ids")
        if self.seed is not None and not 0 <= self.seed < 2**63:
            raise bad("seed", "in [0, 2**63)")
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        if any(not isinstance(s, str) or not s for s in stops):
            raise bad("stop", "a non-empty string or a list of non-empty strings")
        self.stop_strings = stops
        if any(not isinstance(t, int) or t < 0 for t in self.stop_token_ids or []):
            raise bad("stop_token_ids", "a list of non-negative token ids")
        self.stop_token_ids = list(self.stop_token_ids or [])
        if self.top_k == -1:
            self.top_k = 0

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0
