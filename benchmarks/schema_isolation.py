"""One request's grammar cannot hurt the others: latency and memory under hostile schemas.

Starts `finrag serve` (demo corpus) and measures, over HTTP:
1. a 2-token /v1/completions alone (the baseline latency);
2. the same completion sent while a chat request with a slow-to-compile schema
   (`{"type": "string", "pattern": "[\\u0000-\\uffff]{1,N}"}`) is in flight, and what the
   slow request got (its status and time);
3. the server's resident memory (VmRSS) before and after --schemas chat requests, each
   with a different --enum-size-entry `enum` schema.
Grammars compile off the engine thread within a time bound, and the compiled-grammar
cache is bounded (llm_engine/grammar_service.py), so (2) stays near (1) and (3) levels off.

    python3 benchmarks/schema_isolation.py               # ~2 minutes once engines/ is built
    python3 benchmarks/schema_isolation.py --schemas 150 --enum-size 2000 --repeat 12000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from reproduce import print_command  # noqa: E402
from serving import free_port, start  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def completion(base: str) -> float:
    t0 = time.perf_counter()
    r = httpx.post(f"{base}/v1/completions", json={"prompt": "Revenue in 2019 was",
                                                   "max_tokens": 2}, timeout=600)
    r.raise_for_status()
    return time.perf_counter() - t0


def slow_schema_in_flight(base: str, repeat: int) -> tuple[float, int, float]:
    """(the completion's latency, the slow request's status and seconds)."""
    slow: dict = {}

    def send() -> None:
        t0 = time.perf_counter()
        r = httpx.post(f"{base}/v1/chat/completions", timeout=600, json={
            "messages": [{"role": "user", "content": "Say anything."}], "max_tokens": 4,
            "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": {
                "type": "string", "pattern": "[\\u0000-\\uffff]{1," + f"{repeat}}}"}}}})
        slow.update(status=r.status_code, s=time.perf_counter() - t0)

    thread = threading.Thread(target=send)
    thread.start()
    time.sleep(1.0)  # the slow schema is compiling by now
    latency = completion(base)
    thread.join()
    return latency, slow["status"], slow["s"]


def enum_schemas(base: str, n: int, size: int) -> list[int]:
    statuses = []
    for i in range(n):
        schema = {"enum": [f"value {i} {j}" for j in range(size)]}
        r = httpx.post(f"{base}/v1/chat/completions", timeout=600, json={
            "messages": [{"role": "user", "content": "Pick one."}], "max_tokens": 1,
            "structured_outputs": {"json": schema}})
        statuses.append(r.status_code)
    return statuses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=12000, help="the slow pattern's repetition")
    ap.add_argument("--schemas", type=int, default=150)
    ap.add_argument("--enum-size", type=int, default=2000)
    args = ap.parse_args()
    port = free_port()
    proc = start("finrag", port, args)
    base = f"http://127.0.0.1:{port}"
    try:
        alone = statistics.median(completion(base) for _ in range(5))
        during, slow_status, slow_s = slow_schema_in_flight(base, args.repeat)
        enum_schemas(base, 3, args.enum_size)  # the compiler and its tables made
        before = rss_mib(proc.pid)
        statuses = enum_schemas(base, args.schemas, args.enum_size)
        after = rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    print_command(__file__)
    print(f"2-token completion alone (median of 5): {alone:.2f} s")
    print(f"the same with a {{1,{args.repeat}}} pattern schema in flight: {during:.2f} s "
          f"(the slow request: HTTP {slow_status} after {slow_s:.1f} s)")
    print(f"RSS over {args.schemas} distinct {args.enum_size}-entry enum schemas: "
          f"{before:.0f} -> {after:.0f} MiB ({after - before:+.0f} MiB); statuses "
          f"{sorted(set(statuses))}")


if __name__ == "__main__":
    main()
