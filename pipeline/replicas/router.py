"""The request routers of the replica deployment (Ray Serve's RequestRouter interface).

The mechanism is Ray Serve's: a router returns ranks of candidate replicas, and Serve
probes their queue lengths, skips full ones (max_ongoing_requests) and backs off when all
are full. What is ours is the ranking (affinity.rank), and what both routers do: publish
the live replicas and their metrics to the ingress process they run in (live.py).
"""

from __future__ import annotations

from ray.serve._private.request_router.pow_2_router import PowerOfTwoChoicesRequestRouter
from ray.serve.request_router import PendingRequest, RequestRouter, RunningReplica

from pipeline.replicas import live
from pipeline.replicas.affinity import rank

AFFINITY_KWARG = "affinity"
METRICS_STAT = "metrics"


def replica_name(replica: RunningReplica) -> str:
    return replica.replica_id.unique_id


class _Publish:
    def update_replicas(self, replicas: list[RunningReplica]) -> None:
        super().update_replicas(replicas)  # type: ignore[misc]
        live.publish({replica_name(r): (r.routing_stats or {}).get(METRICS_STAT)
                      for r in replicas})

    def on_replica_actor_died(self, replica_id) -> None:
        super().on_replica_actor_died(replica_id)  # type: ignore[misc]
        live.drop(replica_id.unique_id)


class AffinityRouter(_Publish, RequestRouter):
    """Requests with the same affinity key go to the same replica, within a load bound."""

    def initialize_state(self, balance_factor: float = 1.25, **kwargs) -> None:
        self.balance_factor = balance_factor

    async def choose_replicas(self, candidate_replicas: list[RunningReplica],
                              pending_request: PendingRequest | None = None,
                              ) -> list[list[RunningReplica]]:
        key = pending_request.kwargs.get(AFFINITY_KWARG) if pending_request is not None else None
        by_name = {replica_name(r): r for r in candidate_replicas}
        cache = self.replica_queue_len_cache
        loads = {name: cache.get(r.replica_id) for name, r in by_name.items()}
        return [[by_name[name] for name in tier] for tier in rank(key, loads, self.balance_factor)]


class DefaultRouter(_Publish, PowerOfTwoChoicesRequestRouter):
    """Ray Serve's default router (power of two choices), unchanged but for publishing the
    replicas' metrics: what the affinity router is measured against."""
