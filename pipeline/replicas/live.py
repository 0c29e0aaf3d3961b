"""The live replicas and their latest /metrics text, as the request router in this
process last heard them.

The text travels with Ray Serve's routing stats: each replica's `record_routing_stats`
returns it, the controller collects it every `request_routing_stats_period_s` and hands it
to every router with the replica list, so the ingress answers /metrics without a call to
any replica (a scrape sees figures at most that period old). Its own module because Serve
ships a custom router class by value (cloudpickle): state kept in the router's module would
be a copy, while this module is imported by reference in the ingress process.
"""

from __future__ import annotations

_LIVE: dict[str, str | None] = {}


def publish(metrics: dict[str, str | None]) -> None:
    _LIVE.clear()
    _LIVE.update(metrics)


def drop(name: str) -> None:
    _LIVE.pop(name, None)


def live_replicas() -> list[str]:
    return sorted(_LIVE)


def metrics_texts() -> dict[str, str]:
    return {name: text for name, text in _LIVE.items() if text}
