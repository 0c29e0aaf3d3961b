"""Iteration-level scheduling by token counts (continuous batching, chunked prefill)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from llm_engine.config import EngineConfig
from llm_engine.engine.block_manager import BlockManager
from llm_engine.sequence import Sequence, SequenceStatus


@dataclass
class SchedulerOutput:
    """What one step computes: for each sequence, how many of its next tokens."""

    seqs: list[Sequence] = field(default_factory=list)
    num_tokens: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.seqs)


class Scheduler:
    """Decides, each step, which sequences advance and by how many tokens.

    Every sequence simply owes `num_tokens - num_computed_tokens` tokens of compute: a
    decode owes one, a prompt owes the rest of its prompt, a prefix-cache hit owes less.
    One token budget per step covers them all, running sequences first (so decodes are
    never starved by new prompts), then waiting ones in arrival order. When blocks run
    out, the latest-arrived running sequence is preempted by recompute: its blocks are
    freed and it rejoins the front of the waiting queue.
    """

    def __init__(self, config: EngineConfig, block_manager: BlockManager) -> None:
        self.config = config
        self.block_manager = block_manager
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        budget = self.config.max_num_batched_tokens
        preempted = False
        chunked = self.config.enable_chunked_prefill

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            owed = seq.num_tokens - seq.num_computed_tokens
            n = min(owed, budget)
            if n < owed and not chunked:
                i += 1
                continue
            while not self.block_manager.can_allocate(seq, n):
                victim = self.running[-1]
                self._preempt(victim)
                preempted = True
                if victim is seq:
                    break
            if seq.status is not SequenceStatus.RUNNING:
                break
            self.block_manager.allocate(seq, n)
            out.seqs.append(seq)
            out.num_tokens.append(n)
            budget -= n
            i += 1

        # A step that had to preempt admits nobody new: memory is already short.
        while self.waiting and not preempted and budget > 0:
            if len(self.running) >= self.config.max_num_seqs:
                break
            seq = self.waiting[0]
            computed, hashes = ([], [])
            if seq.num_computed_tokens == 0:
                computed, hashes = self.block_manager.get_computed_blocks(seq)
            owed = seq.num_tokens - seq.num_computed_tokens - len(computed) * self.block_size
            n = min(owed, budget)
            if n < owed and not chunked:
                break
            if not self.block_manager.can_allocate(seq, n, computed):
                break
            self.waiting.popleft()
            self.block_manager.allocate(seq, n, computed, hashes)
            seq.num_computed_tokens += len(computed) * self.block_size
            seq.num_cached_tokens = max(seq.num_cached_tokens, len(computed) * self.block_size)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.seqs.append(seq)
            out.num_tokens.append(n)
            budget -= n
        return out

    @property
    def block_size(self) -> int:
        return self.block_manager.block_size

    def _preempt(self, seq: Sequence) -> None:
        self.running.remove(seq)
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
        self.num_preemptions += 1

    def finish(self, seq: Sequence) -> None:
        """Take a finished or aborted sequence out of the queues and free its blocks."""
        if seq.status is SequenceStatus.RUNNING:
            self.running.remove(seq)
        elif seq.status is SequenceStatus.WAITING:
            self.waiting.remove(seq)
        self.block_manager.free(seq)
        seq.status = SequenceStatus.FINISHED
