"""Replica autoscaling: one replica under more load than its target; when Ray Serve adds the
second, and what the load saw meanwhile.

Starts `finrag serve --num-replicas 1 --max-replicas 2 --target-ongoing-requests T` (Serve's
autoscaling on queue depth, local cluster, demo corpus) and keeps --clients clients sending
completions, as replica_failover.py does, for --seconds. Reports when a second replica first
answered (X-Finrag-Replica), the requests answered, refused or failed before and after
that, the requests each replica served, and p50 latency before and after.

    python3 benchmarks/replica_autoscale.py             # ~4 minutes on 2 busy CPU cores
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sys
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replica_failover import closed_loop, outcomes  # noqa: E402
from replica_routing import start, stop  # noqa: E402
from reproduce import print_command  # noqa: E402
from serving import free_port  # noqa: E402


async def load(base: str, args: argparse.Namespace) -> tuple[list[dict], float]:
    results: list[dict] = []
    t_start = time.monotonic()
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        await asyncio.gather(*closed_loop(client, args.clients, args.seconds, args.max_tokens,
                                          results))
    return results, t_start


def report(results: list[dict], t_start: float) -> None:
    first = results[0]["replica"] if results else None
    joined = [r["t1"] for r in results if r["replica"] not in (first, None, "none")]
    t_join = min(joined) if joined else float("inf")
    print(f"a second replica first answered {t_join - t_start:.1f} s after the load began"
          if joined else "no second replica answered within the run")
    for phase, rows in (("done before", [r for r in results if r["t1"] < t_join]),
                        ("in flight at", [r for r in results if r["t0"] <= t_join <= r["t1"]]),
                        ("sent after", [r for r in results if r["t0"] > t_join])):
        ok = [r["t1"] - r["t0"] for r in rows if r["outcome"] == "answered"]
        p50 = f"p50 {np.median(ok):.2f} s" if ok else "no answers"
        print(f"{phase} it: {outcomes(rows)}; {p50}")
    served = collections.Counter(r["replica"] for r in results if r["outcome"] == "answered")
    print(f"answers per replica: {sorted(served.values(), reverse=True)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--target-ongoing-requests", type=float, default=2.0)
    p.add_argument("--seconds", type=float, default=150.0, help="seconds of load")
    p.add_argument("--kv-cache-mib", type=int, default=256)
    args = p.parse_args()
    args.replicas = 1  # what replica_routing.start reads: the minimum
    port = free_port()
    proc = start("affinity", port, args, ["--max-replicas", "2", "--target-ongoing-requests",
                                          str(args.target_ongoing_requests)])
    try:
        results, t_start = asyncio.run(load(f"http://127.0.0.1:{port}", args))
    finally:
        stop(proc)
    print(f"1 to 2 replicas, target {args.target_ongoing_requests:g} ongoing requests a "
          f"replica; {args.clients} clients, {args.max_tokens}-token completions (every other "
          f"one streamed) for {args.seconds:.0f} s; {len(results)} requests")
    report(results, t_start)
    print_command(__file__)


if __name__ == "__main__":
    main()
