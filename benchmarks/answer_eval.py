"""End-to-end answer quality on TAT-QA dev with TAT-QA's own metric (EM, numeracy-aware F1).

    python3 benchmarks/answer_eval.py [--limit N] [--half {a,b,all}] [--concurrency C]
        [--scoped] [--with-test-reports] [--json OUT] [--set SETTING=VALUE ...]

The dev set is indexed as the server indexes it (`pipeline.rag.load_retriever` with the
server's settings, corpus = the dev file) into a cache folder under engines/ named after a
hash of the corpus, the indexing settings and the retriever's code, so the index is built
once and rebuilt only when one of those changes. With --with-test-reports the corpus is dev's
278 reports and TAT-QA test's 278 (`benchmarks/data/tatqa_test_contexts.json`, no questions):
the 556-report index issue 30 measured test on. The questions then go through the real
`RAGPipeline` in process (intent -> retrieve -> generate), `--concurrency` at a time so the
engine batches them continuously.

A question is scored on the pipeline's `short_answer` + `scale` when the answer carries them
(non-null), else on its prose `answer` (what a reader gets; the figure before short answers
existed). Printed: EM/F1 overall, by answer type and by answer_from; the share of these
finance questions refused by the intent stage; retrieval hit@k (k = the passages the answer
cites: any chunk of the question's context, and the gold evidence itself: the table for
table answers, a gold paragraph for text answers); latency p50/p90; the command.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from reproduce import print_command  # noqa: E402
from tatqa_metric import score  # noqa: E402
from tatqa_split import (  # noqa: E402
    DEV,
    HALVES,
    TatqaQuestion,
    add_test_reports_option,
    eval_corpus,
    half_of,
    load_questions,
    stratified_sample,
)

from pipeline.rag import AskOptions  # noqa: E402
from retriever_trt.search.filters import MetadataFilter  # noqa: E402

TYPES = ("arithmetic", "span", "multi-span", "count")
SOURCES = ("table", "table-text", "text")


def index_cache(settings: Any, corpus: Path) -> Path:
    """engines/eval-index-<corpus>-<hash>: changes with the corpus, chunking or retriever code."""
    h = hashlib.sha256(corpus.read_bytes())
    h.update(f"{settings.chunk_tokens}|{settings.embedder}".encode())
    for src in sorted((ROOT / "retriever_trt").rglob("*.py")):
        h.update(src.read_bytes())
    return settings.engines_path / f"eval-index-{corpus.stem}-{h.hexdigest()[:10]}"


def prediction(answer: Any) -> tuple[Any, str, str]:
    """(prediction, scale, what it came from): the short answer when given, else the prose."""
    short = getattr(answer, "short_answer", None)
    if short is not None and short != [] and short != "":
        return short, getattr(answer, "scale", None) or "", "short_answer"
    return answer.answer, "", "prose"


def evidence_hit(q: TatqaQuestion, sources: list[dict]) -> bool:
    """A cited chunk is the gold evidence: the context's table, or one of its gold paragraphs."""
    gold_orders = {str(o) for o in q.raw.get("rel_paragraphs", [])}
    for s in sources:
        if s.get("doc_id") != q.context:
            continue
        if q.answer_from != "text" and "/table/" in s["id"]:
            return True
        if q.answer_from != "table" and q.paragraph_order.get(s["id"].split("/")[0]) in gold_orders:
            return True
    return False


def finance_label(pipe: Any) -> set[str]:
    return {lab.name for lab in pipe.settings.intent_labels if lab.reply is None}


async def run_all(pipe: Any, questions: list[TatqaQuestion], concurrency: int,
                  scoped: bool = False) -> list[dict]:
    gate = asyncio.Semaphore(concurrency)
    retrieve_labels = finance_label(pipe)
    done = 0
    t0 = time.perf_counter()

    async def one(q: TatqaQuestion) -> dict:
        nonlocal done
        async with gate:
            start = time.perf_counter()
            # Scoped: the question's own report only, as the published systems are given it.
            opts = AskOptions(filters=MetadataFilter(doc_id=(q.context,))) if scoped else None
            ans = await pipe.ask(q.text, opts)
            ms = (time.perf_counter() - start) * 1000
        pred, scale, came_from = prediction(ans)
        s = score(q.raw, pred, scale)
        done += 1
        if done % 10 == 0 or done == len(questions):
            rate = done / (time.perf_counter() - t0)
            print(f"  {done}/{len(questions)} answered ({rate:.2f} q/s)", file=sys.stderr)
        return {
            "uid": q.uid, "question": q.text, "context": q.context,
            "answer_type": q.answer_type, "answer_from": q.answer_from,
            "gold": q.raw["answer"], "gold_scale": q.raw["scale"],
            "pred": pred, "pred_scale": scale, "scored_from": came_from,
            "em": s.em, "f1": s.f1, "intent": ans.intent,
            "refused": ans.intent not in retrieve_labels,
            "context_hit": any(src.get("doc_id") == q.context for src in ans.sources),
            "evidence_hit": evidence_hit(q, ans.sources), "k": len(ans.sources),
            "source_docs": [src.get("doc_id") for src in ans.sources],
            "latency_ms": round(ms, 1), "answer": ans.answer,
            "derivation": getattr(ans, "derivation", None),
            "finish_reason": ans.finish_reason,
        }

    return await asyncio.gather(*(one(q) for q in questions))


