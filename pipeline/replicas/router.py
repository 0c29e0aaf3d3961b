"""The request routers of the replica deployment (Ray Serve's RequestRouter interface).

The mechanism is Ray Serve's: a router returns ranks of candidate replicas, and Serve
probes their queue lengths, skips full ones (max_ongoing_requests) and backs off when all
are full. What is ours is the ranking (affinity.rank), the loads it ranks on, and what both
routers do: publish the live replicas and their metrics to the ingress process they run in
(live.py).

Serve's queue-length cache is set from each replica's answer when it accepts a request and
counted down when one completes, but an entry no request has touched for
RAY_SERVE_QUEUE_LENGTH_CACHE_TIMEOUT_S (10 s) reads None: a replica busy with long requests
would then look idle. So the affinity router also counts what it placed itself and has not
seen complete (Serve's on_request_routed / on_request_completed hooks), never stale, and
ranks on the larger of the two (the cache also sees requests other routers placed).
"""

from __future__ import annotations

from collections import defaultdict

from ray.serve._private.request_router.pow_2_router import PowerOfTwoChoicesRequestRouter
from ray.serve.request_router import PendingRequest, ReplicaID, ReplicaResult, RequestRouter, RunningReplica

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
        # replica -> internal ids of the requests this router placed there, not yet complete
        self.placed: defaultdict[ReplicaID, set[str]] = defaultdict(set)

    def loads(self, replica_ids: list[ReplicaID]) -> dict[ReplicaID, int]:
        cache = self.replica_queue_len_cache
        return {rid: max(cache.get(rid) or 0, len(self.placed.get(rid, ()))) for rid in replica_ids}

    async def choose_replicas(self, candidate_replicas: list[RunningReplica],
                              pending_request: PendingRequest | None = None,
                              ) -> list[list[RunningReplica]]:
        key = pending_request.kwargs.get(AFFINITY_KWARG) if pending_request is not None else None
        by_name = {replica_name(r): r for r in candidate_replicas}
        loads = self.loads([r.replica_id for r in candidate_replicas])
        named = {replica_name(r): loads[r.replica_id] for r in candidate_replicas}
        return [[by_name[name] for name in tier]
                for tier in rank(key, named, self.balance_factor)]

    def on_request_routed(self, pending_request: PendingRequest, replica_id: ReplicaID,
                          result: ReplicaResult) -> None:
        self.placed[replica_id].add(pending_request.metadata.internal_request_id)

    def on_request_completed(self, replica_id: ReplicaID, internal_request_id: str) -> None:
        # Also called for a request the replica rejected, which was never counted.
        placed = self.placed.get(replica_id)
        if placed is not None:
            placed.discard(internal_request_id)
            if not placed:
                del self.placed[replica_id]

    def on_replica_actor_died(self, replica_id: ReplicaID) -> None:
        super().on_replica_actor_died(replica_id)
        self.placed.pop(replica_id, None)


class DefaultRouter(_Publish, PowerOfTwoChoicesRequestRouter):
    """Ray Serve's default router (power of two choices), unchanged but for publishing the
    replicas' metrics: what the affinity router is measured against."""
