"""OpenTelemetry spans: one per HTTP request, one per pipeline stage (intent, retrieve,
generate) and the engine's queue time, tagged with the request id.

Spans are made when the response has ended, from the times the request recorded, so the RAG
core carries no tracing code and a server without `otlp_traces_endpoint` pays nothing (no
SDK imported, no span made). The tracer provider is the server's own, not the global one.
"""

from __future__ import annotations

import time
from typing import Any

# Stage timings (Answer.timings keys, milliseconds) in the order the stages run.
STAGES = ("intent", "retrieve", "generate")


class Tracing:
    """Makes spans for finished requests; exports them with `exporter`, or over OTLP/HTTP to
    `endpoint` (opentelemetry-exporter-otlp-proto-http, the `otel` extra)."""

    def __init__(self, endpoint: str | None = None, exporter: Any = None,
                 service_name: str = "finrag") -> None:
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        except ImportError as exc:
            raise ImportError("otlp_traces_endpoint needs OpenTelemetry: pip install "
                              "'finrag[otel]'") from exc
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            # Batched, on the SDK's own thread: exporting never delays a response.
            self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint)))
        else:
            self.provider.add_span_processor(SimpleSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("finrag")

    def record(self, name: str, start_ns: int, end_ns: int, attributes: dict[str, Any],
               timings: dict[str, Any] | None) -> None:
        """The request's span and, from its `timings` (ms), one child span per stage."""
        from opentelemetry import trace

        root = self.tracer.start_span(name, start_time=start_ns, attributes=attributes)
        context = trace.set_span_in_context(root)
        at = start_ns
        for stage in STAGES:
            ms = (timings or {}).get(f"{stage}_ms")
            if ms is None:
                continue
            end = at + int(ms * 1e6)
            span = self.tracer.start_span(stage, context=context, start_time=at,
                                          attributes={"finrag.request_id":
                                                      attributes.get("finrag.request_id", "")})
            queue_ms = (timings or {}).get("queue_ms")
            if stage == "generate" and queue_ms is not None:
                self.tracer.start_span("engine_queue", context=trace.set_span_in_context(span),
                                       start_time=at).end(end_time=at + int(queue_ms * 1e6))
            span.end(end_time=end)
            at = end
        root.end(end_time=end_ns)

    def shutdown(self) -> None:
        self.provider.shutdown()


def now_ns() -> int:
    """Wall-clock nanoseconds, as OpenTelemetry's span times are."""
    return time.time_ns()
