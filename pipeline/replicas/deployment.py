"""The Ray Serve application: `Ingress` in front of `FinragReplica`, from the settings."""

from __future__ import annotations

from typing import Any

from ray import serve
from ray.serve.config import RequestRouterConfig

from pipeline.replicas.artifacts import build_artifacts
from pipeline.replicas.ingress import Ingress
from pipeline.replicas.replica import FinragReplica
from pipeline.replicas.router import AffinityRouter, DefaultRouter
from pipeline.settings import Settings

APP_NAME = "finrag"
# A replica that died before answering is retried this many times on another.
RETRIES = 2
METRICS_PERIOD_S = 2.0


def scaling(settings: Settings) -> dict[str, Any]:
    """num_replicas, or Serve's autoscaling on queue depth between num_replicas and
    max_replicas (target_ongoing_requests per replica)."""
    if settings.max_replicas is None:
        return {"num_replicas": settings.num_replicas}
    return {"autoscaling_config": {"min_replicas": settings.num_replicas,
                                   "initial_replicas": settings.num_replicas,
                                   "max_replicas": settings.max_replicas,
                                   "target_ongoing_requests": settings.target_ongoing_requests}}


def build_app(settings: Settings) -> serve.Application:
    router = AffinityRouter if settings.replica_router == "affinity" else DefaultRouter
    # Back-pressure as in one process: a replica takes max_queued_requests at once (its own
    # admission still bounds tokens); past that on every replica, as many again wait in the
    # ingress's handle, and then the answer is 503 + Retry-After.
    replicas = serve.deployment(
        FinragReplica, name="FinragReplica",
        max_ongoing_requests=settings.max_queued_requests,
        max_queued_requests=settings.max_queued_requests,
        request_router_config=RequestRouterConfig(
            request_router_class=router,
            request_router_kwargs={"balance_factor": settings.affinity_balance_factor}
            if router is AffinityRouter else {},
            # how old the replicas' metrics a /metrics scrape sees may be (live.py)
            request_routing_stats_period_s=METRICS_PERIOD_S),
        health_check_period_s=2.0, health_check_timeout_s=30.0,
        graceful_shutdown_timeout_s=settings.shutdown_timeout,
        ray_actor_options={"num_cpus": 1}, **scaling(settings),
    ).bind(settings)
    # The ingress does no model work: no CPU reserved, and never the bottleneck of admission.
    most = (settings.max_replicas or settings.num_replicas) * settings.max_queued_requests * 2
    ingress = serve.deployment(Ingress, name="Ingress", max_ongoing_requests=most,
                               ray_actor_options={"num_cpus": 0})
    return ingress.bind(replicas, RETRIES, 1, settings.key_collections())


def app_builder(args: dict[str, Any]) -> serve.Application:
    """The application for a Serve config's import_path (a KubeRay RayService, `serve run`):
    `args` are finrag settings, `config` a settings YAML file; FINRAG_* variables apply."""
    from pipeline.settings_sources import load_settings

    values = dict(args)
    config = values.pop("config", None)
    return build_app(build_artifacts(load_settings(config, values)))
