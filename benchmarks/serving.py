"""Serving benchmark in the manner of vLLM's benchmark_serving: finrag vs a naive baseline.

Starts each server in turn (finrag's `finrag serve`, then benchmarks/baseline_server.py;
same models, same corpus), sends TAT-QA dev questions to POST /ask with Poisson arrivals
at each --rates value (or at most --max-concurrency in flight), and reports completed
requests, request throughput, TTFT, TPOT, ITL and end-to-end latency (mean, p50, p99) and
the per-stage times the server reports. A rate is *sustainable* when the achieved request
throughput is at least 85% of the offered rate (the queue does not grow without bound);
each server's sustainable rate is the highest such rate tried.

    python3 benchmarks/serving.py                       # default: ~8 minutes on 2 CPU cores
    python3 benchmarks/serving.py --rates 0.2 --num-prompts 4 --servers finrag,baseline
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
from reproduce import print_command

ROOT = Path(__file__).absolute().parents[1]
CORPUS = ROOT / "pipeline" / "data" / "demo_corpus.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def questions(n: int, seed: int) -> list[str]:
    """TAT-QA dev questions about the demo corpus (the first 60 dev contexts)."""
    corpus = json.loads(CORPUS.read_text())
    qs = [q["question"] for ctx in corpus for q in ctx["questions"]]
    random.Random(seed).shuffle(qs)
    return qs[:n]


def start(kind: str, port: int, args: argparse.Namespace, root: Path = ROOT) -> subprocess.Popen:
    """`finrag serve` (of the checkout at `root`) or the baseline, ready to answer."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    if kind == "finrag":
        cmd = [sys.executable, "-m", "pipeline.cli", "serve", "--port", str(port),
               "--corpus", str(CORPUS)]
    else:
        cmd = [sys.executable, str(ROOT / "benchmarks" / "baseline_server.py"), "--port",
               str(port), "--corpus", str(CORPUS)]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} server exited with {proc.returncode}: {cmd}")
        try:
            # The baseline, and finrag before /ready existed, answer /health once ready.
            probe = "/ready" if kind == "finrag" else "/health"
            status = httpx.get(f"http://127.0.0.1:{port}{probe}", timeout=2).status_code
            if status == 404:
                status = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code
            if status == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(1)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


async def one(client: httpx.AsyncClient, q: str, args: argparse.Namespace,
              stream: bool) -> dict:
    body = {"question": q, "max_tokens": args.max_tokens, "top_k": args.top_k}
    t0 = time.perf_counter()
    times: list[float] = []
    final = None
    try:
        if stream:
            async with client.stream("POST", "/ask", json={**body, "stream": True}) as r:
                async for line in r.aiter_lines():
                    if not line.startswith("data: "):
                        continue
                    ev = json.loads(line[6:])
                    if ev["type"] == "token":
                        times.append(time.perf_counter())
                    else:
                        final = ev
        else:
            r = await client.post("/ask", json=body)
            final = r.json()
            times.append(time.perf_counter())
    except httpx.HTTPError as exc:
        return {"ok": False, "error": repr(exc)}
    end = time.perf_counter()
    if final is None or not times:
        return {"ok": False}
    n_out = max(final["usage"]["completion_tokens"], 1)
    return {"ok": True, "ttft": times[0] - t0, "e2e": end - t0, "n_out": n_out,
            "itl": list(np.diff(times)), "tpot": (end - times[0]) / (n_out - 1)
            if n_out > 1 else 0.0, "timings": final["timings"]}


