"""Prometheus metrics on a registry of their own, with vLLM's names where they exist."""

from __future__ import annotations

from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from llm_engine import RequestOutput

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0,
                   40.0, 80.0, 160.0)
# vLLM's buckets for time per output token and for token counts per request.
TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
                7.5, 10.0, 20.0, 40.0, 80.0)
TOKEN_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


class _EngineCollector:
    """Reads the engine's state at scrape time (gauges and its own counters)."""

    def __init__(self, engine: Any, labels: dict[str, str]) -> None:
        self.engine, self.labels = engine, labels

    def describe(self) -> list:
        return []

    def collect(self):
        stats = self.engine.get_stats()
        names, values = list(self.labels), list(self.labels.values())

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            g = GaugeMetricFamily(name, doc, labels=names)
            g.add_metric(values, value)
            return g

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            c = CounterMetricFamily(name, doc, labels=names)
            c.add_metric(values, value)
            return c

        def by(family: GaugeMetricFamily | CounterMetricFamily,
               points: dict[str, float]) -> GaugeMetricFamily | CounterMetricFamily:
            """One sample per value of the family's last label."""
            for key, value in points.items():
                family.add_metric([*values, key], value)
            return family

        yield gauge("vllm:num_requests_running", "Requests in the running batch.",
                    stats.num_running)
        yield gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.",
                    stats.num_waiting)
        yield gauge("vllm:kv_cache_usage_perc", "KV-cache usage; 1 means 100 percent.",
                    stats.kv_cache_usage)
        yield counter("vllm:prefix_cache_queries", "Prefix-cache queries, in tokens.",
                      stats.prefix_cache_queries)
        yield counter("vllm:prefix_cache_hits", "Prefix-cache hits, in tokens.",
                      stats.prefix_cache_hits)
        yield counter("vllm:num_preemptions", "Preemptions.", stats.num_preemptions)
        yield counter("vllm:spec_decode_num_draft_tokens", "Draft tokens verified.",
                      stats.spec_decode_num_draft_tokens)
        yield counter("vllm:spec_decode_num_accepted_tokens", "Draft tokens accepted.",
                      stats.spec_decode_num_accepted_tokens)
        yield gauge("vllm:num_requests_swapped", "Requests swapped out to host memory.",
                    stats.num_swapped)
        yield gauge("vllm:cpu_cache_usage_perc", "Swap-space usage; 1 means 100 percent.",
                    stats.swap_space_usage)
        yield by(CounterMetricFamily("finrag:preemptions", "Preemptions by mode.",
                                     labels=[*names, "mode"]),
                 {"swap": stats.num_preemptions_swap,
                  "recompute": stats.num_preemptions_recompute})
        yield by(GaugeMetricFamily("finrag:kv_cache_blocks", "KV-cache blocks by state; "
                                   "swapped: host blocks holding preempted requests' KV.",
                                   labels=[*names, "state"]),
                 {"used": stats.num_used_blocks, "free": stats.num_free_blocks,
                  "swapped": stats.num_swapped_blocks})
        yield by(CounterMetricFamily("finrag:kv_blocks_swapped", "KV blocks copied between "
                                     "device and host memory.", labels=[*names, "direction"]),
                 {"out": stats.num_blocks_swapped_out, "in": stats.num_blocks_swapped_in})
        yield gauge("finrag:kv_cache_waste_ratio", "Allocated KV slots holding no token / "
                    "allocated slots, in the last step.", stats.kv_cache_waste)
        yield gauge("finrag:kv_cache_waste_at_peak_ratio", "KV waste in the step that used "
                    "the most blocks.", stats.kv_cache_waste_at_peak)


