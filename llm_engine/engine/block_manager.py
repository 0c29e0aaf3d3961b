"""KV-cache blocks: a free list, reference counts and prefix caching by block hash."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence as Seq

from llm_engine.sequence import Sequence


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "token_ids")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0
        self.hash = -1
        self.token_ids: tuple[int, ...] = ()


def block_hash(parent: int | None, token_ids: Seq[int]) -> int:
    """A full block's identity: its tokens and, through the parent hash, everything before."""
    return hash((parent, tuple(token_ids)))


class BlockManager:
    """Hands out fixed-size KV blocks and shares full ones between sequences.

    A full block is registered under the hash of its tokens chained to its parent's hash,
    so equal prefixes map to the same blocks. A block whose last user is gone goes back
    to the free list but keeps its hash: it can still be hit until it is reused, and reuse
    takes the least recently freed block first.
    """

    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True):
        self.block_size = block_size
        self.enable_prefix_caching = enable_prefix_caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        # Ordered oldest-freed first; the value is unused.
        self.free_block_ids: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self.hash_to_block_id: dict[int, int] = {}
        self.prefix_queries = 0  # prompt tokens looked up
        self.prefix_hits = 0  # of which found in the cache

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def num_free_blocks(self) -> int:
        return len(self.free_block_ids)

    def usage(self) -> float:
        return 1.0 - self.num_free_blocks / self.num_blocks

    def blocks_needed(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    def get_computed_blocks(self, seq: Sequence) -> tuple[list[int], list[int]]:
        """The longest cached run of full blocks at the start of `seq`: (block ids, hashes).

        At least one token is left out so that the step that follows has a position to
        compute logits from.
        """
        if not self.enable_prefix_caching:
            return [], []
        ids: list[int] = []
        hashes: list[int] = []
        parent: int | None = None
        bs = self.block_size
        for i in range((seq.num_tokens - 1) // bs):
            tokens = seq.token_ids[i * bs : (i + 1) * bs]
            h = block_hash(parent, tokens)
            block_id = self.hash_to_block_id.get(h)
            if block_id is None or self.blocks[block_id].token_ids != tuple(tokens):
                break
            ids.append(block_id)
            hashes.append(h)
            parent = h
        self.prefix_queries += seq.num_tokens
        self.prefix_hits += len(ids) * bs
        return ids, hashes

    def can_allocate(self, seq: Sequence, num_new_tokens: int, computed: Seq[int] = ()) -> bool:
        num_tokens = seq.num_computed_tokens + len(computed) * self.block_size + num_new_tokens
        need = self.blocks_needed(num_tokens) - len(seq.block_table) - len(computed)
        # Hit blocks that nobody holds sit on the free list: taking them costs free blocks too.
        revived = sum(1 for b in computed if self.blocks[b].ref_count == 0)
        return max(need, 0) + revived <= self.num_free_blocks

    def allocate(
        self, seq: Sequence, num_new_tokens: int, computed: Seq[int] = (), hashes: Seq[int] = ()
    ) -> None:
        """Give `seq` blocks for `num_new_tokens` more tokens, after the hit blocks `computed`."""
        for block_id in computed:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                del self.free_block_ids[block_id]
            block.ref_count += 1
            seq.block_table.append(block_id)
        seq.block_hashes.extend(hashes)
        need = self.blocks_needed(
            seq.num_computed_tokens + len(computed) * self.block_size + num_new_tokens
        )
        while len(seq.block_table) < need:
            seq.block_table.append(self._take_free_block())

    def _take_free_block(self) -> int:
        block_id, _ = self.free_block_ids.popitem(last=False)
        block = self.blocks[block_id]
        if block.hash != -1 and self.hash_to_block_id.get(block.hash) == block_id:
            del self.hash_to_block_id[block.hash]
        block.hash, block.token_ids, block.ref_count = -1, (), 1
        return block_id

    def cache_full_blocks(self, seq: Sequence, num_tokens: int) -> None:
        """Register the blocks that the first `num_tokens` tokens of `seq` fill completely."""
        if not self.enable_prefix_caching:
            return
        bs = self.block_size
        for i in range(len(seq.block_hashes), num_tokens // bs):
            parent = seq.block_hashes[i - 1] if i else None
            tokens = tuple(seq.token_ids[i * bs : (i + 1) * bs])
            h = block_hash(parent, tokens)
            seq.block_hashes.append(h)
            block = self.blocks[seq.block_table[i]]
            # Another sequence may have cached the same content first; keep that copy.
            if h not in self.hash_to_block_id:
                self.hash_to_block_id[h] = block.block_id
                block.hash, block.token_ids = h, tokens

    def free(self, seq: Sequence) -> None:
        """Release `seq`'s blocks. The tail goes back first so it is evicted first."""
        for block_id in reversed(seq.block_table):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free_block_ids[block_id] = None
                if block.hash == -1:
                    # Nothing to hit in it: hand it out before any block that still has a hash.
                    self.free_block_ids.move_to_end(block_id, last=False)
        seq.block_table = []
        seq.block_hashes = []
