"""Block accounting: reference counts, prefix hits, LRU reuse of freed cached blocks."""

from __future__ import annotations

from llm_engine import SamplingParams
from llm_engine.engine.block_manager import BlockManager
from llm_engine.sequence import Sequence


def make_seq(rid: str, tokens: list[int]) -> Sequence:
    return Sequence(rid, None, tokens, SamplingParams())


def run_prefill(bm: BlockManager, seq: Sequence) -> int:
    computed, hashes = bm.get_computed_blocks(seq)
    n = seq.num_tokens - len(computed) * bm.block_size
    assert bm.can_allocate(seq, n, computed)
    bm.allocate(seq, n, computed, hashes)
    seq.num_computed_tokens = seq.num_tokens
    bm.cache_full_blocks(seq, seq.num_tokens)
    return len(computed)


def test_allocate_and_free_return_every_block() -> None:
    bm = BlockManager(8, 4)
    seq = make_seq("a", list(range(10)))
    run_prefill(bm, seq)
    assert len(seq.block_table) == 3 and bm.num_free_blocks == 5
    bm.free(seq)
    assert bm.num_free_blocks == 8 and seq.block_table == []


def test_shared_prefix_is_hit_and_reference_counted() -> None:
    bm = BlockManager(8, 4)
    a = make_seq("a", list(range(12)) + [99])
    b = make_seq("b", list(range(12)) + [42, 43])
    run_prefill(bm, a)
    hits = run_prefill(bm, b)
    assert hits == 3 and b.block_table[:3] == a.block_table[:3]
    assert [bm.blocks[i].ref_count for i in a.block_table[:3]] == [2, 2, 2]
    bm.free(a)
    assert [bm.blocks[i].ref_count for i in b.block_table[:3]] == [1, 1, 1]
    bm.free(b)
    assert bm.num_free_blocks == 8


def test_only_full_blocks_are_shared_and_one_token_is_left_to_compute() -> None:
    bm = BlockManager(8, 4)
    a = make_seq("a", list(range(8)))
    run_prefill(bm, a)
    # Same 8 tokens: both blocks are cached, but the last token must be recomputed.
    b = make_seq("b", list(range(8)))
    assert run_prefill(bm, b) == 1
    c = make_seq("c", list(range(6)))
    assert run_prefill(bm, c) == 1  # the partial second block is never shared


def test_freed_blocks_keep_their_hash_until_reused_lru_first() -> None:
    bm = BlockManager(4, 4)
    a = make_seq("a", list(range(8)) + [7])
    run_prefill(bm, a)
    bm.free(a)
    again = make_seq("a2", list(range(8)) + [9])
    assert run_prefill(bm, again) == 2  # hit after free
    bm.free(again)
    # Fill the cache with other content: the freed blocks are reused, oldest first.
    other = make_seq("o", list(range(100, 113)))
    run_prefill(bm, other)
    bm.free(other)
    assert run_prefill(bm, make_seq("a3", list(range(8)) + [1])) == 0


def test_can_allocate_counts_revived_blocks() -> None:
    bm = BlockManager(3, 4)
    a = make_seq("a", list(range(8)) + [1])
    run_prefill(bm, a)
    bm.free(a)
    b = make_seq("b", list(range(8)) + list(range(50, 58)))
    computed, _ = bm.get_computed_blocks(b)
    assert len(computed) == 2
    # 2 revived blocks + 2 new ones > 3 free blocks.
    assert not bm.can_allocate(b, b.num_tokens - 8, computed)
