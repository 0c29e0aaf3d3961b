"""Verifying draft tokens: the tokens a sequence keeps from one forward pass over its drafts."""

from __future__ import annotations

import torch

from llm_engine.layers.sampler import Sampler, SampleResult
from llm_engine.sequence import Sequence


class RejectionSampler:
    """Turns the logits at a sequence's last token and at each of its draft tokens into the
    tokens it keeps: the accepted drafts, then one token of the model's own (a correction
    at the first rejected draft, or a bonus token after the last) - 1 to k + 1 tokens.

    Greedy: a draft is accepted while it is the argmax, so the output is the one plain
    greedy decoding gives. Sampled: the draft is a point mass q, so draft t is accepted
    with probability min(1, p(t) / q(t)) = p(t), and on rejection the token is drawn from
    the residual max(p - q, 0), normalised: p with t removed. Each kept token is then
    distributed exactly as p, the request's distribution after temperature, top-k, top-p
    and min-p (Leviathan et al. 2023; vLLM's rejection sampler with a draft of
    probability 1). Sequences with penalties or an unmet min_tokens get no drafts (their
    logits would depend on the drafts before each row), so no penalty applies here.
    """

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def __call__(self, logits: torch.Tensor, seqs: list[Sequence]) -> list[list[SampleResult]]:
        """`logits` has 1 + len(seq.spec_token_ids) consecutive rows per sequence."""
        want_logprobs = any(s.params.logprobs is not None for s in seqs)
        raw_logprobs = torch.log_softmax(logits, dim=-1) if want_logprobs else None
        argmax = logits.argmax(dim=-1).tolist()
        results = []
        row = 0
        for seq in seqs:
            drafts = seq.spec_token_ids
            rows = slice(row, row + len(drafts) + 1)
            if seq.params.greedy:
                tokens = self.verify_greedy(drafts, argmax[rows])
            else:
                tokens = self.verify_sampled(drafts, Sampler.probs(logits[rows], seq.params),
                                             self.sampler.generator_of(seq))
            results.append([
                Sampler.result(None if raw_logprobs is None else raw_logprobs[row + i], tok, seq)
                for i, tok in enumerate(tokens)])
            row = rows.stop
        return results

    @staticmethod
    def verify_greedy(drafts: list[int], targets: list[int]) -> list[int]:
        """`targets`: the argmax at each of the len(drafts) + 1 rows."""
        accepted = 0
        while accepted < len(drafts) and drafts[accepted] == targets[accepted]:
            accepted += 1
        return [*drafts[:accepted], targets[accepted]]

    @staticmethod
    def verify_sampled(drafts: list[int], probs: torch.Tensor,
                       generator: torch.Generator) -> list[int]:
        """`probs`: [len(drafts) + 1, vocab] target distributions, float32 on the CPU."""
        uniforms = torch.rand(len(drafts), generator=generator).tolist()
        for i, (draft, u) in enumerate(zip(drafts, uniforms, strict=True)):
            if u < float(probs[i, draft]):
                continue
            residual = probs[i].clone()
            residual[draft] = 0.0
            token = int(torch.multinomial(residual, 1, generator=generator))
            return [*drafts[:i], token]
        bonus = int(torch.multinomial(probs[len(drafts)], 1, generator=generator))
        return [*drafts, bonus]
