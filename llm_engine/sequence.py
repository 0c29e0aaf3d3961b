"""A request's state as it moves through the scheduler: tokens, KV blocks, output text."""

from __future__ import annotations

import enum
import time
from typing import Any

import torch

from llm_engine.outputs import PromptLogprobs
from llm_engine.sampling_params import SamplingParams


class SequenceStatus(enum.Enum):
    WAITING = enum.auto()
    RUNNING = enum.auto()
    SWAPPED = enum.auto()  # preempted with its KV blocks copied to host memory
    FINISHED = enum.auto()


class Sequence:
    """One request. `token_ids` holds the prompt and then every generated token.

    `num_computed_tokens` counts the tokens whose K/V sit in the cache; the scheduler
    moves it forward by whatever it schedules, so prefill chunks, prefix-cache hits and
    decodes are one mechanism. `spec_token_ids` are unverified draft tokens that follow
    `token_ids` (speculative decoding): owed like any token, but never part of `token_ids`
    (nor of a cached block's hash) until the model has accepted them.
    """

    def __init__(
        self,
        request_id: str,
        prompt: str | None,
        prompt_token_ids: list[int],
        params: SamplingParams,
        arrival_time: float | None = None,
    ) -> None:
        self.request_id = request_id
        self.prompt = prompt
        self.token_ids = list(prompt_token_ids)
        self.num_prompt_tokens = len(prompt_token_ids)
        self.params = params
        self.arrival_time = arrival_time if arrival_time is not None else time.monotonic()
        self.status = SequenceStatus.WAITING
        self.num_computed_tokens = 0
        self.num_cached_tokens = 0
        self.block_table: list[int] = []
        # While SWAPPED: the host blocks holding what `block_table` held, in the same order.
        self.host_block_table: list[int] = []
        self.block_hashes: list[int] = []
        self.spec_token_ids: list[int] = []
        self.logprobs: list[dict[int, float]] | None = [] if params.logprobs is not None else None
        self.cumulative_logprob = 0.0
        # Filled by the driver's model runner as the prompt's chunks are computed.
        self.prompt_logprobs: PromptLogprobs | None = (
            [None] if params.prompt_logprobs is not None else None)
        self.output_text = ""
        self.finish_reason: str | None = None
        self.stop_reason: int | str | None = None
        self.first_scheduled_time: float | None = None
        # Structured output: the grammar matcher (StructuredOutputManager.matcher).
        self.grammar: Any = None
        self.first_token_time: float | None = None
        self.finished_time: float | None = None
        self.generator: torch.Generator | None = None
        if params.seed is not None:
            self.generator = torch.Generator().manual_seed(params.seed)

    @property
    def num_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def prompt_token_ids(self) -> list[int]:
        return self.token_ids[: self.num_prompt_tokens]

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    def __repr__(self) -> str:
        return (f"Sequence({self.request_id!r}, tokens={self.num_tokens}, "
                f"computed={self.num_computed_tokens}, status={self.status.name})")
