"""Soak test: streaming clients against `finrag serve` on loopback for minutes on end.

Starts `finrag serve` (as benchmarks/serving.py does), warms it up, then sends requests
with Poisson arrivals at --rate req/s, at most --clients in flight, for --minutes. Most
are streamed `/ask` questions (TAT-QA dev questions about the demo corpus) read to their
final event; a share (--disconnect-share) drop the connection before the first token or
after a few, half by FIN and half by RST, on `/ask` and `/v1/completions`; a share
(--bad-share) send bad input (invalid JSON, unknown or out-of-range fields, an empty or
oversized question, an oversized body), which must get a 4xx.

Reports answers, intended disconnects, 4xx, 503s and unexpected outcomes (any other
status, a stream error event, a missing final event, a connection error), then waits for
the engine to drain and reports leaked KV blocks (from /health) and the server's resident
memory after warm-up against the end. Target: 0 unexpected, 0 leaked blocks, growth < 5%.

Resident memory also grows while torch's oneDNN primitive cache fills (one GEMM primitive
per distinct token count per weight shape, LRU-bounded at 1024 entries, each holding its
own reordered weights; benchmarks/memory_probe.py). A warm-up long enough to fill it (--warmup-s)
separates that from a leak, as does the growth over the run's second half.

    python benchmarks/soak.py                         # 10 minutes at the sustainable rate
    python benchmarks/soak.py --minutes 2 --warmup-s 30   # a short check
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from dropping_client import drop, post, read_until  # noqa: E402
from reproduce import command_line  # noqa: E402
from serving import free_port, questions, start  # noqa: E402

# The highest rate benchmarks/serving.py found sustainable.
SUSTAINABLE_RATE = 1.0
# (path, body or raw text): every one must be refused with a 4xx.
BAD_INPUTS: list[tuple[str, dict | str]] = [
    ("/ask", "{not json"),
    ("/ask", {"question": "What was revenue?", "temprature": 0.2}),
    ("/ask", {"question": ""}),
    ("/ask", {"question": "   \n "}),
    ("/ask", {"question": "x" * 5000}),
    ("/ask", {"question": "What was revenue?", "max_tokens": 0}),
    ("/ask", {"question": ["not", "a", "string"]}),
    ("/ask", json.dumps({"question": "y " * (1 << 20)})),  # a 2 MiB body
    ("/search", {"query": "revenue", "top_k": 1000}),
    ("/v1/completions", {"model": "default", "prompt": "x", "temperature": 5}),
    ("/v1/completions", {"model": "default", "prompt": "x", "max_tokens": 100000}),
    ("/v1/chat/completions", {"model": "default", "messages": []}),
]


def rss_mib(pid: int) -> float:
    """Resident memory of a process (Linux /proc), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class Tally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.unexpected: list[str] = []
        # (monotonic time it ended, seconds it took, completion tokens) per answer
        self.answers: list[tuple[float, float, int]] = []

    def add(self, outcome: str, detail: str = "") -> None:
        self.counts[outcome] += 1
        if outcome == "unexpected" and len(self.unexpected) < 20:
            self.unexpected.append(detail[:300])


async def answer(client: httpx.AsyncClient, q: str, args: argparse.Namespace,
                 tally: Tally) -> None:
    """A streamed /ask read to its final event."""
    body = {"question": q, "max_tokens": args.max_tokens, "stream": True}
    t0 = time.monotonic()
    try:
        async with client.stream("POST", "/ask", json=body) as r:
            if r.status_code != 200:
                text = (await r.aread()).decode(errors="replace")
                tally.add("503" if r.status_code == 503 else "unexpected",
                          f"/ask {r.status_code}: {text}")
                return
            last = None
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    last = json.loads(line[6:])
                    if last["type"] == "error":
                        tally.add("unexpected", f"/ask stream error event: {last['message']}")
                        return
    except httpx.HTTPError as exc:
        tally.add("unexpected", f"/ask {type(exc).__name__}: {exc}")
        return
    if last is None or last["type"] != "final":
        tally.add("unexpected", f"/ask stream ended without a final event (last {last})")
        return
    tally.add("answer")
    t1 = time.monotonic()
    tally.answers.append((t1, t1 - t0, last.get("usage", {}).get("completion_tokens", 0)))


