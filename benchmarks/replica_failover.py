"""Replica failover: SIGKILL one of two replicas under load; what is lost, and how soon the
service answers again.

Starts `finrag serve --num-replicas 2` (Ray Serve on a local cluster, demo corpus), keeps
--clients clients sending completions that hold a replica for --max-tokens decode steps
(every other one streamed), kills one replica's process after --before seconds, and keeps
the load on for --after seconds more. Then reports:
- the requests answered, refused or failed before and after the kill, by kind: a
  non-streamed request has sent nothing before its answer, so it must never fail (the
  ingress retries it on the other replica); a stream cut mid-answer ends with an error
  event, which the issue allows;
- from the kill: the first answer to a request sent after it, the longest time with no
  answer at all, and when a replacement replica first answered (X-Finrag-Replica names a
  replica that was not there before).

    python3 benchmarks/replica_failover.py                 # ~3 minutes on 2 busy CPU cores
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import signal
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replica_routing import start, stop  # noqa: E402
from reproduce import print_command  # noqa: E402
from serving import free_port  # noqa: E402

REPLICA_PROC = "ServeReplica:finrag:FinragReplica"


def replica_pids(session: int) -> list[int]:
    """The replica processes of the server whose session is `session`."""
    pids = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if os.getsid(p.pid) == session and any(REPLICA_PROC in part
                                                   for part in p.info["cmdline"] or []):
                pids.append(p.pid)
        except (ProcessLookupError, PermissionError):
            continue
    return pids


async def one(client: httpx.AsyncClient, i: int, max_tokens: int) -> dict:
    """Request i (streamed when odd): when it was sent and done, and how it ended."""
    body = {"model": "default", "prompt": f"Annual report {i}: the revenue of the segment",
            "max_tokens": max_tokens, "ignore_eos": True, "stream": i % 2 == 1}
    t0 = time.monotonic()
    outcome, replica = "answered", None
    try:
        if body["stream"]:
            async with client.stream("POST", "/v1/completions", json=body) as r:
                replica = r.headers.get("x-finrag-replica")
                if r.status_code != 200:
                    outcome = f"HTTP {r.status_code}"
                else:
                    async for line in r.aiter_lines():
                        if line.startswith("data: {") and "error" in json.loads(line[6:]):
                            outcome = "cut mid-stream"
        else:
            r = await client.post("/v1/completions", json=body)
            replica = r.headers.get("x-finrag-replica")
            if r.status_code != 200:
                outcome = f"HTTP {r.status_code}"
    except httpx.HTTPError as exc:
        outcome = f"transport: {type(exc).__name__}"
    return {"i": i, "stream": body["stream"], "t0": t0, "t1": time.monotonic(),
            "outcome": outcome, "replica": replica}


def closed_loop(client: httpx.AsyncClient, clients: int, seconds: float, max_tokens: int,
                results: list[dict]) -> list[asyncio.Task]:
    """`clients` tasks, each sending requests one after another (into `results`) until
    `seconds` from now."""
    counter = iter(range(10**9))
    t_end = time.monotonic() + seconds

    async def client_loop() -> None:
        while time.monotonic() < t_end:
            results.append(await one(client, next(counter), max_tokens))

    return [asyncio.create_task(client_loop()) for _ in range(clients)]


async def load(base: str, args: argparse.Namespace, session: int) -> tuple[list[dict], float,
                                                                           set[str]]:
    results: list[dict] = []
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        loops = closed_loop(client, args.clients, args.before + args.after, args.max_tokens,
                            results)
        await asyncio.sleep(args.before)
        before = {r["replica"] for r in results if r["outcome"] == "answered"}
        victims = replica_pids(session)
        if len(victims) != 2:
            raise RuntimeError(f"expected 2 replica processes, found {victims}")
        t_kill = time.monotonic()
        os.kill(victims[0], signal.SIGKILL)
        await asyncio.gather(*loops)
    return results, t_kill, before


def outcomes(rows: list[dict]) -> str:
    """How `rows` ended, counted: "3 answered, 1 cut mid-stream" ("none" for no rows)."""
    counts = collections.Counter(r["outcome"] for r in rows)
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"


def report(results: list[dict], t_kill: float, before: set[str]) -> None:
    phases = {"done before the kill": [r for r in results if r["t1"] < t_kill],
              "in flight at the kill": [r for r in results if r["t0"] <= t_kill <= r["t1"]],
              "sent after the kill": [r for r in results if r["t0"] > t_kill]}
    for phase, rows in phases.items():
        plain = [r for r in rows if not r["stream"]]
        streamed = [r for r in rows if r["stream"]]
        print(f"{phase:<24} non-streamed: {outcomes(plain)}; streamed: {outcomes(streamed)}")
    answered_after = sorted(r["t1"] for r in results if r["outcome"] == "answered"
                            and r["t1"] > t_kill)
    new_after = [r["t1"] for r in phases["sent after the kill"] if r["outcome"] == "answered"]
    gaps = np.diff([t_kill, *answered_after]) if answered_after else np.array([np.inf])
    replaced = [r["t1"] for r in results if r["outcome"] == "answered" and r["replica"]
                and r["replica"] not in before]
    lat_before = [r["t1"] - r["t0"] for r in phases["done before the kill"]
                  if r["outcome"] == "answered"]
    lat_after = [r["t1"] - r["t0"] for r in phases["sent after the kill"]
                 if r["outcome"] == "answered"]
    print(f"first answer to a request sent after the kill: "
          f"{min(new_after) - t_kill:.2f} s" if new_after else "no request sent after the "
          "kill was answered")
    print(f"longest time without any answer, from the kill: {gaps.max():.2f} s")
    print(f"a replacement replica first answered {min(replaced) - t_kill:.1f} s after the kill"
          if replaced else "no replacement replica answered within the run")
    if lat_before and lat_after:
        print(f"latency p50: {np.median(lat_before):.2f} s before, "
              f"{np.median(lat_after):.2f} s after the kill")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--before", type=float, default=20.0, help="seconds of load before the kill")
    p.add_argument("--after", type=float, default=60.0, help="seconds of load after the kill")
    p.add_argument("--kv-cache-mib", type=int, default=256)
    args = p.parse_args()
    args.replicas = 2  # what replica_routing.start reads
    port = free_port()
    proc = start("affinity", port, args)
    try:
        results, t_kill, before = asyncio.run(load(f"http://127.0.0.1:{port}", args, proc.pid))
    finally:
        stop(proc)
    print(f"2 replicas, {args.clients} clients, {args.max_tokens}-token completions (every "
          f"other one streamed); one replica SIGKILLed after {args.before:.0f} s; "
          f"{len(results)} requests")
    report(results, t_kill, before)
    print_command(__file__)


if __name__ == "__main__":
    main()
