"""Iteration-level scheduling by token counts (continuous batching, chunked prefill),
with preemption by swap or recompute when KV blocks run out."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from llm_engine.config import EngineConfig
from llm_engine.engine.block_manager import BlockManager
from llm_engine.sequence import Sequence, SequenceStatus


@dataclass
class SchedulerOutput:
    """What one step does: block copies to and from host memory, then, for each sequence,
    how many of its next tokens to compute."""

    seqs: list[Sequence] = field(default_factory=list)
    num_tokens: list[int] = field(default_factory=list)
    blocks_to_swap_out: list[tuple[int, int]] = field(default_factory=list)  # (device, host)
    blocks_to_swap_in: list[tuple[int, int]] = field(default_factory=list)  # (host, device)

    def __bool__(self) -> bool:
        # A step may only swap out (its one running sequence preempted itself): the copies
        # must still happen before the freed blocks are handed out again.
        return bool(self.seqs or self.blocks_to_swap_out or self.blocks_to_swap_in)


class Scheduler:
    """Decides, each step, which sequences advance and by how many tokens.

    Every sequence simply owes `num_tokens - num_computed_tokens` tokens of compute: a
    decode owes one (plus its draft tokens under speculative decoding), a prompt owes the
    rest of its prompt, a prefix-cache hit owes less.
    One token budget per step covers them all: running sequences first (so decodes are
    never starved by new prompts), then swapped-out ones, then waiting ones in arrival
    order.

    When blocks run out, the latest-admitted running sequence is preempted (vLLM's
    `preemption_mode`): by swap, its blocks are copied to host memory and it waits in
    `swapped`, keeping its computed tokens; by recompute, its blocks are freed and it
    rejoins the front of `waiting` to be prefilled again. Auto (None) swaps a sequence
    that has at least one full block in the cache and recomputes a shorter one: on CPU,
    swapping measured 40-74x cheaper than recomputing from one block up, while under one
    block the recompute is a few tokens riding along in a step (milliseconds) and the swap
    space is kept for the sequences that need it; on a GPU the crossover is estimated within
    the first block for an 8B model (benchmarks/swap_vs_recompute.py). Either
    swapping mode falls back to recompute when the swap space is full, rather than failing
    the request (vLLM aborts it).
    """

    def __init__(self, config: EngineConfig, block_manager: BlockManager) -> None:
        self.config = config
        self.block_manager = block_manager
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.swapped: deque[Sequence] = deque()
        self.preemptions = {"swap": 0, "recompute": 0}
        # KV waste (allocated slots holding no token / allocated slots) during the last
        # step, and during the step that used the most blocks.
        self.kv_waste = 0.0
        self.peak_used_blocks = 0
        self.kv_waste_at_peak = 0.0

    @property
    def block_size(self) -> int:
        return self.block_manager.block_size

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_unfinished(self) -> bool:
        return bool(self.waiting or self.running or self.swapped)

    def schedule(self) -> SchedulerOutput:
        out = SchedulerOutput()
        budget = self.config.max_num_batched_tokens
        preempted = False
        chunked = self.config.enable_chunked_prefill

        i = 0
        while i < len(self.running) and budget > 0:
            seq = self.running[i]
            self._fit_drafts(seq, budget)
            owed = seq.num_tokens + len(seq.spec_token_ids) - seq.num_computed_tokens
            n = min(owed, budget)
            if n < owed and not chunked:
                i += 1
                continue
            while not self.block_manager.can_allocate(seq, n):
                victim = self.running[-1]
                self._preempt(victim, out)
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

        # A step that had to preempt resumes and admits nobody: memory is already short.
        # (That also keeps a swap-in's freed host blocks from being swapped out into in
        # the step that still has to read them.)
        if not preempted:
            budget = self._resume_swapped(out, budget)
        # Swapped sequences come back before new requests take the blocks they need.
        while self.waiting and not preempted and not self.swapped and budget > 0:
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
            if seq.num_computed_tokens == 0:
                self.block_manager.count_prefix_lookup(seq, len(computed))
            self.block_manager.allocate(seq, n, computed, hashes)
            seq.num_computed_tokens += len(computed) * self.block_size
            seq.num_cached_tokens = max(seq.num_cached_tokens, len(computed) * self.block_size)
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.seqs.append(seq)
            out.num_tokens.append(n)
            budget -= n
        self._track_kv_waste(out)
        return out

    def _fit_drafts(self, seq: Sequence, budget: int) -> None:
        """Drafts are optional work: cut those the token budget or the free blocks cannot
        take, rather than chunk a verification or preempt another sequence for them."""
        if not seq.spec_token_ids:
            return
        owed = seq.num_tokens - seq.num_computed_tokens
        del seq.spec_token_ids[max(budget - owed, 0):]
        if not self.block_manager.can_allocate(seq, owed + len(seq.spec_token_ids)):
            seq.spec_token_ids.clear()

    def _resume_swapped(self, out: SchedulerOutput, budget: int) -> int:
        """Swap sequences back in, earliest arrival first, while blocks and budget last."""
        bm = self.block_manager
        while self.swapped and budget > 0 and len(self.running) < self.config.max_num_seqs:
            seq = self.swapped[0]
            owed = seq.num_tokens - seq.num_computed_tokens
            n = min(owed, budget)
            if n < owed and not self.config.enable_chunked_prefill:
                break
            if not bm.can_swap_in(seq, n):
                break
            self.swapped.popleft()
            out.blocks_to_swap_in.extend(bm.swap_in(seq, n))
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            out.seqs.append(seq)
            out.num_tokens.append(n)
            budget -= n
        return budget

    def _should_swap(self, seq: Sequence) -> bool:
        mode = self.config.preemption_mode
        if mode == "recompute" or not self.block_manager.can_swap_out(seq):
            return False
        return mode == "swap" or seq.num_computed_tokens >= self.block_size

    def _preempt(self, seq: Sequence, out: SchedulerOutput) -> None:
        self.running.remove(seq)
        seq.spec_token_ids.clear()
        if self._should_swap(seq):
            out.blocks_to_swap_out.extend(self.block_manager.swap_out(seq))
            seq.status = SequenceStatus.SWAPPED
            # First come, first served: the earliest arrival comes back first.
            later = (k for k, s in enumerate(self.swapped) if s.arrival_time > seq.arrival_time)
            self.swapped.insert(next(later, len(self.swapped)), seq)
            self.preemptions["swap"] += 1
            return
        self.block_manager.free(seq)
        seq.num_computed_tokens = 0
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
        self.preemptions["recompute"] += 1

    def _track_kv_waste(self, out: SchedulerOutput) -> None:
        """Waste once this step's tokens are in the cache.

        A block is shared only when full, so the slots no token holds are each running
        sequence's allocated slots minus its tokens, even with shared prefixes; the
        allocated slots are the blocks in use, each counted once.
        """
        scheduled = dict(zip(out.seqs, out.num_tokens, strict=True))
        bs = self.block_size
        empty = sum(len(s.block_table) * bs - s.num_computed_tokens - scheduled.get(s, 0)
                    for s in self.running)
        used = self.block_manager.num_used_blocks
        self.kv_waste = empty / (used * bs) if used else 0.0
        if used >= self.peak_used_blocks:
            self.peak_used_blocks, self.kv_waste_at_peak = used, self.kv_waste

    def finish(self, seq: Sequence) -> None:
        """Take a finished or aborted sequence out of the queues and free its blocks."""
        if seq.status is SequenceStatus.RUNNING:
            self.running.remove(seq)
        elif seq.status is SequenceStatus.WAITING:
            self.waiting.remove(seq)
        elif seq.status is SequenceStatus.SWAPPED:
            self.swapped.remove(seq)
        # Blocks are cached when scheduled; a failed step may not have written them.
        self.block_manager.free(seq, keep_cached=seq.finish_reason != "error")
        seq.status = SequenceStatus.FINISHED
