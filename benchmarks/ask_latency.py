"""`/ask` latency for one client: this checkout against an earlier one, side by side.

Starts `finrag serve` from this checkout and from --before (another checkout, e.g. a git
worktree of an earlier commit), each with its own defaults and the demo corpus, then asks
the same TAT-QA dev questions one at a time (a single client, nothing else in flight),
each question to both servers in turn, the first server alternating from question to
question so that a change of machine load falls on both alike. Requests are what a client
sends by default: `{"question": ...}`, not streamed, the server's own max_tokens and top_k.
Prints each server's median and p90 end-to-end latency and the ratio of the medians, and
how many answers ran the LLM at all (completion tokens > 0) with their generate stage.

    git worktree add ../before 9e89338
    python benchmarks/ask_latency.py --before ../before --questions 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from reproduce import command_line  # noqa: E402
from serving import ROOT, free_port, questions, start  # noqa: E402


def ask(base: str, question: str) -> tuple[float, float, int]:
    """(seconds, the server's generate-stage seconds, completion tokens) of one /ask."""
    t0 = time.perf_counter()
    r = httpx.post(f"{base}/ask", json={"question": question}, timeout=600)
    if r.status_code != 200:
        raise SystemExit(f"{base}/ask answered {r.status_code}: {r.text[:300]}")
    body = r.json()
    return (time.perf_counter() - t0, (body["timings"].get("generate_ms") or 0) / 1000,
            body["usage"]["completion_tokens"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", required=True, type=Path, help="the earlier checkout's folder")
    p.add_argument("--questions", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3, help="questions first asked, not counted")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if not (args.before / "pipeline" / "cli.py").is_file():
        p.error(f"--before {args.before}: no finrag checkout there (pipeline/cli.py missing)")
    command = command_line(__file__)
    print("command:", command, flush=True)
    roots = {"before": args.before.resolve(), "now": ROOT}
    procs, bases = {}, {}
    try:
        for name, root in roots.items():
            port = free_port()
            procs[name] = start("finrag", port, args, root)
            bases[name] = f"http://127.0.0.1:{port}"
            print(f"{name}: {root} on port {port}", flush=True)
        qs = questions(args.warmup + args.questions, args.seed)
        for q in qs[: args.warmup]:
            for base in bases.values():
                ask(base, q)
        got: dict[str, list[tuple[float, float, int]]] = {name: [] for name in bases}
        for i, q in enumerate(qs[args.warmup :]):
            order = list(bases) if i % 2 == 0 else list(reversed(bases))
            for name in order:
                got[name].append(ask(bases[name], q))
            print(f"  {i + 1}/{args.questions}: " + ", ".join(
                f"{n} {got[n][-1][0] * 1000:.0f} ms (generate {got[n][-1][1] * 1000:.0f} ms, "
                f"{got[n][-1][2]} tokens)" for n in bases), flush=True)
    finally:
        for proc in procs.values():
            proc.terminate()
            proc.wait(timeout=60)
    med = {n: statistics.median(r[0] for r in rows) for n, rows in got.items()}
    for name, rows in got.items():
        xs = [r[0] for r in rows]
        p90 = statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]
        gen = [r[1] for r in rows if r[2] > 0]
        print(f"{name:6s} /ask, one client, {len(xs)} questions: median {med[name] * 1000:.0f} ms, "
              f"p90 {p90 * 1000:.0f} ms; {len(gen)} ran the LLM (median generate stage "
              f"{statistics.median(gen) * 1000 if gen else 0:.0f} ms, "
              f"{statistics.median(r[2] for r in rows if r[2] > 0) if gen else 0} tokens)")
    print(f"median now / before: {med['now'] / med['before']:.2f} "
          f"({med['before'] / med['now']:.2f}x faster)")
    print("reproduce:", command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
