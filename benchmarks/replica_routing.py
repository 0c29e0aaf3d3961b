"""Replica routing: finrag's affinity router against Ray Serve's default, side by side.

Starts `finrag serve --num-replicas R` (Ray Serve on a local cluster, demo corpus) once per
router, each from cold caches, and sends both the same RAG workload: the questions of
--reports reports (TAT-QA dev contexts), each asked --repeats times (some with another
case or spacing, as users type them), shuffled, --concurrency at a time, to POST /ask.
Many questions hit the same reports, and the same question comes back: the affinity router
sends it to the replica whose prefix cache already holds its prompt (system prompt,
question and the passages retrieved for it); power of two choices sends it anywhere.

Reports per router: the prefix-cache hit rate over the workload (vllm:prefix_cache_hits /
queries, summed over the replicas' /metrics), p50/p99 latency, the requests each replica
served (X-Finrag-Replica) and the failures; and, from each answer's usage, the share of the
intent prompts (system prompt, question) found cached, how many answers were generated and
the share of their generation prompts (system prompt, question, passages) found cached.
Answers computed from a table or cut from the text run only the intent prompt, which holds
a block or two past the system prompt: where few answers are generated, most hits are the
system prompt's, the same whatever the router.

    python3 benchmarks/replica_routing.py                 # ~8 minutes on 2 busy CPU cores
    python3 benchmarks/replica_routing.py --reports 4 --repeats 3 --concurrency 4
    python3 benchmarks/replica_routing.py --rounds 3      # medians of 3 alternating rounds
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from reproduce import print_command  # noqa: E402
from serving import CORPUS, free_port  # noqa: E402

ROUTERS = ("power_of_two", "affinity")
# The replicas' metrics reach /metrics with Serve's routing stats every 2 s
# (pipeline/replicas/live.py): wait a few periods after the load before reading them.
STATS_SETTLE_S = 6.0


def workload(reports: int, repeats: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    contexts = json.loads(CORPUS.read_text())
    chosen = rng.sample(contexts, reports)
    asked = []
    for ctx in chosen:
        for q in ctx["questions"]:
            variants = [q["question"], q["question"].lower(), "  " + q["question"]]
            asked += [variants[i % len(variants)] for i in range(repeats)]
    rng.shuffle(asked)
    return asked


def start(router: str, port: int, args: argparse.Namespace,
          extra: Sequence[str] = ()) -> subprocess.Popen:
    """`finrag serve` with args.replicas replicas (and `extra` flags), once it is ready."""
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, "-m", "pipeline.cli", "serve", "--num-replicas", str(args.replicas),
           "--replica-router", router, "--port", str(port), "--corpus", str(CORPUS),
           "--kv-cache-memory", str(args.kv_cache_mib << 20), "--shutdown-timeout", "5", *extra]
    log = open(Path(tempfile.gettempdir()) / f"replica_routing-{router}.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"finrag serve exited with {proc.returncode}; see {log.name}")
        if b"replicas ready" in Path(log.name).read_bytes():
            return proc
        time.sleep(1)
    stop(proc)
    raise RuntimeError(f"finrag serve did not start; see {log.name}")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the server (it shuts Ray down), then SIGKILL what is left of its session."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def prefix_counts(base: str) -> tuple[float, float]:
    text = httpx.get(f"{base}/metrics", timeout=60).text
    total = {"hits": 0.0, "queries": 0.0}
    for kind in total:
        for m in re.finditer(rf"^vllm:prefix_cache_{kind}_total\{{[^}}]*\}} (\S+)$", text, re.M):
            total[kind] += float(m.group(1))
    return total["hits"], total["queries"]


async def drive(base: str, asked: list[str], args: argparse.Namespace) -> list[dict]:
    gate = asyncio.Semaphore(args.concurrency)

    async def one(client: httpx.AsyncClient, q: str) -> dict:
        async with gate:
            t0 = time.perf_counter()
            r = await client.post("/ask", json={"question": q, "max_tokens": args.max_tokens})
            s = time.perf_counter() - t0
            usage = r.json().get("usage", {}) if r.status_code == 200 else {}
            return {"status": r.status_code, "s": s, "replica": r.headers.get("x-finrag-replica"),
                    "intent_prompt": usage.get("intent_prompt_tokens", 0),
                    "intent_cached": usage.get("intent_cached_tokens", 0),
                    "gen_prompt": usage.get("generate_prompt_tokens", 0),
                    "gen_cached": usage.get("generate_cached_tokens", 0)}

    async with httpx.AsyncClient(base_url=base, timeout=1800) as client:
        return await asyncio.gather(*(one(client, q) for q in asked))


def run(router: str, asked: list[str], args: argparse.Namespace) -> dict:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start(router, port, args)
    try:
        time.sleep(STATS_SETTLE_S)
        hits0, queries0 = prefix_counts(base)
        results = asyncio.run(drive(base, asked, args))
        time.sleep(STATS_SETTLE_S)
        hits1, queries1 = prefix_counts(base)
    finally:
        stop(proc)
    ok = [r["s"] for r in results if r["status"] == 200]
    gen_prompt = sum(r["gen_prompt"] for r in results)
    intent_prompt = sum(r["intent_prompt"] for r in results)
    return {"hit_rate": (hits1 - hits0) / max(1.0, queries1 - queries0),
            "intent_cached": sum(r["intent_cached"] for r in results) / max(1, intent_prompt),
            "generated": sum(r["gen_prompt"] > 0 for r in results),
            "gen_cached": sum(r["gen_cached"] for r in results) / max(1, gen_prompt),
            "p50": float(np.percentile(ok, 50)), "p99": float(np.percentile(ok, 99)),
            "failed": len(results) - len(ok),
            "per_replica": sorted(collections.Counter(r["replica"] for r in results).values())}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replicas", type=int, default=2)
    p.add_argument("--reports", type=int, default=5, help="TAT-QA contexts the questions are on")
    p.add_argument("--repeats", type=int, default=3, help="times each question is asked")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--kv-cache-mib", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=1,
                   help="runs of both routers, in alternating order, each from cold")
    args = p.parse_args()
    asked = workload(args.reports, args.repeats, args.seed)
    print(f"workload: {len(asked)} /ask requests, {len(set(q.lower().strip() for q in asked))} "
          f"distinct questions on {args.reports} reports, concurrency {args.concurrency}, "
          f"{args.replicas} replicas")
    header = (f"{'round':<7}{'router':<14}{'prefix hit rate':>16}{'p50 s':>8}{'p99 s':>8}"
              f"{'failed':>8}{'intent cached':>15}{'generated':>11}{'gen. cached':>13}"
              "  requests per replica")
    rounds: list[dict[str, dict]] = []
    for k in range(args.rounds):
        # Alternated, so neither router always runs on the later (warmer, or busier) machine.
        order = ROUTERS if k % 2 == 0 else ROUTERS[::-1]
        rounds.append({router: run(router, asked, args) for router in order})
        if k == 0:
            print(header)
        for router in ROUTERS:
            r = rounds[-1][router]
            print(f"{k + 1:<7}{router:<14}{r['hit_rate']:>16.1%}{r['p50']:>8.2f}{r['p99']:>8.2f}"
                  f"{r['failed']:>8}{r['intent_cached']:>15.1%}{r['generated']:>11}"
                  f"{r['gen_cached']:>13.1%}  {r['per_replica']}", flush=True)
    if args.rounds > 1:
        for router in ROUTERS:
            print(f"{'median':<7}{router:<14}{np.median([r[router]['hit_rate'] for r in rounds]):>16.1%}"
                  f"{np.median([r[router]['p50'] for r in rounds]):>8.2f}"
                  f"{np.median([r[router]['p99'] for r in rounds]):>8.2f}")
        better = sum(r["affinity"]["hit_rate"] > r["power_of_two"]["hit_rate"]
                     and r["affinity"]["p50"] < r["power_of_two"]["p50"] for r in rounds)
        print(f"affinity better on both hit rate and p50 in {better} of {args.rounds} rounds")
    print_command(__file__)


if __name__ == "__main__":
    main()
