"""The replica router's policy (pipeline/replicas/affinity.py) and the per-replica /metrics
merge, without a cluster: keys, rendezvous preference, the bounded-load rule."""

from __future__ import annotations

import json
import random

from prometheus_client.parser import text_string_to_metric_families

from pipeline.replicas.affinity import affinity_key, capacity, preference, rank
from pipeline.replicas.metrics_merge import merge

REPLICAS = [f"r{i}" for i in range(5)]


def _post(path: str, body: dict) -> str | None:
    return affinity_key("POST", path, json.dumps(body).encode())


def test_keys_follow_what_the_prompt_prefix_depends_on() -> None:
    q = "What was the revenue in 2019?"
    assert _post("/ask", {"question": q}) == _post("/ask", {"question": "  what WAS the revenue "
                                                            "in 2019? ", "stream": True})
    assert _post("/ask", {"question": q}) != _post("/ask", {"question": "What was the revenue?"})
    assert _post("/search", {"query": q}) == _post("/ask", {"question": q})
    turn1 = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"}]
    turn2 = [*turn1, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    assert _post("/v1/chat/completions", {"messages": turn1}) == \
        _post("/v1/chat/completions", {"messages": turn2})
    assert _post("/v1/completions", {"prompt": "x" * 600 + "1"}) == \
        _post("/v1/completions", {"prompt": ["x" * 600 + "2"]})
    for method, path, body in [("GET", "/health", b""), ("POST", "/ask", b"{not json"),
                               ("POST", "/ask", b"[1]"), ("POST", "/ask", b'{"question": 3}'),
                               ("POST", "/tokenize", b'{"prompt": "x"}')]:
        assert affinity_key(method, path, body) is None


def test_rendezvous_preference_is_stable_when_other_replicas_go() -> None:
    keys = [f"q:{i}" for i in range(200)]
    first = {k: preference(k, REPLICAS)[0] for k in keys}
    assert len(set(first.values())) == len(REPLICAS)  # every replica is someone's first
    gone = "r2"
    rest = [r for r in REPLICAS if r != gone]
    for k in keys:  # only the dead replica's keys move
        if first[k] != gone:
            assert preference(k, rest)[0] == first[k]


def test_bounded_loads_keep_the_key_until_its_replica_holds_its_share() -> None:
    key = "q:abc"
    order = preference(key, REPLICAS)
    loads = dict.fromkeys(REPLICAS, 0)
    assert rank(key, loads, 1.25) == [[rid] for rid in order]  # idle: the key's order
    loads = dict.fromkeys(REPLICAS, 10)  # 50 in flight: a replica may hold ceil(1.25*51/5) = 13
    loads[order[0]] = 12
    assert rank(key, loads, 1.25)[0] == [order[0]]  # below the bound: still preferred
    loads[order[0]] = 14  # 54 in flight, bound ceil(1.25*55/5) = 14: at it, passed over
    assert rank(key, loads, 1.25) == [[rid] for rid in [*order[1:], order[0]]]
    loads = dict.fromkeys(REPLICAS, 0)
    loads[order[0]] = loads[order[1]] = 1  # 2 in flight, bound 1: the next idle one in order
    assert rank(key, loads, 1.25) == [[rid] for rid in [*order[2:], *order[:2]]]
    loads = {"r0": 3, "r1": None, "r2": 1}  # no key: least loaded first (unknown reads 0)
    assert rank(None, loads, 1.25) == [["r1", "r2", "r0"]]
    assert rank(key, {}, 1.25) == []


def test_the_bound_works_at_low_concurrency() -> None:
    """Two replicas, 4 requests at a time: the bound must move a key's request off a replica
    that holds 2 while the other idles (an absolute bound of 4 never would)."""
    pair = ["a", "b"]
    key = next(f"q:{i}" for i in range(100) if preference(f"q:{i}", pair)[0] == "a")
    assert rank(key, {"a": 1, "b": 0}, 1.25) == [["a"], ["b"]]  # bound ceil(1.25*2/2) = 2
    assert rank(key, {"a": 2, "b": 0}, 1.25) == [["b"], ["a"]]  # bound ceil(1.25*3/2) = 2
    assert rank(key, {"a": 2, "b": 1}, 1.25) == [["a"], ["b"]]  # bound ceil(1.25*4/2) = 3
    assert rank(key, {"a": 1, "b": 0}, 1.0) == [["b"], ["a"]]  # 1.0: no slack at all


def test_capacity_is_the_ceiling_of_the_share() -> None:
    assert [capacity(m, 2, 1.25) for m in range(6)] == [1, 2, 2, 3, 4, 4]
    assert capacity(9, 11, 1.1) == 1  # 1.1 * 10 / 11 rounds to 1.0, not 1.0000000000000002
    assert capacity(0, 5, 1.0) == 1


def test_placing_by_the_bound_never_lets_a_replica_past_it() -> None:
    """Requests arrive and complete in a seeded random order; each goes to the first rank:
    no replica ever holds more than the bound it was placed under, and the replicas ahead
    of the chosen one in the key's order were all at it."""
    rng = random.Random(7)
    loads = dict.fromkeys(REPLICAS, 0)
    held: list[str] = []
    for step in range(2000):
        if held and rng.random() < 0.45:
            loads[held.pop(rng.randrange(len(held)))] -= 1
            continue
        key = f"q:{rng.randrange(6)}"  # few hot keys: hashing alone would pile them up
        cap = capacity(sum(loads.values()), len(loads), 1.25)
        chosen = rank(key, loads, 1.25)[0][0]
        order = preference(key, REPLICAS)
        assert loads[chosen] < cap, step
        assert all(loads[rid] >= cap for rid in order[:order.index(chosen)]), step
        loads[chosen] += 1
        held.append(chosen)


def test_merged_metrics_label_every_sample_with_its_replica() -> None:
    one = ('# HELP vllm:prefix_cache_hits_total Hits.\n# TYPE vllm:prefix_cache_hits_total counter\n'
           'vllm:prefix_cache_hits_total{model_name="m"} %d\n'
           '# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n'
           'vllm:num_requests_running %d\n')
    text = merge({"b": one % (7, 1), "a": one % (5, 0)}).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    hits = {s.labels["replica"]: s.value for s in families["vllm:prefix_cache_hits"].samples
            if s.name.endswith("_total")}
    assert hits == {"a": 5.0, "b": 7.0}
    assert {s.labels["replica"] for s in families["vllm:num_requests_running"].samples} == {"a", "b"}
    assert text.count("# TYPE vllm:prefix_cache_hits_total counter") == 1
