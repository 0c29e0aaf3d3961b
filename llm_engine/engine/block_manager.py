"""KV-cache blocks: a free list, reference counts, prefix caching by block hash, and host
blocks that preempted sequences are swapped out to."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence as Seq

from llm_engine.engine.block_hash import BLOCK_HASHERS
from llm_engine.sequence import Sequence


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "token_ids")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0
        self.hash = -1
        self.token_ids: tuple[int, ...] = ()


class BlockManager:
    """Hands out fixed-size KV blocks and shares full ones between sequences.

    A full block is registered under the hash of its tokens chained to its parent's hash,
    so equal prefixes map to the same blocks. A block whose last user is gone goes back
    to the free list but keeps its hash: it can still be hit until it is reused, and reuse
    takes the least recently freed block first.

    Host blocks (the swap space) are plain copies of device blocks, never shared, so a free
    list is all they need. A sequence swapped out keeps its block hashes: when it comes
    back, a block whose content is still cached on the device is shared again, not copied.
    """

    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True,
                 num_host_blocks: int = 0, hash_algo: str = "sha256"):
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.block_hash = BLOCK_HASHERS[hash_algo]
        self.blocks = [Block(i) for i in range(num_blocks)]
        # Ordered oldest-freed first; the value is unused.
        self.free_block_ids: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self.hash_to_block_id: dict[int, int] = {}
        self.prefix_queries = 0  # prompt tokens looked up
        self.prefix_hits = 0  # of which found in the cache
        self.num_host_blocks = num_host_blocks
        self.free_host_block_ids = list(range(num_host_blocks - 1, -1, -1))  # pop() -> lowest
        self.blocks_swapped_out = 0  # copies device -> host, since start
        self.blocks_swapped_in = 0  # copies host -> device

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_ids)

    @property
    def num_used_blocks(self) -> int:
        return self.num_blocks - self.num_free_blocks

    @property
    def num_free_host_blocks(self) -> int:
        return len(self.free_host_block_ids)

    def usage(self) -> float:
        return 1.0 - self.num_free_blocks / self.num_blocks

    def blocks_needed(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    def get_computed_blocks(self, seq: Sequence) -> tuple[list[int], list[int]]:
        """The longest cached run of full blocks at the start of `seq`: (block ids, hashes).

        At least one token is left out so that the step that follows has a position to
        compute logits from. A request with prompt_logprobs takes no hit: it needs the
        logits of every prompt position, which a cached block does not keep (as vLLM v1).
        """
        if not self.reads_cache(seq):
            return [], []
        ids: list[int] = []
        hashes: list[int] = []
        parent: int | None = None
        bs = self.block_size
        for i in range((seq.num_tokens - 1) // bs):
            tokens = seq.token_ids[i * bs : (i + 1) * bs]
            h = self.block_hash(parent, tokens)
            block_id = self.hash_to_block_id.get(h)
            if block_id is None or self.blocks[block_id].token_ids != tuple(tokens):
                break
            ids.append(block_id)
            hashes.append(h)
            parent = h
        return ids, hashes

    def reads_cache(self, seq: Sequence) -> bool:
        return self.enable_prefix_caching and seq.params.prompt_logprobs is None

    def count_prefix_lookup(self, seq: Sequence, num_hit_blocks: int) -> None:
        """Count one admission's lookup in the hit rate (not every attempt that waited)."""
        if self.reads_cache(seq):
            self.prefix_queries += seq.num_tokens
            self.prefix_hits += num_hit_blocks * self.block_size

    def can_allocate(self, seq: Sequence, num_new_tokens: int, computed: Seq[int] = ()) -> bool:
        num_tokens = seq.num_computed_tokens + len(computed) * self.block_size + num_new_tokens
        need = self.blocks_needed(num_tokens) - len(seq.block_table) - len(computed)
        # Hit blocks that nobody holds sit on the free list: taking them costs free blocks too.
        revived = sum(1 for b in computed if self.blocks[b].ref_count == 0)
        return max(need, 0) + revived <= self.num_free_blocks

    def allocate(
        self, seq: Sequence, num_new_tokens: int, computed: Seq[int] = (), hashes: Seq[int] = ()
    ) -> None:
        """Give `seq` blocks for `num_new_tokens` more tokens, after the hit blocks `computed`.

        The blocks those tokens fill are cached at once, before the step computes them: a
        sequence scheduled later in the same step can share them, since the forward pass
        writes every new K/V of a layer before any attention of that layer reads the cache.
        """
        for block_id in computed:
            self._claim(block_id)
            seq.block_table.append(block_id)
        seq.block_hashes.extend(hashes)
        num_tokens = seq.num_computed_tokens + len(computed) * self.block_size + num_new_tokens
        need = self.blocks_needed(num_tokens)
        while len(seq.block_table) < need:
            seq.block_table.append(self._take_free_block())
        self.cache_full_blocks(seq, num_tokens)

    def _claim(self, block_id: int) -> None:
        """One more reference to a cached block, taking it off the free list if idle."""
        block = self.blocks[block_id]
        if block.ref_count == 0:
            del self.free_block_ids[block_id]
        block.ref_count += 1

    def _take_free_block(self) -> int:
        block_id, _ = self.free_block_ids.popitem(last=False)
        block = self.blocks[block_id]
        if block.hash != -1 and self.hash_to_block_id.get(block.hash) == block_id:
            del self.hash_to_block_id[block.hash]
        block.hash, block.token_ids, block.ref_count = -1, (), 1
        return block_id

    def cache_full_blocks(self, seq: Sequence, num_tokens: int) -> None:
        """Register the blocks that the first `num_tokens` tokens of `seq` fill completely.

        Draft tokens (past `seq.token_ids`) are never registered: a block is cached only
        once every token in it is verified.
        """
        if not self.enable_prefix_caching:
            return
        bs = self.block_size
        for i in range(len(seq.block_hashes), min(num_tokens, seq.num_tokens) // bs):
            parent = seq.block_hashes[i - 1] if i else None
            tokens = tuple(seq.token_ids[i * bs : (i + 1) * bs])
            h = self.block_hash(parent, tokens)
            seq.block_hashes.append(h)
            self._register(seq.block_table[i], h, tokens)

    def _register(self, block_id: int, h: int, tokens: tuple[int, ...]) -> None:
        # Another sequence may have cached the same content first; keep that copy.
        if h not in self.hash_to_block_id:
            self.hash_to_block_id[h] = block_id
            block = self.blocks[block_id]
            block.hash, block.token_ids = h, tokens

    def free(self, seq: Sequence, keep_cached: bool = True) -> None:
        """Release `seq`'s device and host blocks.

        `keep_cached=False` after a failed step: blocks cached for it may never have been
        written, so those that nobody else holds lose their hash.
        """
        self._release(seq.block_table, keep_cached)
        self.free_host_block_ids.extend(seq.host_block_table)
        seq.block_table, seq.block_hashes, seq.host_block_table = [], [], []

    def trim(self, seq: Sequence) -> None:
        """Free the blocks past those `seq.token_ids` need: they held rejected drafts only,
        so they were never cached."""
        keep = self.blocks_needed(seq.num_tokens)
        if len(seq.block_table) > keep:
            self._release(seq.block_table[keep:])
            del seq.block_table[keep:]

    def _release(self, table: list[int], keep_cached: bool = True) -> None:
        """Drop one reference to each block; the tail goes back first so it is evicted first."""
        for block_id in reversed(table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free_block_ids[block_id] = None
                if not keep_cached and self.hash_to_block_id.get(block.hash) == block_id:
                    del self.hash_to_block_id[block.hash]
                    block.hash, block.token_ids = -1, ()
                if block.hash == -1:
                    # Nothing to hit in it: hand it out before any block that still has a hash.
                    self.free_block_ids.move_to_end(block_id, last=False)

    # -- swapping -------------------------------------------------------------------
    def can_swap_out(self, seq: Sequence) -> bool:
        return 0 < len(seq.block_table) <= self.num_free_host_blocks

    def swap_out(self, seq: Sequence) -> list[tuple[int, int]]:
        """Give `seq` host blocks for its device blocks and release those.

        Returns the (device block, host block) copies to make before any device block is
        written again. Shared blocks are copied too: the copy is what lets the sequence
        come back even if every other holder has gone and the block has been reused.
        """
        pairs = [(block_id, self.free_host_block_ids.pop()) for block_id in seq.block_table]
        self._release(seq.block_table)
        seq.block_table = []
        seq.host_block_table = [host for _, host in pairs]
        self.blocks_swapped_out += len(pairs)
        return pairs

    def _swap_in_plan(self, seq: Sequence) -> list[int | None]:
        """Per host block of `seq`: a device block still holding its tokens, or None."""
        plan: list[int | None] = [None] * len(seq.host_block_table)
        bs = self.block_size
        for i, h in enumerate(seq.block_hashes):
            block_id = self.hash_to_block_id.get(h)
            if block_id is not None and \
                    self.blocks[block_id].token_ids == tuple(seq.token_ids[i * bs : (i + 1) * bs]):
                plan[i] = block_id
        return plan

    def can_swap_in(self, seq: Sequence, num_new_tokens: int) -> bool:
        plan = self._swap_in_plan(seq)
        copies = plan.count(None)
        revived = sum(1 for b in plan if b is not None and self.blocks[b].ref_count == 0)
        extra = self.blocks_needed(seq.num_computed_tokens + num_new_tokens) - len(plan)
        return copies + revived + max(extra, 0) <= self.num_free_blocks

    def swap_in(self, seq: Sequence, num_new_tokens: int) -> list[tuple[int, int]]:
        """Give `seq` device blocks again, for its swapped tokens and `num_new_tokens` more.

        Returns the (host block, device block) copies to make before the step's forward
        pass. The host blocks are free again at once: only a later step can swap out into
        them, and its copies run after this step's.
        """
        plan = self._swap_in_plan(seq)
        # Claim the still-cached blocks before taking fresh ones, which could evict them.
        for block_id in plan:
            if block_id is not None:
                self._claim(block_id)
        bs = self.block_size
        pairs: list[tuple[int, int]] = []
        table: list[int] = []
        for i, (host, block_id) in enumerate(zip(seq.host_block_table, plan, strict=True)):
            if block_id is None:
                block_id = self._take_free_block()
                pairs.append((host, block_id))
                if i < len(seq.block_hashes):
                    self._register(block_id, seq.block_hashes[i],
                                   tuple(seq.token_ids[i * bs : (i + 1) * bs]))
            table.append(block_id)
        self.free_host_block_ids.extend(seq.host_block_table)
        seq.host_block_table = []
        seq.block_table = table
        self.allocate(seq, num_new_tokens)
        self.blocks_swapped_in += len(pairs)
        return pairs
