"""Overload: finrag driven past its capacity, with admission control and without.

Starts `finrag serve` (demo corpus) twice: with admission bounds (`max_queued_requests`
= --max-queued) and unbounded (1,000,000), and sends both the same open-loop load to
POST /ask: Poisson arrivals at --rate req/s for --duration s, above what the machine
serves. Reports side by side the share refused with 503, how fast the refusals came back,
and the latency of the admitted requests (p50, p99, max) with the throughput. Without
admission every request is admitted and waits its turn, so latency grows with the queue;
with it, the excess is refused at once and the admitted keep a bounded latency.

    python3 benchmarks/overload.py                      # ~3 minutes on 2 idle CPU cores
    python3 benchmarks/overload.py --rate 3 --duration 20 --max-queued 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from reproduce import print_command  # noqa: E402
from serving import free_port, questions, start  # noqa: E402

UNBOUNDED = 1_000_000


async def one(client: httpx.AsyncClient, q: str, args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    try:
        r = await client.post("/ask", json={"question": q, "max_tokens": args.max_tokens,
                                            "top_k": args.top_k})
    except httpx.HTTPError as exc:
        return {"status": None, "s": time.perf_counter() - t0, "error": repr(exc)}
    return {"status": r.status_code, "s": time.perf_counter() - t0,
            "retry_after": r.headers.get("retry-after")}


async def drive(base: str, qs: list[str], args: argparse.Namespace) -> tuple[list[dict], float]:
    rng = np.random.default_rng(args.seed)
    async with httpx.AsyncClient(base_url=base, timeout=1800) as client:
        t0 = time.perf_counter()
        tasks = []
        for q in qs:
            tasks.append(asyncio.create_task(one(client, q, args)))
            await asyncio.sleep(rng.exponential(1.0 / args.rate))
        results = await asyncio.gather(*tasks)
        return results, time.perf_counter() - t0


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def summary(name: str, results: list[dict], wall: float) -> dict:
    ok = [r["s"] for r in results if r["status"] == 200]
    refused = [r for r in results if r["status"] == 503]
    other = [r for r in results if r["status"] not in (200, 503)]
    row = {"name": name, "sent": len(results), "ok": len(ok), "refused": len(refused),
           "other": len(other), "refused_share": len(refused) / len(results),
           "p50_s": pct(ok, 50), "p99_s": pct(ok, 99), "max_s": max(ok, default=float("nan")),
           "refusal_p99_s": pct([r["s"] for r in refused], 99),
           "retry_after": sorted({r["retry_after"] for r in refused}),
           "throughput": len(ok) / wall}
    print(f"---- {name}: sent {row['sent']}, 200: {row['ok']}, 503: {row['refused']} "
          f"({row['refused_share']:.0%}), other: {row['other']}; admitted latency p50 "
          f"{row['p50_s']:.2f} s, p99 {row['p99_s']:.2f} s, max {row['max_s']:.2f} s; 503 "
          f"p99 {row['refusal_p99_s']:.3f} s, Retry-After {row['retry_after']}; "
          f"throughput {row['throughput']:.2f} req/s", flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", type=float, default=1.5, help="offered load, req/s (Poisson)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds of arrivals")
    p.add_argument("--max-queued", type=int, default=8,
                   help="max_queued_requests of the bounded server")
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print_command(__file__)
    qs = questions(int(args.rate * args.duration), args.seed)
    rows = []
    for name, bound in ((f"admission (max_queued_requests={args.max_queued})", args.max_queued),
                        ("no admission bound", UNBOUNDED)):
        os.environ["FINRAG_MAX_QUEUED_REQUESTS"] = str(bound)
        os.environ["FINRAG_MAX_QUEUED_TOKENS"] = str(UNBOUNDED * 1000)
        port = free_port()
        proc = start("finrag", port, args)
        try:
            results, wall = asyncio.run(drive(f"http://127.0.0.1:{port}", qs, args))
            rows.append(summary(name, results, wall))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    bounded, unbounded = rows
    print(f"==== admitted p99 with admission / without: {bounded['p99_s']:.2f} s / "
          f"{unbounded['p99_s']:.2f} s = x{unbounded['p99_s'] / bounded['p99_s']:.1f} lower; "
          f"{bounded['refused_share']:.0%} refused at once (503 p99 "
          f"{bounded['refusal_p99_s']:.3f} s)")
    print_command(__file__)


if __name__ == "__main__":
    main()