async def run_rate(base: str, qs: list[str], rate: float, args: argparse.Namespace,
                   stream: bool) -> dict:
    rng = np.random.default_rng(args.seed)
    sem = asyncio.Semaphore(args.max_concurrency or len(qs))
    async with httpx.AsyncClient(base_url=base, timeout=1800) as client:
        async def limited(q):
            async with sem:
                return await one(client, q, args, stream)

        t0 = time.perf_counter()
        tasks = []
        for q in qs:
            tasks.append(asyncio.create_task(limited(q)))
            if rate != float("inf"):
                await asyncio.sleep(rng.exponential(1.0 / rate))
        results = await asyncio.gather(*tasks)
        duration = time.perf_counter() - t0
    ok = [r for r in results if r["ok"]]

    def stats(xs: list[float]) -> dict:
        xs = [x * 1000 for x in xs] or [float("nan")]
        return {"mean": float(np.mean(xs)), "p50": float(np.percentile(xs, 50)),
                "p99": float(np.percentile(xs, 99))}

    stages = {s: stats([r["timings"][f"{s}_ms"] / 1000 for r in ok
                        if r["timings"].get(f"{s}_ms") is not None])
              for s in ("intent", "retrieve", "generate")}
    return {"rate": rate, "completed": len(ok), "failed": len(results) - len(ok),
            "duration_s": duration, "throughput": len(ok) / duration,
            "ttft_ms": stats([r["ttft"] for r in ok]), "tpot_ms": stats([r["tpot"] for r in ok]),
            "itl_ms": stats([x for r in ok for x in r["itl"]]),
            "e2e_ms": stats([r["e2e"] for r in ok]), "stage_ms": stages,
            "sustainable": len(ok) == len(results)
            and len(ok) / duration >= 0.85 * min(rate, 1e9)}


def report(name: str, res: dict) -> None:
    print(f"---- {name} @ {res['rate']} req/s: completed {res['completed']} "
          f"(failed {res['failed']}) in {res['duration_s']:.1f} s, "
          f"throughput {res['throughput']:.3f} req/s, sustainable={res['sustainable']}")
    for key in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        s = res[key]
        print(f"  {key:8s} mean {s['mean']:9.1f}  p50 {s['p50']:9.1f}  p99 {s['p99']:9.1f}")
    for stage, s in res["stage_ms"].items():
        print(f"  stage {stage:8s} mean {s['mean']:9.1f}  p50 {s['p50']:9.1f}  "
              f"p99 {s['p99']:9.1f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rates", default="0.1,0.2,0.4", help="Poisson rates, req/s; inf = burst")
    p.add_argument("--num-prompts", type=int, default=6, help="requests per rate")
    p.add_argument("--max-concurrency", type=int, default=None)
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--servers", default="finrag,baseline")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write all results to this file")
    args = p.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    qs = questions(args.num_prompts, args.seed)
    print_command(__file__)
    all_results: dict[str, list[dict]] = {}
    for kind in args.servers.split(","):
        port = free_port()
        proc = start(kind, port, args)
        try:
            base = f"http://127.0.0.1:{port}"
            all_results[kind] = []
            for rate in rates:
                res = run_rate(base, qs, rate, args, stream=kind == "finrag")
                res = asyncio.run(res)
                report(kind, res)
                all_results[kind].append(res)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print("==== sustainable rate (throughput >= 85% of offered) and side-by-side ratios")
    for kind, results in all_results.items():
        ok = [r["rate"] for r in results if r["sustainable"]]
        print(f"  {kind}: {max(ok) if ok else '< ' + str(min(rates))} req/s")
    if {"finrag", "baseline"} <= set(all_results):
        for f, b in zip(all_results["finrag"], all_results["baseline"], strict=True):
            print(f"  @ {f['rate']} req/s: throughput x{f['throughput'] / b['throughput']:.2f}, "
                  f"TTFT p50 x{b['ttft_ms']['p50'] / f['ttft_ms']['p50']:.2f} faster, "
                  f"e2e p50 x{b['e2e_ms']['p50'] / f['e2e_ms']['p50']:.2f} faster")
    if args.json:
        Path(args.json).write_text(json.dumps(all_results, indent=2))
    print_command(__file__)


if __name__ == "__main__":
    main()
