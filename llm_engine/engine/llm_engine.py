"""The synchronous engine: requests in, one scheduler step at a time, outputs out."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable
from collections.abc import Sequence as Seq
from dataclasses import replace
from typing import Any

from tqdm import tqdm

from llm_engine.config import EngineConfig, ModelConfig
from llm_engine.distributed.worker import WorkerDiedError
from llm_engine.engine.block_manager import BlockManager
from llm_engine.engine.detokenizer import Detokenizer, find_stop_string, visible_text
from llm_engine.engine.engine_stats import EngineStats, collect_stats
from llm_engine.engine.errors import InvalidRequestError, StepFailedError
from llm_engine.engine.executor import create_executor
from llm_engine.engine.scheduler import Scheduler, SchedulerOutput
from llm_engine.engine.swap_space import HostAllocator
from llm_engine.grammar_service import GrammarService
from llm_engine.outputs import CompletionOutput, PromptLogprobs, RequestOutput
from llm_engine.sampling_params import SamplingParams
from llm_engine.sequence import Sequence
from llm_engine.spec_decode.metrics import SpecDecodeStats
from llm_engine.spec_decode.ngram_proposer import NgramProposer
from llm_engine.structured_output import StructuredOutputManager
from llm_engine.tokenizer import Tokenizer
from llm_engine.utils.model_path import resolve_model

PromptType = str | dict[str, Any] | list[int]


class LLMEngine:
    """vLLM's engine interface: `add_request`, `step`, `abort`, `has_unfinished_requests`.

    `host_allocator` provides the swap space's host memory (see swap_space.HostAllocator);
    by default it is page-locked where CUDA is present.
    """

    def __init__(self, config: EngineConfig, host_allocator: HostAllocator | None = None) -> None:
        self.config = config
        self.model_dir = resolve_model(config.model, config.engines_dir)
        self.model_config = ModelConfig.from_pretrained(self.model_dir)
        self.tokenizer = None if config.skip_tokenizer_init else Tokenizer.from_pretrained(self.model_dir)
        eos = set(self.model_config.eos_token_ids)
        if self.tokenizer is not None:
            eos |= set(self.tokenizer.stop_token_ids)
        self.eos_token_ids = eos
        self.max_model_len = config.resolve_max_model_len(self.model_config)
        # Resolved once, here: every rank's runner and the CUDA graphs read it from the config.
        config = self.config = replace(config, max_model_len=self.max_model_len)
        # Fails at start, naming both token counts and what to change, when one sequence
        # of max_model_len tokens cannot fit the KV cache.
        self.executor = create_executor(config, self.model_config, self.model_dir, eos,
                                        host_allocator)
        self.block_manager = BlockManager(self.executor.num_blocks, config.block_size,
                                          config.enable_prefix_caching,
                                          self.executor.num_host_blocks,
                                          config.prefix_caching_hash_algo)
        self.scheduler = Scheduler(config, self.block_manager)
        self.detokenizer = Detokenizer(self.tokenizer) if self.tokenizer is not None else None
        self.requests: dict[str, Sequence] = {}
        self._ids = itertools.count()
        self._structured: StructuredOutputManager | None = None  # made at the first use
        self._structured_lock = threading.Lock()
        # Every grammar is compiled there, off the engine thread, bounded (GrammarService).
        self.grammars = GrammarService(self.structured_outputs)
        spec = config.speculative_config
        self.proposer = NgramProposer(spec) if spec is not None else None
        self.spec_stats = SpecDecodeStats()

    @classmethod
    def from_engine_args(cls, **kwargs: Any) -> LLMEngine:
        return cls(EngineConfig(**kwargs))

    def shutdown(self) -> None:
        """Stop the tensor-parallel workers, if any (garbage collection does it too)."""
        self.grammars.shutdown()
        self.executor.shutdown()

    # -- requests -------------------------------------------------------------------
    def _tokenize(self, prompt: PromptType) -> tuple[str | None, list[int]]:
        if isinstance(prompt, dict):
            if "prompt_token_ids" in prompt:
                return prompt.get("prompt"), list(prompt["prompt_token_ids"])
            prompt = prompt["prompt"]
        if isinstance(prompt, list):
            return None, list(prompt)
        if self.tokenizer is None:
            raise InvalidRequestError("text prompts need a tokenizer; pass prompt_token_ids instead")
        return prompt, self.tokenizer.encode(prompt)

    def add_request(
        self,
        request_id: str,
        prompt: PromptType,
        params: SamplingParams | None = None,
        arrival_time: float | None = None,
        grammar: Any = None,
    ) -> None:
        """Queue a request. `grammar`: its constraint already compiled (AsyncLLMEngine
        compiles it off this thread); compiled here, through the same cache, when None."""
        if request_id in self.requests:
            raise InvalidRequestError(f"request id {request_id!r} is already in use")
        params = params or SamplingParams()
        text, ids = self._tokenize(prompt)
        if not ids:
            raise InvalidRequestError("the prompt is empty")
        vocab = self.model_config.vocab_size
        if any(not 0 <= t < vocab for t in ids):
            raise InvalidRequestError(f"prompt token ids must be in [0, {vocab})")
        # Refused here, per request: in the sampler they would fail the whole batch.
        for name in ("stop_token_ids", "logprob_token_ids"):
            bad = [t for t in getattr(params, name) or () if t >= vocab]
            if bad:
                raise InvalidRequestError(f"{name} has token id {bad[0]}, outside the model's "
                                          f"vocabulary of {vocab} (ids 0 to {vocab - 1})")
        if len(ids) >= self.max_model_len:
            raise InvalidRequestError(
                f"the prompt has {len(ids)} tokens; the model takes at most "
                f"{self.max_model_len - 1} prompt tokens (max_model_len={self.max_model_len})"
            )
        if params.max_tokens is not None and len(ids) + params.max_tokens > self.max_model_len:
            raise InvalidRequestError(
                f"this model's maximum context length is {self.max_model_len} tokens, but "
                f"{len(ids) + params.max_tokens} were requested ({len(ids)} in the prompt, "
                f"{params.max_tokens} in max_tokens): lower max_tokens or shorten the prompt"
            )
        seq = Sequence(request_id, text, ids, params, arrival_time)
        if params.structured_outputs is not None:
            compiled = grammar if grammar is not None else \
                self.grammars.compile_now(params.structured_outputs)
            seq.grammar = self.structured_outputs().matcher(compiled)
        self.requests[request_id] = seq
        if self.detokenizer is not None:
            self.detokenizer.start(seq)
        self.scheduler.add(seq)

    def structured_outputs(self) -> StructuredOutputManager:
        """The grammar compiler for this model's vocabulary, made at the first use (its
        tokenizer tables take a moment) and handed to the sampler. Locked: a server may
        check a schema from its event loop's thread while the engine loop adds a request."""
        with self._structured_lock:
            if self._structured is None:
                self._structured = StructuredOutputManager(
                    self.model_dir, self.model_config.vocab_size, sorted(self.eos_token_ids))
                self.executor.set_structured_outputs(self._structured)
        return self._structured

    def abort(self, request_id: str | Iterable[str]) -> None:
        ids = [request_id] if isinstance(request_id, str) else list(request_id)
        for rid in ids:
            seq = self.requests.pop(rid, None)
            if seq is not None and not seq.is_finished:
                seq.finish_reason = "abort"
                self._finish(seq)

    def has_unfinished_requests(self) -> bool:
        return self.scheduler.has_unfinished()

    def get_num_unfinished_requests(self) -> int:
        return len(self.scheduler.waiting) + len(self.scheduler.running) + len(self.scheduler.swapped)

    # -- stepping -------------------------------------------------------------------
    def step(self) -> list[RequestOutput]:
        """Schedule, run the model once, and report every request that moved.

        If anything after scheduling raises, the requests of this step are finished with
        finish_reason "error" (blocks freed) and `StepFailedError` names them: the fault
        costs those requests only, and the engine is ready for the next step. A fault in
        scheduling itself propagates as is: the scheduler's state can no longer be trusted.
        """
        sched = self.scheduler.schedule()
        if not sched:
            return []
        scheduled_at = time.monotonic()
        for seq in sched.seqs:
            if seq.first_scheduled_time is None:
                seq.first_scheduled_time = scheduled_at
        try:
            return self._execute(sched)
        except WorkerDiedError:
            # Not a fault of this step: no step can run without the rank, so the loop must
            # stop (and answer 503) rather than fail request after request.
            self._fail(sched.seqs, RuntimeError("a tensor-parallel worker died"))
            raise
        except Exception as exc:
            raise self._fail(sched.seqs, exc) from exc

    def _fail(self, seqs: list[Sequence], exc: Exception) -> StepFailedError:
        # Requests that finished normally earlier in the failed step are listed too: their
        # final outputs were never returned.
        for seq in seqs:
            self.requests.pop(seq.request_id, None)
            if not seq.is_finished:
                seq.finish_reason = "error"
                self._finish(seq)
        return StepFailedError([seq.request_id for seq in seqs], exc)

    def _execute(self, sched: SchedulerOutput) -> list[RequestOutput]:
        results = self.executor.execute(sched)
        now = time.monotonic()
        outputs = []
        for seq, n in zip(sched.seqs, sched.num_tokens, strict=True):
            drafts = len(seq.spec_token_ids)
            # K/V of rejected drafts is garbage: only the last token and accepted drafts count.
            seq.num_computed_tokens += n - drafts
            seq.spec_token_ids = []
            kept = results.get(seq)
            if kept is None:
                continue
            for result in kept:
                self._append_token(seq, result.token_id, result.logprob, result.top_logprobs, now)
                if seq.is_finished:
                    break
            if drafts:
                self.spec_stats.record(drafts, len(kept) - 1)
                if not seq.is_finished:
                    seq.num_computed_tokens = seq.num_tokens - 1
                    self.block_manager.trim(seq)
            outputs.append(self._make_output(seq))
            if seq.is_finished:
                self.requests.pop(seq.request_id, None)
            elif self.proposer is not None:
                self._propose(seq)
        return outputs

    def _propose(self, seq: Sequence) -> None:
        """Drafts for a sequence that has caught up, within max_tokens and max_model_len
        (a step with d drafts adds up to d + 1 tokens). None where the sampler's logits
        would depend on earlier drafts: penalties, stop tokens still blocked by min_tokens,
        or a grammar (its mask follows the accepted tokens, which drafts would run ahead
        of). None while disable_by_batch_size or more requests run."""
        p = seq.params
        limit = self.config.speculative_config.disable_by_batch_size
        if limit is not None and len(self.scheduler.running) >= limit:
            return
        if seq.num_computed_tokens != seq.num_tokens - 1 or p.repetition_penalty != 1.0 \
                or p.presence_penalty or p.frequency_penalty or seq.num_output_tokens < p.min_tokens \
                or seq.grammar is not None:
            return
        room = min((p.max_tokens or self.max_model_len) - seq.num_output_tokens,
                   self.max_model_len - seq.num_tokens) - 1
        seq.spec_token_ids = self.proposer.propose(seq.token_ids, room)

    def _append_token(self, seq: Sequence, token: int, logprob: float | None,
                      top: dict[int, float] | None, now: float) -> None:
        seq.token_ids.append(token)
        if seq.first_token_time is None:
            seq.first_token_time = now
        if seq.logprobs is not None and top is not None:
            seq.logprobs.append(top)
            seq.cumulative_logprob += logprob or 0.0
        p = seq.params
        # As vLLM: stop tokens count from the min_tokens-th token on (the sampler masks them
        # before it), stop strings only in text after it; a stop token's text is left out of
        # the output unless include_stop_str_in_output.
        n = seq.num_output_tokens
        eos = n >= p.min_tokens and not p.ignore_eos and token in self.eos_token_ids
        stop_token = n >= p.min_tokens and token in p.stop_token_ids
        new_chars = 0
        if self.detokenizer is not None and (p.include_stop_str_in_output or not (eos or stop_token)):
            new_chars = len(self.detokenizer.step(seq))
        if eos:
            seq.finish_reason = "stop"
        elif stop_token:
            seq.finish_reason, seq.stop_reason = "stop", token
        elif n > p.min_tokens and (stop := find_stop_string(seq, new_chars)) is not None:
            seq.finish_reason, seq.stop_reason = "stop", stop
        elif seq.num_output_tokens >= (p.max_tokens or self.max_model_len) \
                or seq.num_tokens >= self.max_model_len:
            seq.finish_reason = "length"
        if seq.finish_reason is not None:
            seq.finished_time = now
            self._finish(seq)

    def _finish(self, seq: Sequence) -> None:
        self.scheduler.finish(seq)
        if self.detokenizer is not None:
            self.detokenizer.forget(seq)

    def _make_output(self, seq: Sequence) -> RequestOutput:
        completion = CompletionOutput(
            index=0,
            text=visible_text(seq),
            token_ids=seq.output_token_ids,
            cumulative_logprob=seq.cumulative_logprob if seq.logprobs is not None else None,
            logprobs=list(seq.logprobs) if seq.logprobs is not None else None,
            finish_reason=seq.finish_reason,
            stop_reason=seq.stop_reason,
        )
        # vLLM's request timeline (time.monotonic): queued, prefilled, decoded.
        times = {"arrival_time": seq.arrival_time,
                 "first_scheduled_time": seq.first_scheduled_time,
                 "first_token_time": seq.first_token_time, "finished_time": seq.finished_time}
        metrics = {k: v for k, v in times.items() if v is not None}
        return RequestOutput(seq.request_id, seq.prompt, seq.prompt_token_ids, [completion],
                             seq.is_finished, seq.num_cached_tokens, metrics,
                             self._prompt_logprobs(seq))

    def _prompt_logprobs(self, seq: Sequence) -> PromptLogprobs | None:
        """The prompt's logprobs once every prompt position is computed, each token's text
        decoded alone (the first time), as vLLM's decoded_token."""
        entries = seq.prompt_logprobs
        if entries is None or len(entries) < seq.num_prompt_tokens:
            return None
        if self.tokenizer is not None and len(entries) > 1 and \
                next(iter(entries[-1].values())).decoded_token is None:
            for entry in entries[1:]:
                for tid, lp in entry.items():
                    lp.decoded_token = self.tokenizer.decode([tid], skip_special_tokens=False)
        return list(entries)

    # -- offline use ----------------------------------------------------------------
    def generate(
        self,
        prompts: PromptType | Seq[PromptType],
        params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = False,
    ) -> list[RequestOutput]:
        if isinstance(prompts, str | dict) or (
            isinstance(prompts, list) and prompts and isinstance(prompts[0], int)
        ):
            prompts = [prompts]  # type: ignore[list-item]
        prompts = list(prompts)  # type: ignore[arg-type]
        if params is None or isinstance(params, SamplingParams):
            params = [params or SamplingParams()] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(params)} sampling params")
        ids = [f"gen-{next(self._ids)}" for _ in prompts]
        for rid, prompt, p in zip(ids, prompts, params, strict=True):
            self.add_request(rid, prompt, p)
        done: dict[str, RequestOutput] = {}
        bar = tqdm(total=len(ids), desc="Processed prompts", disable=not use_tqdm)
        try:
            while len(done) < len(ids):
                for out in self.step():
                    if out.finished:
                        done[out.request_id] = out
                        bar.update(1)
        finally:
            bar.close()
            self.abort([rid for rid in ids if rid not in done])
        return [done[rid] for rid in ids]

    def get_stats(self) -> EngineStats:
        return collect_stats(self.block_manager, self.scheduler, self.spec_stats)
