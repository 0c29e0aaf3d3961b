"""From logits to the next token: penalties, temperature, top-k/top-p/min-p, seeded draws."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from llm_engine.outputs import Logprob
from llm_engine.sampling_params import SamplingParams
from llm_engine.sequence import Sequence
from llm_engine.structured_output import StructuredOutputManager


@dataclass
class SampleResult:
    token_id: int
    logprob: float | None
    top_logprobs: dict[int, float] | None


class Sampler:
    """Samples one token per row of logits, each row under its own request's parameters.

    Log-probabilities are those of the model's raw distribution (before penalties and
    temperature), as vLLM reports them by default.
    """

    def __init__(self, eos_token_ids: set[int], generator: torch.Generator) -> None:
        self.eos_token_ids = eos_token_ids
        self.generator = generator
        # Set by the engine at the first structured-output request.
        self.structured: StructuredOutputManager | None = None

    def __call__(self, logits: torch.Tensor, seqs: list[Sequence]) -> list[SampleResult]:
        want_logprobs = any(s.params.logprobs is not None for s in seqs)
        raw_logprobs = torch.log_softmax(logits, dim=-1) if want_logprobs else None
        logits = self._apply_penalties(logits, seqs)
        grammars = [s.grammar for s in seqs]
        if self.structured is not None and any(g is not None for g in grammars):
            logits = logits.float().contiguous()
            self.structured.apply_masks(logits, grammars)

        greedy_rows = [i for i, s in enumerate(seqs) if s.params.greedy]
        tokens = [0] * len(seqs)
        if greedy_rows:
            picked = logits[greedy_rows].argmax(dim=-1).tolist()
            for row, tok in zip(greedy_rows, picked, strict=True):
                tokens[row] = tok
        for row, seq in enumerate(seqs):
            if not seq.params.greedy:
                tokens[row] = self._draw(logits[row], seq)

        for row, grammar in enumerate(grammars):
            if grammar is not None and self.structured is not None:
                self.structured.accept(grammar, tokens[row])

        return [self.result(None if raw_logprobs is None else raw_logprobs[row], tokens[row], seq)
                for row, seq in enumerate(seqs)]

    @staticmethod
    def result(logprobs: torch.Tensor | None, token: int, seq: Sequence) -> SampleResult:
        """The sampled `token` with the log-probabilities `seq` asked for, from its row of
        raw log-probabilities (None when no sequence of the step asked)."""
        n = seq.params.logprobs
        if logprobs is None or n is None:
            return SampleResult(token, None, None)
        top: dict[int, float] = {}
        if n:
            values, ids = logprobs.topk(n)
            top = dict(zip(ids.tolist(), values.tolist(), strict=True))
        for tid in seq.params.logprob_token_ids or ():
            top[tid] = float(logprobs[tid])
        chosen = float(logprobs[token])
        top[token] = chosen
        return SampleResult(token, chosen, top)

    @staticmethod
    def prompt_logprobs(logits: torch.Tensor, targets: list[int], ks: list[int]
                        ) -> list[dict[int, Logprob]]:
        """Per row of `logits`: its target token (the prompt token that follows) with its
        log-probability and rank, then the row's top-k with ranks 1 to k; raw
        log-probabilities, ranks as vLLM counts them (tokens at least as likely)."""
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        chosen = logprobs.gather(1, torch.tensor(targets, device=logprobs.device)[:, None])
        ranks = (logprobs >= chosen).sum(-1).tolist()
        k = max(ks)
        top_values, top_ids = logprobs.topk(k, dim=-1) if k else (logprobs[:, :0],) * 2
        entries = []
        for target, value, rank, k_row, values, ids in zip(
                targets, chosen[:, 0].tolist(), ranks, ks, top_values.tolist(),
                top_ids.tolist(), strict=True):
            entry = {target: Logprob(value, rank)}
            entry.update((t, Logprob(v, r)) for r, (t, v) in enumerate(
                zip(ids[:k_row], values[:k_row], strict=True), start=1))
            entries.append(entry)
        return entries

    def _apply_penalties(self, logits: torch.Tensor, seqs: list[Sequence]) -> torch.Tensor:
        changed = False
        for row, seq in enumerate(seqs):
            p = seq.params
            blocked_stops = seq.num_output_tokens < p.min_tokens
            if p.repetition_penalty == 1.0 and not p.presence_penalty and not p.frequency_penalty \
                    and not blocked_stops:
                continue
            if not changed:
                logits, changed = logits.clone(), True
            row_logits = logits[row]
            if p.repetition_penalty != 1.0:
                seen = torch.tensor(sorted(set(seq.token_ids)), device=logits.device)
                vals = row_logits[seen]
                row_logits[seen] = torch.where(vals > 0, vals / p.repetition_penalty,
                                               vals * p.repetition_penalty)
            if (p.presence_penalty or p.frequency_penalty) and seq.num_output_tokens:
                out = torch.tensor(seq.output_token_ids, device=logits.device)
                counts = torch.bincount(out, minlength=row_logits.numel()).to(row_logits.dtype)
                row_logits -= p.frequency_penalty * counts + p.presence_penalty * (counts > 0)
            if blocked_stops:
                stops = set(p.stop_token_ids or []) | (set() if p.ignore_eos else self.eos_token_ids)
                if stops:
                    row_logits[sorted(stops)] = float("-inf")
        return logits

    def _draw(self, logits: torch.Tensor, seq: Sequence) -> int:
        probs = self.probs(logits[None], seq.params)[0]
        return int(torch.multinomial(probs, 1, generator=self.generator_of(seq)))

    def generator_of(self, seq: Sequence) -> torch.Generator:
        return seq.generator or self.generator

    @staticmethod
    def probs(logits: torch.Tensor, p: SamplingParams) -> torch.Tensor:
        """[rows, vocab] logits -> the distributions `p` samples from (temperature, top-k,
        top-p, min-p), as float32 on the CPU, where the per-request generators live."""
        logits = logits.float().cpu() / p.temperature
        if p.top_k and p.top_k < logits.shape[-1]:
            kth = torch.topk(logits, p.top_k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        if p.top_p < 1.0:
            sorted_probs, order = probs.sort(dim=-1, descending=True)
            # Keep the smallest prefix whose mass reaches top_p (always at least one token).
            drop = sorted_probs.cumsum(-1) - sorted_probs >= p.top_p
            sorted_probs[drop] = 0.0
            probs = torch.zeros_like(probs).scatter_(-1, order, sorted_probs)
        if p.min_p > 0.0:
            probs = probs.masked_fill(probs < p.min_p * probs.amax(-1, keepdim=True), 0.0)
        return probs
