"""What the engine returns, shaped like vLLM's RequestOutput."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Logprob:
    """vLLM's: a token's log-probability, its rank in the distribution (1 = most likely),
    and its text alone."""

    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


# Per prompt token: None for the first (nothing precedes it), else {token id: Logprob} with
# the prompt's own token and the top-k of the model's distribution at that position.
PromptLogprobs = list[dict[int, Logprob] | None]


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, float]] | None
    finish_reason: str | None = None  # "stop", "length" or "abort"
    stop_reason: int | str | None = None

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
    num_cached_tokens: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    # With SamplingParams.prompt_logprobs, once the whole prompt is computed.
    prompt_logprobs: PromptLogprobs | None = None
