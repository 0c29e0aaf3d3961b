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
    # Rows whose logits are sampled: the last token of every sequence that has caught up.
    sample_rows: list[int] = field(default_factory=list)
    # Block copies to make before the forward pass, as in SchedulerOutput.
    blocks_to_swap_out: list[tuple[int, int]] = field(default_factory=list)
    blocks_to_swap_in: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def from_scheduler_output(cls, sched: SchedulerOutput, block_size: int
                              ) -> tuple[StepInput, list[Sequence]]:
        """The step, and the sequences that `sample_rows` sample for, in the same order."""
        bs = block_size
        order = sorted(range(len(sched.seqs)), key=lambda i: (
            sched.num_tokens[i] != 1, sched.seqs[i].num_computed_tokens))
        step = cls(blocks_to_swap_out=sched.blocks_to_swap_out,
                   blocks_to_swap_in=sched.blocks_to_swap_in)
        sample_seqs: list[Sequence] = []
        for i in order:
            seq, n = sched.seqs[i], sched.num_tokens[i]
            start = seq.num_computed_tokens
            row = len(step.token_ids)
            step.token_ids.extend(seq.token_ids[start : start + n])
            pos = range(start, start + n)
            step.positions.extend(pos)
            table = seq.block_table
            step.slot_blocks.extend(table[p // bs] for p in pos)
            if n == 1:
                step.decode_tables.append(table[: (start + bs) // bs])
                step.decode_lens.append(start + 1)
            else:
                bt = table[: -(-(start + n) // bs)] if start else None
                step.prefills.append(PrefillChunk(row, row + n, start, bt))
            if start + n == seq.num_tokens:
                step.sample_rows.append(row + n - 1)
                sample_seqs.append(seq)
        return step, sample_seqs
