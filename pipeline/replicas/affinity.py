"""Affinity policy: which replica a request prefers, and when load overrides that.

finrag's prompts put the system prompt, then the question, then the retrieved passages
(pipeline.rag.prompts): two /ask requests share KV blocks past the system prompt only when
they ask the same question (whatever its case and spacing), and then they share the whole
prompt, passages included, because retrieval is deterministic. So /ask is keyed by the
normalized question. An OpenAI chat is keyed by its first two messages (system + first user
turn): every later turn of one conversation extends the same prefix. A completion is keyed
by the head of its prompt. Requests without a key (GET routes, unreadable bodies) have none
and go to the least-loaded replica.

The preferred replica for a key is chosen by rendezvous hashing (highest hash of key and
replica id): stable while replicas come and go, and a replica's death moves only its own
keys. Load bounds the choice as in consistent hashing with bounded loads (Mirrokni, Thorup
and Zadimoghaddam, 2018; HAProxy's and Envoy's hash balance factor): a replica takes a key
only while it holds fewer than ceil(c * (in flight + 1) / replicas) requests, else the next
replica in the key's rendezvous order does. The bound is relative to the total in flight,
so it holds at 4 requests as at 400: a hot key or an unlucky hash cannot pile a queue on one
replica while others idle, and a key keeps its replica while that one is under the bound.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

# Enough of a completion prompt to tell conversations apart, little enough to hash at once.
PROMPT_HEAD_CHARS = 512


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def affinity_key(method: str, path: str, body: bytes) -> str | None:
    """The request's affinity key, or None when it has none."""
    if method != "POST" or not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None  # the replica answers the error; any replica will do
    if not isinstance(data, dict):
        return None
    if path in ("/ask", "/search"):
        question = data.get("question", data.get("query"))
        if isinstance(question, str):
            return "q:" + _digest(" ".join(question.lower().split()))
    elif path == "/v1/chat/completions":
        messages = data.get("messages")
        if isinstance(messages, list) and messages:
            return "c:" + _digest(json.dumps(messages[:2], sort_keys=True, default=str))
    elif path == "/v1/completions":
        prompt = data.get("prompt")
        if isinstance(prompt, list) and prompt:
            prompt = prompt[0]
        if isinstance(prompt, (str, list)):
            return "p:" + _digest(json.dumps(prompt, default=str)[:PROMPT_HEAD_CHARS])
    return None


def preference(key: str, replica_ids: Sequence[str]) -> list[str]:
    """Replica ids from most to least preferred for `key` (rendezvous hashing)."""
    return sorted(replica_ids, key=lambda rid: _digest(f"{key}|{rid}"), reverse=True)


def capacity(in_flight: int, replicas: int, balance_factor: float) -> int:
    """Most requests one replica may hold once the next one is placed:
    ceil(balance_factor * (in_flight + 1) / replicas), at least 1 when balance_factor >= 1."""
    # Rounded first: 1.1 * 10 / 11 is 1.0000000000000002 in floats, and its ceiling 2 would
    # let one replica take twice its share.
    return math.ceil(round(balance_factor * (in_flight + 1) / replicas, 9))


def rank(key: str | None, loads: Mapping[str, Any], balance_factor: float) -> list[list[str]]:
    """Ranks of replica ids for the router, most preferred first.

    `loads` maps each candidate to its ongoing requests (None: unknown, taken as 0).
    Without a key, the least-loaded replicas come first. With one, the key's rendezvous
    order, each replica its own rank: first those below `capacity`, then those at or past it
    (the router reaches them only when every replica below it is full)."""
    if not loads:
        return []
    load = {rid: n or 0 for rid, n in loads.items()}
    if key is None:
        return [sorted(load, key=lambda rid: load[rid])]
    order = preference(key, list(load))
    cap = capacity(sum(load.values()), len(load), balance_factor)
    return [[rid] for rid in sorted(order, key=lambda rid: load[rid] >= cap)]
