"""A full KV block's identity for prefix caching: its tokens chained to its parent's hash.

Two blocks with one hash are taken to hold the same K/V, so a collision serves one
request another's cache. Python's `hash()` of a tuple is cheap but not collision-resistant:
a prompt can be crafted to collide with a block of someone else's (vLLM's
CVE-2025-25183). SHA-256 makes that infeasible; benchmarks/block_hash.py measures its cost.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable
from collections.abc import Sequence as Seq

BlockHasher = Callable[[int | None, Seq[int]], int]


def builtin_block_hash(parent: int | None, token_ids: Seq[int]) -> int:
    return hash((parent, tuple(token_ids)))


def sha256_block_hash(parent: int | None, token_ids: Seq[int]) -> int:
    # A fixed-width encoding (a marker byte, the 32-byte parent digest, 8 bytes a token)
    # keeps distinct (parent, tokens) pairs distinct as byte strings.
    head = b"\x00" if parent is None else b"\x01" + parent.to_bytes(32, "big")
    return int.from_bytes(hashlib.sha256(head + array("q", token_ids).tobytes()).digest(), "big")


BLOCK_HASHERS: dict[str, BlockHasher] = {"sha256": sha256_block_hash,
                                         "builtin": builtin_block_hash}
