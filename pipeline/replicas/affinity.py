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
keys. Load breaks the choice when the preferred replica holds `imbalance` more requests than
the least-loaded one: a hot key cannot pile a queue on one replica while others idle.
"""

from __future__ import annotations

import hashlib
import json
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


def rank(key: str | None, loads: Mapping[str, Any], imbalance: int) -> list[list[str]]:
    """Ranks of replica ids for the router, most preferred first.

    `loads` maps each candidate to its ongoing requests (None: unknown, taken as 0).
    Without a key, or when the preferred replica is more than `imbalance` requests above
    the least-loaded one, the least-loaded replicas come first; the preferred one next."""
    if not loads:
        return []
    load = {rid: n or 0 for rid, n in loads.items()}
    by_load = sorted(load, key=lambda rid: load[rid])
    if key is None:
        return [by_load]
    order = preference(key, list(load))
    first = order[0]
    if load[first] - load[by_load[0]] > imbalance:
        return [[rid for rid in by_load if load[rid] == load[by_load[0]]], order]
    return [[first], order[1:]] if len(order) > 1 else [[first]]
