"""Settings -> the Ray Serve application (pipeline/replicas/deployment.py), without a
cluster: replica count or autoscaling on queue depth, back-pressure bounds, the router and
the loads it ranks on; and the artifacts the driver builds once, handed to replicas by
absolute path."""

from __future__ import annotations

import asyncio
import json

import pytest
from paths import TATQA
from prereqs import RAY, require_module

from pipeline.cli import _parser
from pipeline.replicas.artifacts import build_artifacts
from pipeline.settings_sources import SettingsError, load_settings


def _replicas(**values):
    require_module("ray.serve", RAY)
    from pipeline.replicas.deployment import build_app

    ingress = build_app(load_settings(None, values, environ={}))._bound_deployment
    return ingress, ingress.init_args[0]._bound_deployment


def test_fixed_replicas_and_back_pressure_from_the_admission_bound() -> None:
    ingress, replicas = _replicas(num_replicas=3, max_queued_requests=16,
                                  affinity_balance_factor=1.5)
    config = replicas._deployment_config
    assert replicas.num_replicas == 3 and config.autoscaling_config is None
    assert config.max_ongoing_requests == 16 and config.max_queued_requests == 16
    assert config.request_router_config.request_router_class.endswith("router.AffinityRouter")
    assert config.request_router_config.request_router_kwargs == {"balance_factor": 1.5}
    assert ingress.ray_actor_options["num_cpus"] == 0
    assert ingress._deployment_config.max_ongoing_requests >= 3 * 16


def test_autoscaling_between_num_and_max_replicas_on_ongoing_requests() -> None:
    _, replicas = _replicas(num_replicas=2, max_replicas=5, target_ongoing_requests=3,
                            replica_router="power_of_two")
    auto = replicas._deployment_config.autoscaling_config
    assert (auto.min_replicas, auto.initial_replicas, auto.max_replicas) == (2, 2, 5)
    assert auto.target_ongoing_requests == 3
    router = replicas._deployment_config.request_router_config.request_router_class
    assert router.endswith("router.DefaultRouter")


def test_replica_settings_are_checked_and_are_serve_flags() -> None:
    with pytest.raises(SettingsError, match="max_replicas: must be at least num_replicas"):
        load_settings(None, {"num_replicas": 3, "max_replicas": 2}, environ={})
    with pytest.raises(SettingsError, match="replica_router"):
        load_settings(None, {"replica_router": "random"}, environ={})
    with pytest.raises(SettingsError, match="affinity_balance_factor"):  # below 1: all may be full
        load_settings(None, {"affinity_balance_factor": 0.9}, environ={})
    args = _parser().parse_args(["serve", "--num-replicas", "2", "--ray-address", "auto",
                                 "--max-replicas", "4", "--target-ongoing-requests", "2.5",
                                 "--replica-router", "power_of_two", "--affinity-balance-factor", "1.5"])
    assert (args.num_replicas, args.ray_address, args.max_replicas) == (2, "auto", 4)
    assert (args.target_ongoing_requests, args.replica_router, args.affinity_balance_factor) == \
        (2.5, "power_of_two", 1.5)
    env = load_settings(None, {}, environ={"FINRAG_NUM_REPLICAS": "2",
                                           "FINRAG_RAY_ADDRESS": "ray://head:10001"})
    assert (env.num_replicas, env.ray_address) == (2, "ray://head:10001")


def test_the_driver_hands_replicas_absolute_paths(tmp_path, monkeypatch,
                                                   prepared_default, engines_dir) -> None:
    """Built once in the driver, from relative paths; replicas may start anywhere."""
    (tmp_path / "corpus.json").write_text(json.dumps(json.loads(TATQA.read_text())[:3]))
    monkeypatch.chdir(tmp_path)
    settings = build_artifacts(load_settings(None, {
        "engines_dir": str(engines_dir), "corpus": "corpus.json", "index": "index",
        "audit_log": "audit.jsonl"}, environ={}))
    assert settings.index == str(tmp_path / "index") and (tmp_path / "index").is_dir()
    assert settings.audit_log == str(tmp_path / "audit.jsonl")
    assert settings.engine.engines_dir == str(engines_dir.resolve())
    assert (settings.model, settings.served_model_name) == ("default", "default")


def test_the_affinity_router_counts_what_it_placed_when_serves_cache_goes_stale() -> None:
    """Serve's queue-length cache forgets a replica no request touched for 10 s (it reads
    None, which would rank a replica busy with long requests as idle); the router's own
    count of what it placed and has not seen complete does not."""
    require_module("ray.serve", RAY)
    from ray.serve._private.common import DeploymentHandleSource, DeploymentID, RequestMetadata
    from ray.serve.request_router import PendingRequest, ReplicaID

    from pipeline.replicas.router import AffinityRouter

    # The router lives on Serve's event loop, and a PendingRequest makes its future on the
    # running one: the scenario runs inside a loop of its own.
    async def scenario() -> None:
        now = [0.0]  # Serve's cache reads this clock: no sleeping
        deployment = DeploymentID(name="FinragReplica", app_name="finrag")
        router = AffinityRouter(deployment_id=deployment, handle_source=DeploymentHandleSource.UNKNOWN,
                                use_replica_queue_len_cache=True, get_curr_time_s=lambda: now[0])
        router.initialize_state(balance_factor=1.25)
        a, b = (ReplicaID(unique_id=name, deployment_id=deployment) for name in "ab")
        for i in range(3):
            pending = PendingRequest(args=[], kwargs={}, metadata=RequestMetadata(
                request_id=str(i), internal_request_id=f"id{i}"))
            router.on_request_routed(pending, a, None)
            router.on_new_queue_len_info(a, i + 1)  # what the replica answers on accepting it
        assert router.loads([a, b]) == {a: 3, b: 0}
        now[0] = 60.0
        assert router.replica_queue_len_cache.get(a) is None
        assert router.loads([a, b]) == {a: 3, b: 0}
        router.on_request_completed(a, "id0")
        router.on_request_completed(b, "rejected")  # completes, was never counted as placed
        assert router.loads([a, b]) == {a: 2, b: 0}
        router.on_new_queue_len_info(b, 5)  # requests other routers placed: only the cache knows
        assert router.loads([a, b]) == {a: 2, b: 5}
        router.on_replica_actor_died(a)
        assert router.loads([a]) == {a: 0}

    asyncio.run(scenario())