async def disconnect(port: int, q: str, rng: random.Random, args: argparse.Namespace,
                     tally: Tally) -> None:
    """A stream dropped before its first token (after 0-1 s) or after 1-4 events."""
    if rng.random() < 0.5:
        path, body = "/ask", {"question": q, "max_tokens": args.max_tokens, "stream": True}
    else:
        path, body = "/v1/completions", {"model": "default", "prompt": q, "stream": True,
                                         "max_tokens": args.max_tokens}
    try:
        reader, writer = await post(port, path, body, "soak")
    except OSError as exc:
        tally.add("unexpected", f"{path} connect: {exc}")
        return
    early = rng.random() < 0.5
    want = 0 if early else rng.randint(1, 4)
    deadline = time.monotonic() + (rng.uniform(0, 1) if early else 300)
    try:
        raw = await read_until(reader, deadline, None if early else want)
    except OSError as exc:
        tally.add("unexpected", f"{path} disconnect client: {exc}")
        return
    finally:
        drop(writer, rng)
    status = raw.split(b" ", 2)[1] if raw.startswith(b"HTTP/1.1 ") else b""
    if status not in (b"", b"200"):
        tally.add("503" if status == b"503" else "unexpected",
                  f"{path} (dropped) {status.decode()}: {raw[-300:]!r}")
    elif b'"type": "error"' in raw or b'"error": {' in raw:
        tally.add("unexpected", f"{path} (dropped) error event: {raw[-300:]!r}")
    else:
        tally.add("disconnected")


async def bad_input(client: httpx.AsyncClient, rng: random.Random, tally: Tally) -> None:
    path, body = rng.choice(BAD_INPUTS)
    kw = {"content": body, "headers": {"Content-Type": "application/json"}} \
        if isinstance(body, str) else {"json": body}
    try:
        r = await client.post(path, **kw)
    except httpx.HTTPError as exc:
        tally.add("unexpected", f"{path} bad input {type(exc).__name__}: {exc}")
        return
    if r.status_code == 503:
        tally.add("503")
    elif 400 <= r.status_code < 500 and r.text:
        tally.add("4xx")
    else:
        tally.add("unexpected", f"{path} bad input got {r.status_code}: {r.text[:200]}")


async def load(base: str, seconds: float, args: argparse.Namespace, tally: Tally,
               seed: int) -> None:
    """Open-loop Poisson arrivals for `seconds`, at most args.clients in flight."""
    rng = random.Random(seed)
    qs = questions(10_000, seed)
    port = int(base.rsplit(":", 1)[1])
    sem = asyncio.Semaphore(args.clients)
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(base_url=base, timeout=args.timeout, limits=limits) as client:
        async def one(i: int) -> None:
            async with sem:
                kind = rng.random()
                if kind < args.bad_share:
                    await bad_input(client, rng, tally)
                elif kind < args.bad_share + args.disconnect_share:
                    await disconnect(port, qs[i % len(qs)], rng, args, tally)
                else:
                    await answer(client, qs[i % len(qs)], args, tally)

        tasks, i, end = [], 0, time.monotonic() + seconds
        while time.monotonic() < end:
            tasks.append(asyncio.create_task(one(i)))
            i += 1
            await asyncio.sleep(rng.expovariate(args.rate))
        await asyncio.gather(*tasks)


def window_figures(tally: Tally, start: float, end: float) -> dict:
    """Answers that ended in [start, end): their rate, output tokens/s and median latency."""
    got = [(dt, n) for t, dt, n in tally.answers if start <= t < end]
    span = end - start
    return {"answers": len(got), "answers_per_min": len(got) / span * 60,
            "out_tok_per_s": sum(n for _, n in got) / span,
            "median_latency_s": statistics.median(dt for dt, _ in got) if got else None}