class Metrics:
    def __init__(self, engine: Any, model_name: str) -> None:
        self.registry = CollectorRegistry()
        labels = {"model_name": model_name}
        self.registry.register(_EngineCollector(engine, labels))
        r, mn = self.registry, ["model_name"]
        self.model_name = model_name
        self.ttft = Histogram("vllm:time_to_first_token_seconds", "Time to first token.", mn,
                              buckets=LATENCY_BUCKETS, registry=r)
        self.e2e = Histogram("vllm:e2e_request_latency_seconds", "End-to-end request latency.",
                             mn, buckets=LATENCY_BUCKETS, registry=r)
        self.prompt_tokens = Counter("vllm:prompt_tokens", "Prefilled prompt tokens.", mn,
                                     registry=r)
        self.generation_tokens = Counter("vllm:generation_tokens", "Generated tokens.", mn,
                                         registry=r)
        self.stage = Histogram("finrag:stage_latency_seconds", "Latency of each pipeline stage.",
                               ["stage"], buckets=LATENCY_BUCKETS, registry=r)
        self.requests = Counter("finrag:requests", "/ask requests by intent.", ["intent"],
                                registry=r)
        self.http_errors = Counter("finrag:request_errors", "Requests answered with an error.",
                                   ["status"], registry=r)
        # The answer rules' safety net (RAGPipeline._computed): a rule's bug, answered with no
        # number; above 0 a rule has a bug to fix (its traceback is in the log).
        self.rule_errors = Counter("finrag:answer_rule_errors", "Questions whose answer rules "
                                   "raised (answered with no number).", registry=r)
        # Per engine request, from its timeline (RequestOutput.metrics), as vLLM reports them.
        self.queue_time = Histogram("vllm:request_queue_time_seconds", "Time waiting in the "
                                    "queue before first scheduled.", mn, buckets=LATENCY_BUCKETS,
                                    registry=r)
        self.prefill_time = Histogram("vllm:request_prefill_time_seconds", "Time from first "
                                      "scheduled to first token.", mn, buckets=LATENCY_BUCKETS,
                                      registry=r)
        self.decode_time = Histogram("vllm:request_decode_time_seconds", "Time from first token "
                                     "to the last.", mn, buckets=LATENCY_BUCKETS, registry=r)
        self.tpot = Histogram("vllm:time_per_output_token_seconds", "Time per output token "
                              "after the first.", mn, buckets=TPOT_BUCKETS, registry=r)
        self.request_prompt_tokens = Histogram("vllm:request_prompt_tokens", "Prompt tokens "
                                               "per request.", mn, buckets=TOKEN_BUCKETS,
                                               registry=r)
        self.request_generation_tokens = Histogram("vllm:request_generation_tokens", "Generated "
                                                   "tokens per request.", mn,
                                                   buckets=TOKEN_BUCKETS, registry=r)
        self.success = Counter("vllm:request_success", "Finished requests by finish reason.",
                               [*mn, "finished_reason"], registry=r)
        ProcessCollector(registry=r)  # process_resident_memory_bytes, cpu seconds, fds
        self.batch_size = Histogram("finrag:retrieval_batch_size",
                                    "Questions per retrieval (embedder) call.",
                                    buckets=(1, 2, 4, 8, 16, 32, 64, 128), registry=r)

    def observe_answer(self, answer: Any) -> None:
        t = answer.timings
        for stage in ("intent", "retrieve", "generate"):
            if t.get(f"{stage}_ms") is not None:
                self.stage.labels(stage).observe(t[f"{stage}_ms"] / 1000)
        self.requests.labels(answer.intent).inc()
        self.observe_completion(t["ttft_ms"] / 1000, t["total_ms"] / 1000,
                                answer.usage["prompt_tokens"], answer.usage["completion_tokens"])

    def observe_completion(self, ttft_s: float | None, e2e_s: float, prompt_tokens: int,
                           completion_tokens: int) -> None:
        if ttft_s is not None:
            self.ttft.labels(self.model_name).observe(ttft_s)
        self.e2e.labels(self.model_name).observe(e2e_s)
        self.prompt_tokens.labels(self.model_name).inc(prompt_tokens)
        self.generation_tokens.labels(self.model_name).inc(completion_tokens)

    def observe_request(self, out: RequestOutput) -> None:
        """One finished engine request (AsyncLLMEngine.on_finished, on the loop thread)."""
        m, name = out.metrics, self.model_name
        reason = out.outputs[0].finish_reason or "unknown"
        self.success.labels(name, reason).inc()
        self.request_prompt_tokens.labels(name).observe(len(out.prompt_token_ids))
        n_out = len(out.outputs[0].token_ids)
        self.request_generation_tokens.labels(name).observe(n_out)
        arrival, scheduled = m.get("arrival_time"), m.get("first_scheduled_time")
        first, done = m.get("first_token_time"), m.get("finished_time")
        if arrival is not None and scheduled is not None:
            self.queue_time.labels(name).observe(scheduled - arrival)
        if scheduled is not None and first is not None:
            self.prefill_time.labels(name).observe(first - scheduled)
        if first is not None and done is not None:
            self.decode_time.labels(name).observe(done - first)
            if n_out > 1:
                self.tpot.labels(name).observe((done - first) / (n_out - 1))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MirrorCollector:
    """finrag:mirror_requests_total by outcome: sent, failed (the mirror answered nothing
    usable) and dropped (the queue was full)."""

    def __init__(self, mirror: Any) -> None:
        self.mirror = mirror

    def describe(self) -> list:
        return []

    def collect(self):
        family = CounterMetricFamily("finrag:mirror_requests", "Copies of /ask requests sent "
                                     "to mirror_url, by outcome.", labels=["outcome"])
        for outcome, n in self.mirror.counts.items():
            family.add_metric([outcome], n)
        yield family

