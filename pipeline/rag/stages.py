"""The three stages: intent (one scored prefill), retrieve (micro-batched), generate (stream).

Intent: the labels are shown as lettered options in the system text ("A) finance question,
e.g. ...") and the prompt ends with "Kind (A, B or C):"; one step with `max_tokens=1` and
`logprob_token_ids` = the letters' token ids returns each option's log-probability after one
prefill, without free-form generation. Letters rather than label words because single
letters are single, distinct tokens whatever the labels are called (the label words' first
tokens may collide or be split oddly), and the score of one token is the label's whole
log-likelihood, with no length bias between long and short labels. A small model favours
one letter whatever the question, so the scores are calibrated (Zhao et al., 2021,
"Calibrate before use"): the log-probs of a content-free question, measured once at
warm-up, are subtracted from every request's. Which label the scores lead to is
`RoutingPolicy`'s decision (routing.py): only a confident one sends a question away.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from llm_engine import AsyncLLMEngine, InvalidRequestError, RequestOutput, SamplingParams
from pipeline.rag.prompts import (
    answer_tail,
    build_prompt_ids,
    intent_tail,
    option_token_ids,
    system_text,
)
from pipeline.rag.repetition import RepeatGuard
from pipeline.rag.routing import RoutingPolicy

_ids = itertools.count()


@dataclass
class IntentResult:
    label: str
    scores: dict[str, float]
    prompt_tokens: int
    cached_tokens: int


class IntentStage:
    def __init__(self, engine: AsyncLLMEngine, tokenizer: Any, labels: Sequence[Any],
                 system_prompt: str, margin: float = 0.0, finance_cues: bool = True) -> None:
        self.engine, self.tokenizer, self.labels = engine, tokenizer, list(labels)
        self.policy = RoutingPolicy.for_labels(self.labels, margin, finance_cues)
        self.system = system_text(system_prompt, self.labels)
        self.tail = intent_tail(self.labels)
        self.option_ids = option_token_ids(tokenizer, len(self.labels))
        self.baseline = [0.0] * len(self.labels)

    def prompt_ids(self, question: str) -> list[int]:
        return build_prompt_ids(self.tokenizer, self.system, question, self.tail)

    async def _logprobs(self, question: str, request_id: str) -> tuple[list[float], RequestOutput]:
        params = SamplingParams(max_tokens=1, temperature=0.0,
                                logprob_token_ids=self.option_ids)
        last = None
        async for out in self.engine.generate({"prompt_token_ids": self.prompt_ids(question)},
                                              params, request_id):
            last = out
        assert last is not None and last.outputs[0].logprobs
        step = last.outputs[0].logprobs[0]
        return [float(step[t]) for t in self.option_ids], last

    async def calibrate(self) -> None:
        """Measure the content-free scores that `classify` subtracts."""
        self.baseline = [0.0] * len(self.labels)
        self.baseline, _ = await self._logprobs("", f"intent-cal-{next(_ids)}")

    async def classify(self, question: str, request_id: str | None = None) -> IntentResult:
        raw, out = await self._logprobs(question, request_id or f"intent-{next(_ids)}")
        scores = {lab.name: r - b for lab, r, b in zip(self.labels, raw, self.baseline,
                                                       strict=True)}
        return IntentResult(self.policy.decide(scores, question), scores, len(out.prompt_token_ids),
                            out.num_cached_tokens)

    def label(self, name: str) -> Any:
        return next(lab for lab in self.labels if lab.name == name)

    def retrieval_label(self) -> Any:
        """The first label that goes on to retrieval (no fixed reply)."""
        return next(lab for lab in self.labels if lab.reply is None)


@dataclass
class GenerateStep:
    """One step of an answer: the text settled since the last step, and the whole so far."""

    delta: str
    text: str
    finish_reason: str | None  # set on the last step
    output: RequestOutput


class GenerateStage:
    """Answers in prose from the passages; the prompt shares the intent prompt's head.

    An answer stops at the end of its line or paragraph (`stop`), at a copied table row
    (its cell separator is a stop string too), or where it starts repeating itself (a word
    n-gram seen twice, `repeat_ngram`): the text shown and returned ends before the repeat.
    """

    def __init__(self, engine: AsyncLLMEngine, tokenizer: Any, system: str, instruction: str,
                 max_passage_chars: int, max_model_len: int, stop: Sequence[str] = (),
                 repeat_ngram: int = 0) -> None:
        self.engine, self.tokenizer, self.system = engine, tokenizer, system
        self.instruction, self.max_chars = instruction, max_passage_chars
        self.max_model_len = max_model_len
        self.stop, self.repeat_ngram = list(stop), repeat_ngram
        # The question is in the head, and again wherever the instruction names it.
        self.question_copies = 1 + instruction.count("{question}")

    def bare_prompt_ids(self, question: str) -> list[int]:
        """The prompt with no passage: the least a question needs of the context."""
        return build_prompt_ids(self.tokenizer, self.system, question,
                                answer_tail([], self.instruction, self.max_chars, question))

    def prompt_ids(self, question: str, passages: Sequence[Any], max_tokens: int) -> tuple[
            list[int], int]:
        """Token ids, and how many passages fit the model's context with the answer.

        Raises InvalidRequestError when the question and max_tokens leave no room even with
        no passage."""
        n = len(passages)
        while True:
            tail = answer_tail(passages[:n], self.instruction, self.max_chars, question)
            ids = build_prompt_ids(self.tokenizer, self.system, question, tail)
            if len(ids) + max_tokens <= self.max_model_len:
                return ids, n
            if n == 0:
                raise InvalidRequestError(
                    f"question: with max_tokens={max_tokens} it does not fit the model's "
                    f"context ({len(ids)} prompt tokens without passages, max_model_len="
                    f"{self.max_model_len}); shorten the question or lower max_tokens")
            n -= 1

    def sampling_params(self, max_tokens: int, temperature: float) -> SamplingParams:
        return SamplingParams(max_tokens=max_tokens, temperature=temperature,
                              stop=self.stop or None)

    async def stream(self, prompt_ids: list[int], params: SamplingParams,
                     request_id: str | None = None) -> AsyncIterator[GenerateStep]:
        """A step after each engine step that settles text; the last has finish_reason."""
        # Under a grammar a repeated n-gram is structure (keys, array items), not a loop, and
        # a cut would leave the document unfinished.
        guard = (RepeatGuard(self.repeat_ngram)
                 if self.repeat_ngram and params.structured_outputs is None else None)
        sent = 0
        steps = self.engine.generate({"prompt_token_ids": prompt_ids}, params,
                                     request_id or f"gen-{next(_ids)}")
        try:
            async for out in steps:
                text, finish = out.outputs[0].text, out.outputs[0].finish_reason
                if guard is not None:
                    guard.feed(text, final=out.finished)
                    if guard.cut is not None:  # repeating itself: done (the request aborts)
                        text, finish = text[:guard.cut], "stop"
                    elif not out.finished:
                        text = text[:guard.safe]
                if len(text) > sent or finish is not None:
                    yield GenerateStep(text[sent:], text, finish, out)
                    sent = len(text)
                if finish is not None:
                    return
        finally:
            await steps.aclose()  # aborts the request if it is still running
