"""The replica router's policy (pipeline/replicas/affinity.py) and the per-replica /metrics
merge, without a cluster: keys, rendezvous preference, the load bound."""

from __future__ import annotations

import json

from prometheus_client.parser import text_string_to_metric_families

from pipeline.replicas.affinity import affinity_key, preference, rank
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


def test_load_breaks_affinity_only_past_the_imbalance_bound() -> None:
    key = "q:abc"
    order = preference(key, REPLICAS)
    loads = dict.fromkeys(REPLICAS, 0)
    assert rank(key, loads, 4) == [[order[0]], order[1:]]
    loads[order[0]] = 4  # at the bound: still preferred
    assert rank(key, loads, 4)[0] == [order[0]]
    loads[order[0]] = 5  # past it: the least-loaded first, then the preference order
    ranks = rank(key, loads, 4)
    assert set(ranks[0]) == set(REPLICAS) - {order[0]}
    assert ranks[1] == order
    loads = {"r0": 3, "r1": None, "r2": 1}  # no key: least loaded first (unknown reads 0)
    assert rank(None, loads, 4) == [["r1", "r2", "r0"]]
    assert rank(key, {}, 4) == []


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