def settle(base: str, timeout: float = 60.0) -> dict:
    """The engine's counts once it has drained (or what they are after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        engine = httpx.get(f"{base}/health", timeout=10).json()["engine"]
        idle = engine["running"] == engine["waiting"] == 0 \
            and engine["kv_blocks_free"] == engine["kv_blocks"]
        if idle or time.monotonic() > deadline:
            return engine
        time.sleep(0.5)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--rate", type=float, default=SUSTAINABLE_RATE, help="requests/s offered")
    p.add_argument("--clients", type=int, default=16, help="most requests in flight")
    p.add_argument("--disconnect-share", type=float, default=0.2)
    p.add_argument("--bad-share", type=float, default=0.1)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--warmup-s", type=float, default=60.0,
                   help="load before the memory baseline (not counted)")
    p.add_argument("--timeout", type=float, default=600.0, help="per request, seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write the figures to this file")
    args = p.parse_args()
    if not 0 <= args.bad_share + args.disconnect_share <= 1:
        p.error("--bad-share + --disconnect-share must lie in [0, 1]")
    command = command_line(__file__)
    print("command:", command, flush=True)
    port = free_port()
    proc = start("finrag", port, args)
    base = f"http://127.0.0.1:{port}"
    try:
        print(f"warm-up: {args.warmup_s:.0f} s at {args.rate} req/s", flush=True)
        asyncio.run(load(base, args.warmup_s, args, Tally(), args.seed + 1))
        settle(base)
        rss0 = rss_mib(proc.pid)
        print(f"soak: {args.minutes:g} min, RSS after warm-up {rss0:.1f} MiB", flush=True)
        tally, samples = Tally(), [rss0]

        async def soak() -> None:
            async def sample() -> None:
                while True:
                    await asyncio.sleep(10)
                    samples.append(rss_mib(proc.pid))

            sampler = asyncio.create_task(sample())
            try:
                await load(base, args.minutes * 60, args, tally, args.seed)
            finally:
                sampler.cancel()

        t0 = time.monotonic()
        asyncio.run(soak())
        part = min(120.0, args.minutes * 60 / 2)
        first = window_figures(tally, t0, t0 + part)
        last = window_figures(tally, t0 + args.minutes * 60 - part, t0 + args.minutes * 60)
        elapsed = time.monotonic() - t0
        engine = settle(base)
        rss1 = rss_mib(proc.pid)
        alive = httpx.get(f"{base}/health", timeout=10).status_code
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    c = tally.counts
    sent = sum(c.values())
    leaked = engine["kv_blocks"] - engine["kv_blocks_free"]
    growth = (rss1 - rss0) / rss0 * 100
    ok = c["unexpected"] == 0 and leaked == 0 and engine["running"] == engine["waiting"] == 0 \
        and growth < 5 and alive == 200
    window = args.minutes * 60
    print(f"==== {sent} requests sent in {window:.0f} s ({sent / window:.2f} req/s; offered "
          f"{args.rate}, at most {args.clients} in flight), the last answered after "
          f"{elapsed:.0f} s")
    print(f"  answers {c['answer']}, dropped by their client {c['disconnected']}, "
          f"4xx for bad input {c['4xx']}, 503 {c['503']}, unexpected {c['unexpected']}")
    for line in tally.unexpected:
        print(f"    unexpected: {line}")
    print(f"  engine after drain: running {engine['running']}, waiting {engine['waiting']}, "
          f"KV blocks free {engine['kv_blocks_free']}/{engine['kv_blocks']} "
          f"-> leaked {leaked}; /health {alive}")
    mid = samples[len(samples) // 2]
    print(f"  server RSS: {rss0:.1f} MiB after warm-up, {rss1:.1f} MiB at the end (max "
          f"{max(samples):.1f}) -> growth {growth:+.2f}%; over the second half "
          f"{(rss1 - mid) / mid * 100:+.2f}% (a bounded cache filling up slows down, a leak "
          "does not)")
    for name, f in (("first", first), ("last", last)):
        lat = "-" if f["median_latency_s"] is None else f"{f['median_latency_s']:.2f} s"
        print(f"  throughput, {name} {part:.0f} s: {f['answers']} answers "
              f"({f['answers_per_min']:.1f}/min), {f['out_tok_per_s']:.1f} out tok/s, "
              f"median /ask latency {lat}")
    print(f"  target (0 unexpected, 0 leaked blocks, RSS growth < 5%): "
          f"{'PASS' if ok else 'FAIL'}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "command": command, "seconds": elapsed, "counts": dict(c),
            "unexpected": tally.unexpected, "engine": engine, "rss_mib": samples + [rss1],
            "growth_percent": growth, "throughput_first": first, "throughput_last": last,
            "pass": ok}, indent=2))
    print("reproduce:", command)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
