"""Intent routing: finance questions refused, off-topic and small talk routed away.

    python3 benchmarks/intent_eval.py [--choose-margin] [--set SETTING=VALUE ...]

Runs the real intent stage (one scored prefill per question, the server's prompt,
calibration and labels) over every question of TAT-QA dev (all finance questions) and the
50 off-topic and 50 small-talk questions of tests/data/. Prints, for the configured
`intent_margin`, the finance questions refused on each half of dev and on all of it, and
the off-topic / small-talk questions routed away (sent any replying label) and routed to
their own label. `--choose-margin` also sweeps the margin and picks the one that refuses
the fewest of half a's finance questions (the smallest such): the figures on half b are
then held-out. Only finance questions choose it; the two hand-written sets only check it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from reproduce import print_command  # noqa: E402
from tatqa_split import half_of, load_questions  # noqa: E402

from pipeline.rag.routing import RoutingPolicy  # noqa: E402

DATA = ROOT / "tests" / "data"
SETS = {"off_topic": DATA / "intent_off_topic.txt", "small_talk": DATA / "intent_small_talk.txt"}


def read_set(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def score_all(stage, questions: list[str], progress: bool = True) -> list[dict[str, float]]:
    done = 0

    async def one(q: str) -> dict[str, float]:
        nonlocal done
        result = await stage.classify(q)
        done += 1
        if progress and (done % 200 == 0 or done == len(questions)):
            print(f"  {done}/{len(questions)} scored", file=sys.stderr)
        return result.scores

    return await asyncio.gather(*(one(q) for q in questions))


Scored = dict[str, list[tuple[str, str, dict[str, float]]]]  # set -> (half, text, scores)


def refused(policy: RoutingPolicy, rows: list[tuple[str, str, dict]]) -> float:
    return sum(policy.decide(s, t) not in policy.retrieve for _, t, s in rows) / len(rows)


def rates(policy: RoutingPolicy, scored: Scored) -> dict[str, float]:
    """Share refused (finance, by half) / routed away and to their own label (the two sets)."""
    out = {}
    for half in ("a", "b", "all"):
        out[f"refused {half}"] = refused(policy, [r for r in scored["finance"]
                                                  if half in (r[0], "all")])
    for name in SETS:
        rows = scored[name]
        out[f"{name} away"] = refused(policy, rows)
        out[f"{name} own"] = sum(policy.decide(s, t) == name for _, t, s in rows) / len(rows)
    return out


def choose_margin(scored: Scored, base: RoutingPolicy) -> float:
    """The margin refusing the fewest of half a's finance questions (the smallest such)."""
    rows = [r for r in scored["finance"] if r[0] == "a"]
    leads = sorted({abs(base.lead(s)) for _, _, s in rows} | {0.0})
    # Decisions change only where the margin crosses a question's |lead|: try just above each.
    candidates = [0.0] + [round(v + 1e-3, 3) for v in leads]
    return min(candidates, key=lambda m: (refused(RoutingPolicy(base.retrieve, m, base.use_cues),
                                                  rows), m))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--choose-margin", action="store_true",
                    help="sweep intent_margin and choose it on half a")
    ap.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE")
    ap.add_argument("--scores", help="write every question's calibrated label scores (JSON)")
    ap.add_argument("--scores-from", help="read the scores --scores wrote instead of running the "
                    "model (to compare policies)")
    args = ap.parse_args(argv)

    from answer_eval import parse_set

    from llm_engine import AsyncLLMEngine, LLMEngine
    from pipeline.rag import IntentStage
    from pipeline.settings_sources import load_settings

    settings = load_settings(overrides={"engines_dir": str(ROOT / "engines"),
                                        **parse_set(args.set)})
    policy = RoutingPolicy.for_labels(settings.intent_labels, settings.intent_margin,
                                      settings.intent_finance_cues)
    finance = load_questions()
    sets = {name: read_set(path) for name, path in SETS.items()}

    async def go(stage: IntentStage) -> Scored:
        if settings.intent_calibrate:
            await stage.calibrate()
        texts = [q.text for q in finance] + [t for v in sets.values() for t in v]
        scores = await score_all(stage, texts)
        out = {"finance": [(half_of(q.context), q.text, s)
                           for q, s in zip(finance, scores[:len(finance)], strict=True)]}
        at = len(finance)
        for name, v in sets.items():
            out[name] = [("", t, s) for t, s in zip(v, scores[at:at + len(v)], strict=True)]
            at += len(v)
        return out

    t0 = time.perf_counter()
    if args.scores_from:
        saved = json.loads(Path(args.scores_from).read_text(encoding="utf-8"))
        scored = {k: [(r["half"], r["text"], r["scores"]) for r in v] for k, v in saved.items()}
    else:
        engine = AsyncLLMEngine(LLMEngine(settings.engine))
        try:
            scored = asyncio.run(go(IntentStage(
                engine, engine.engine.tokenizer, settings.intent_labels, settings.system_prompt,
                settings.intent_margin, settings.intent_finance_cues)))
        finally:
            engine.shutdown()
    if args.scores:
        dump = {k: [{"half": h, "text": t, "scores": s} for h, t, s in v] for k, v in scored.items()}
        Path(args.scores).write_text(json.dumps(dump, indent=0), encoding="utf-8")
    n = sum(len(v) for v in scored.values())
    print(f"\nintent stage: {n} questions scored in {time.perf_counter() - t0:.0f}s "
          f"({len(scored['finance'])} TAT-QA dev finance, "
          + ", ".join(f"{len(scored[k])} {k}" for k in SETS) + ")")
    header = f"{'margin':>7} " + " ".join(f"{k:>15}" for k in rates(policy, scored))
    print(header)

    def row(margin: float, note: str = "") -> None:
        r = rates(RoutingPolicy(policy.retrieve, margin, policy.use_cues), scored)
        print(f"{margin:>7.3f} " + " ".join(f"{100 * v:>14.1f}%" for v in r.values()) + note)

    row(settings.intent_margin, "  <- configured")
    if args.choose_margin:
        for m in (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0):
            row(m)
        chosen = choose_margin(scored, policy)
        row(chosen, "  <- chosen on half a (fewest refused there)")
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
