"""/metrics of every replica in one exposition, each sample labelled with its `replica`."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample


class _Merged:
    def __init__(self, families: dict[str, Metric]) -> None:
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return list(self.families.values())


def merge(texts: dict[str, str]) -> bytes:
    """One Prometheus text exposition from {replica id: its /metrics text}."""
    families: dict[str, Metric] = {}
    for replica, text in sorted(texts.items()):
        for fam in text_string_to_metric_families(text):
            into = families.setdefault(fam.name, Metric(fam.name, fam.documentation, fam.type))
            into.samples += [Sample(s.name, {"replica": replica, **s.labels}, s.value,
                                    s.timestamp, s.exemplar) for s in fam.samples]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged(families))
    return generate_latest(registry)
