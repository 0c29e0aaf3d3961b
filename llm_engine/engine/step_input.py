"""One scheduler step as every tensor-parallel rank needs it: plain lists, cheap to pickle."""

from __future__ import annotations

from dataclasses import dataclass, field

from llm_engine.engine.scheduler import SchedulerOutput
from llm_engine.sequence import Sequence


@dataclass
class PrefillChunk:
    """Rows [start, end) of the flat token list; `block_table` is None when nothing of the
    sequence was cached before the chunk."""

    start: int
    end: int
    num_computed: int
    block_table: list[int] | None


@dataclass
class StepInput:
    """The driver builds this once per step from the SchedulerOutput and sends it to the
    other ranks; each rank turns it into tensors on its own device. It carries no Sequence
    objects, so nothing but these lists crosses the process boundary.

    Decode rows (one token each) come first, shortest context first, so that the attention
    batches neighbours of similar length; prefill chunks follow.
    """

    token_ids: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    # The cache block of each token's slot (its offset in the block is position % block_size).
    slot_blocks: list[int] = field(default_factory=list)
    decode_tables: list[list[int]] = field(default_factory=list)
    decode_lens: list[int] = field(default_factory=list)
    prefills: list[PrefillChunk] = field(default_factory=list)
    # Rows whose logits are sampled: the last token of every sequence that has caught up,
    # and each draft token's row.
    sample_rows: list[int] = field(default_factory=list)
    # Rows of prompt positions whose logits give prompt_logprobs (each predicts the next
    # prompt token), for the requests that asked; every other row's logits are never made.
    prompt_logprob_rows: list[int] = field(default_factory=list)
    # Block copies to make before the forward pass, as in SchedulerOutput.
    blocks_to_swap_out: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_swap_in: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def from_scheduler_output(cls, sched: SchedulerOutput, block_size: int
                              ) -> tuple[StepInput, list[Sequence], list[PromptLogprobSpan]]:
        """The step, the sequences that `sample_rows` sample for, in the same order, and
        whose prompt positions `prompt_logprob_rows` are, in the same order.

        A sequence owing only its last token, plus the draft tokens scheduled with it,
        becomes decode rows: row r, at position p, attends the cache up to p, which the
        step has written before attention reads it. Each such sequence samples at all its
        rows (1 + drafts, consecutive in `sample_rows`), any other at its last row if it
        has caught up.
        """
        bs = block_size
        step = cls(blocks_to_swap_out=sched.blocks_to_swap_out,
                   blocks_to_swap_in=sched.blocks_to_swap_in)
        decode_rows: list[tuple[int, int, int, int]] = []  # (position, token, seq index, r)
        prefill_seqs: list[int] = []
        for i, seq in enumerate(sched.seqs):
            start = seq.num_computed_tokens
            if start == seq.num_tokens - 1:
                tokens = [seq.token_ids[-1], *seq.spec_token_ids]
                decode_rows.extend((start + r, tok, i, r) for r, tok in enumerate(tokens))
            else:
                prefill_seqs.append(i)
        decode_rows.sort()
        row_of: dict[tuple[int, int], int] = {}
        for row, (pos, tok, i, r) in enumerate(decode_rows):
            table = sched.seqs[i].block_table
            step.token_ids.append(tok)
            step.positions.append(pos)
            step.slot_blocks.append(table[pos // bs])
            step.decode_tables.append(table[: pos // bs + 1])
            step.decode_lens.append(pos + 1)
            row_of[i, r] = row
        prefill_seqs.sort(key=lambda i: sched.seqs[i].num_computed_tokens)
        prompt_spans: list[PromptLogprobSpan] = []
        for i in prefill_seqs:
            seq, n = sched.seqs[i], sched.num_tokens[i]
            start = seq.num_computed_tokens
            row = len(step.token_ids)
            step.token_ids.extend(seq.token_ids[start : start + n])
            pos = range(start, start + n)
            step.positions.extend(pos)
            table = seq.block_table
            step.slot_blocks.extend(table[p // bs] for p in pos)
            bt = table[: -(-(start + n) // bs)] if start else None
            step.prefills.append(PrefillChunk(row, row + n, start, bt))
            if start + n == seq.num_tokens:
                row_of[i, 0] = row + n - 1
            span = _prompt_logprob_span(seq, start, n)
            if span is not None:
                step.prompt_logprob_rows.extend(range(row + span.position - start,
                                                      row + span.position - start + span.count))
                prompt_spans.append(span)
        sample_seqs: list[Sequence] = []
        for i, seq in enumerate(sched.seqs):
            if (i, 0) in row_of:
                step.sample_rows.extend(row_of[i, r] for r in range(1 + len(seq.spec_token_ids)))
                sample_seqs.append(seq)
        return step, sample_seqs, prompt_spans


@dataclass
class PromptLogprobSpan:
    """`count` consecutive prompt positions of `seq` from `position`, each predicting the
    prompt token after it."""

    seq: Sequence
    position: int
    count: int


def _prompt_logprob_span(seq: Sequence, start: int, n: int) -> PromptLogprobSpan | None:
    """The positions of the chunk [start, start + n) that `seq` still needs prompt
    logprobs from: none past the prompt's second-to-last token (the last one predicts the
    first output token), none already had (a chunk computed again after a preemption)."""
    if seq.prompt_logprobs is None:
        return None
    first = max(start, len(seq.prompt_logprobs) - 1)
    end = min(start + n, seq.num_prompt_tokens - 1)
    return PromptLogprobSpan(seq, first, end - first) if end > first else None
