"""Block accounting: reference counts, prefix hits, LRU reuse of freed cached blocks."""

from __future__ import annotations

import pytest

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


def test_swap_out_and_in_moves_every_block_and_returns_host_blocks() -> None:
    bm = BlockManager(6, 4, num_host_blocks=4)
    seq = make_seq("a", list(range(10)))
    run_prefill(bm, seq)
    device = list(seq.block_table)
    assert bm.can_swap_out(seq)
    out = bm.swap_out(seq)
    assert [d for d, _ in out] == device and seq.block_table == []
    assert bm.num_free_blocks == 6 and bm.num_free_host_blocks == 1
    assert seq.host_block_table == [h for _, h in out]
    # The two full blocks are still cached on the device: they come back shared, not
    # copied; only the partial third block is copied in. One more token needs no new block.
    back = bm.swap_in(seq, 1)
    assert back == [(out[2][1], seq.block_table[2])]
    assert seq.block_table[:2] == device[:2] and seq.host_block_table == []
    assert bm.num_free_host_blocks == 4
    assert (bm.blocks_swapped_out, bm.blocks_swapped_in) == (3, 1)
    bm.free(seq)
    assert bm.num_free_blocks == 6


def test_swap_in_copies_blocks_whose_cached_copy_was_reused() -> None:
    bm = BlockManager(4, 4, num_host_blocks=4)
    seq = make_seq("a", list(range(9)))
    run_prefill(bm, seq)
    out = bm.swap_out(seq)
    # Another sequence takes every device block, evicting the cached ones.
    other = make_seq("o", list(range(100, 116)))
    run_prefill(bm, other)
    assert not bm.can_swap_in(seq, 1)
    bm.free(other)
    assert bm.can_swap_in(seq, 1)
    back = bm.swap_in(seq, 1)
    assert [h for h, _ in back] == [h for _, h in out]  # all three copied back
    # The copied-in full blocks are registered again: a new sequence hits them.
    bm.free(seq)
    assert run_prefill(bm, make_seq("b", list(range(8)) + [5])) == 2


def test_swap_out_needs_room_for_every_block_and_free_releases_host_blocks() -> None:
    bm = BlockManager(8, 4, num_host_blocks=2)
    seq = make_seq("a", list(range(10)))
    run_prefill(bm, seq)
    assert not bm.can_swap_out(seq)  # three blocks, two host blocks
    short = make_seq("s", list(range(20, 26)))
    run_prefill(bm, short)
    bm.swap_out(short)
    assert bm.num_free_host_blocks == 0
    bm.free(short)  # an abort while swapped out
    assert bm.num_free_host_blocks == 2 and short.host_block_table == []


def test_blocks_are_shared_within_the_step_that_computes_them() -> None:
    bm = BlockManager(8, 4)
    a = make_seq("a", list(range(9)))
    bm.allocate(a, 9)  # scheduled, not yet computed
    b = make_seq("b", list(range(8)) + [42])
    computed, _ = bm.get_computed_blocks(b)
    assert computed == a.block_table[:2]


def test_blocks_of_a_failed_step_lose_their_hash() -> None:
    bm = BlockManager(8, 4)
    a = make_seq("a", list(range(9)))
    bm.allocate(a, 9)
    a.finish_reason = "error"
    bm.free(a, keep_cached=False)
    assert bm.hash_to_block_id == {} and all(b.hash == -1 for b in bm.blocks)
    assert bm.get_computed_blocks(make_seq("b", list(range(9)))) == ([], [])


def test_block_hashes_are_sha256_of_the_parent_and_tokens_by_default() -> None:
    """vLLM's answer to CVE-2025-25183: a collision-resistant hash, chained block to block."""
    import hashlib
    from array import array

    bm = BlockManager(8, 4)
    seq = make_seq("a", list(range(9)))
    run_prefill(bm, seq)
    first = hashlib.sha256(b"\x00" + array("q", range(4)).tobytes()).digest()
    second = hashlib.sha256(b"\x01" + first + array("q", range(4, 8)).tobytes()).digest()
    assert seq.block_hashes == [int.from_bytes(first, "big"), int.from_bytes(second, "big")]
    # The same four tokens after another parent are another block.
    other = make_seq("b", [9, 9, 9, 9, 4, 5, 6, 7, 1])
    run_prefill(bm, other)
    assert other.block_hashes[1] != seq.block_hashes[1]


@pytest.mark.parametrize("algo", ["sha256", "builtin"])
def test_prefix_hits_are_the_same_under_either_hash(algo: str) -> None:
    bm = BlockManager(8, 4, hash_algo=algo)
    run_prefill(bm, make_seq("a", list(range(12)) + [99]))
    assert run_prefill(bm, make_seq("b", list(range(12)) + [42])) == 3
    assert run_prefill(bm, make_seq("c", [0, 1, 2, 3, 0, 1, 2, 3, 7])) == 1
    assert run_prefill(bm, make_seq("d", [0, 1, 2, 3, 0, 1, 2, 3, 5])) == 2


def test_the_engine_option_picks_the_hash(tmp_path) -> None:
    from test_engine_exactness import _tiny_model

    from llm_engine import EngineConfig, LLMEngine
    from llm_engine.engine.block_hash import builtin_block_hash, sha256_block_hash

    folder = _tiny_model(tmp_path, "llama")
    for algo, fn in [("builtin", builtin_block_hash), ("sha256", sha256_block_hash)]:
        engine = LLMEngine(EngineConfig(model=str(folder), skip_tokenizer_init=True,
                                        kv_cache_memory=1 << 20, prefix_caching_hash_algo=algo))
        assert engine.block_manager.block_hash is fn