def pct(xs: list[float]) -> str:
    return f"{100 * sum(xs) / len(xs):5.1f}" if xs else "    -"


def report(rows: list[dict], top_k: int) -> list[str]:
    lines = [f"{'':<15} {'n':>5} {'EM':>6} {'F1':>6}"]

    def line(name: str, sel: list[dict]) -> None:
        lines.append(f"{name:<15} {len(sel):>5} {pct([r['em'] for r in sel]):>6} "
                     f"{pct([r['f1'] for r in sel]):>6}")

    line("overall", rows)
    for t in TYPES:
        line(t, [r for r in rows if r["answer_type"] == t])
    for s in SOURCES:
        line(f"from {s}", [r for r in rows if r["answer_from"] == s])
    for h in ("a", "b"):
        line(f"half {h}", [r for r in rows if half_of(r["context"]) == h])
    n = len(rows)
    refused = sum(r["refused"] for r in rows)
    short = sum(r["scored_from"] == "short_answer" for r in rows)
    answered = [r for r in rows if not r["refused"]]
    lat = sorted(r["latency_ms"] for r in rows)
    q = statistics.quantiles(lat, n=10) if len(lat) > 1 else lat * 9
    lines += [
        f"scored from short_answer: {short}/{n}; from the prose: {n - short}/{n}",
        f"finance questions refused (intent not finance): {refused}/{n} = {100 * refused / n:.1f}%",
        f"retrieval hit@{top_k} (of the {len(answered)} not refused): context "
        f"{pct([r['context_hit'] for r in answered]).strip()}%, gold evidence "
        f"{pct([r['evidence_hit'] for r in answered]).strip()}%",
        f"latency per question (ms, in process, queueing included): p50 {statistics.median(lat):.0f}"
        f", p90 {q[8]:.0f}",
    ]
    return lines


def add_set_option(ap: argparse.ArgumentParser) -> None:
    """`--set SETTING=VALUE`, repeatable: the items `parse_set` reads."""
    ap.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE",
                    help="a server setting, as in config.yaml (repeatable)")


def parse_set(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise SystemExit(f"--set {item!r}: give SETTING=VALUE, e.g. --set top_k=5")
        out[key.strip()] = value
    return out


def eval_settings(data: Path, items: list[str]) -> Any:
    """The server's settings over the corpus `data`, its index in the engines/ cache folder
    (`index_cache`), `--set` items applied; a bad setting exits naming it."""
    from pipeline.settings_sources import SettingsError, load_settings

    try:
        overrides = {"corpus": str(data), "engines_dir": str(ROOT / "engines"),
                     **parse_set(items)}
        cache = index_cache(load_settings(overrides=overrides), data)
        return load_settings(overrides={**overrides, "index": str(cache)})
    except SettingsError as exc:
        raise SystemExit(f"--set: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEV), help="TAT-QA json (default: the shared dev set)")
    ap.add_argument("--limit", type=int, help="a stratified sample of N questions (default: all)")
    ap.add_argument("--half", choices=HALVES, default="all", help="fixed half of dev, by context")
    ap.add_argument("--concurrency", type=int, default=16, help="questions in flight at once")
    ap.add_argument("--json", help="write per-question predictions and scores to this file")
    ap.add_argument("--scoped", action="store_true",
                    help="ask each question with filters={doc_id: its report} (its gold context)")
    add_test_reports_option(ap)
    add_set_option(ap)
    args = ap.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        raise SystemExit("--limit: give a positive number of questions")
    if args.concurrency < 1:
        raise SystemExit("--concurrency: give at least 1")

    from pipeline.rag import RAGPipeline

    data = Path(args.data)
    questions = stratified_sample(load_questions(data, args.half), args.limit)
    corpus = eval_corpus(data, args.with_test_reports)
    settings = eval_settings(corpus, args.set)

    t0 = time.perf_counter()
    pipe = RAGPipeline.from_settings(settings)
    print(f"pipeline loaded in {time.perf_counter() - t0:.1f}s (index {settings.index})",
          file=sys.stderr)

    async def go() -> tuple[list[dict], float]:
        await pipe.warmup()
        start = time.perf_counter()
        rows = await run_all(pipe, questions, args.concurrency, args.scoped)
        return rows, time.perf_counter() - start

    try:
        rows, wall = asyncio.run(go())
    finally:
        pipe.shutdown()

    print(f"\nTAT-QA {data.name}, half {args.half}{', scoped to each gold report' if args.scoped else ''}"
          f"{', with test reports indexed' if args.with_test_reports else ''}: "
          f"{len(rows)} questions"
          f"{' (stratified sample)' if args.limit else ''}, concurrency {args.concurrency}, "
          f"top_k {settings.top_k}, retrieval {settings.retrieval_mode}, max_tokens "
          f"{settings.max_tokens}; {wall:.0f}s ({len(rows) / wall:.2f} q/s)")
    print("\n".join(report(rows, settings.top_k)))
    if args.json:
        out = Path(args.json)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
        tmp.replace(out)
        print(f"per-question predictions: {out}")
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
