"""Prose answers with the gold context: the generation prompt and stop rules, measured alone.

    python3 benchmarks/prose_eval.py [--half {a,b,all}] [--limit N] [--max-tokens T]
        [--concurrency C] [--set SETTING=VALUE ...] [--json OUT]

Each TAT-QA dev question of a fixed stratified sample (benchmarks/tatqa_split.py: `--half`
a or b, split by context) is answered by the real engine (greedy) through the RAG core's
GenerateStage, from its own context given as the passages: the table as the index renders
it (retriever_trt.indexing.chunking.render_table), then the paragraphs in order. Retrieval and intent
are left out so that only the layout and the stop rules change the figures.

Printed: TAT-QA F1 of the prose on span and multi-span questions (the official metric,
benchmarks/tatqa_metric.py; on arithmetic and count questions its F1 is exact match, which
prose cannot reach), the share of answers that hit max_tokens, that start by copying a
passage (a "[n]" marker, a table row with its " | " separators, or a passage's first
eight words), that repeat a word 3-gram, and the mean answer length in tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from reproduce import print_command  # noqa: E402
from tatqa_metric import score  # noqa: E402
from tatqa_split import DEV, HALVES, TatqaQuestion, stratified_sample  # noqa: E402

SPAN_TYPES = ("span", "multi-span")
_MARKER = re.compile(r"\s*(\[\d+\]|passages?\s*\d*:)", re.IGNORECASE)


def gold_passages(ctx: dict) -> list[str]:
    from retriever_trt.indexing.chunking import render_table

    head, body = render_table(ctx["table"]["table"])
    paragraphs = sorted(ctx["paragraphs"], key=lambda p: int(p.get("order", 0)))
    return ["\n".join(filter(None, [head, *body]))] + [p["text"] for p in paragraphs]


def copies_a_passage(answer: str, passages: list[str]) -> bool:
    """Starts with a marker, a table row, or a passage's first eight words."""
    first = answer.strip().split("\n", 1)[0]
    if _MARKER.match(first) or " | " in first:
        return True
    words = " ".join(first.split()[:8]).lower()
    return len(words.split()) >= 8 and any(words in " ".join(p.split()).lower() for p in passages)


def repeats(answer: str, n: int = 3) -> bool:
    words = answer.lower().split()
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return len(grams) != len(set(grams))


def load(half: str, limit: int | None) -> list[tuple[TatqaQuestion, list[str]]]:
    from tatqa_split import load_questions

    contexts = {c["table"]["uid"]: c for c in json.loads(DEV.read_text(encoding="utf-8"))}
    chosen = stratified_sample(load_questions(DEV, half), limit)
    return [(q, gold_passages(contexts[q.context])) for q in chosen]


async def answer_all(items: list[tuple[TatqaQuestion, list[str]]], settings: Any,
                     max_tokens: int, concurrency: int) -> list[dict[str, Any]]:
    from llm_engine import AsyncLLMEngine, LLMEngine
    from pipeline.rag.prompts import system_text
    from pipeline.rag.stages import GenerateStage

    engine = AsyncLLMEngine(LLMEngine(settings.engine))
    tok = engine.engine.tokenizer
    stage = GenerateStage(engine, tok, system_text(settings.system_prompt, settings.intent_labels),
                          settings.answer_instruction, settings.max_passage_chars,
                          engine.engine.max_model_len, settings.answer_stop, settings.repeat_ngram)
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(q: TatqaQuestion, passages: list[str]) -> dict[str, Any]:
        nonlocal done
        async with gate:
            ids, n = stage.prompt_ids(q.text, [SimpleNamespace(text=t) for t in passages],
                                      max_tokens)
            steps = [s async for s in stage.stream(ids, stage.sampling_params(max_tokens, 0.0))]
            last = steps[-1]
        done += 1
        print(f"\r{done}/{len(items)} answered", end="", file=sys.stderr, flush=True)
        text = last.text.strip()
        return {"uid": q.uid, "type": q.answer_type, "answer": text, "passages_used": n,
                "finish_reason": last.finish_reason, "prompt_tokens": len(ids),
                "completion_tokens": len(last.output.outputs[0].token_ids),
                "em_f1": score(q.raw, text), "copied": copies_a_passage(text, passages),
                "repeats": repeats(text)}

    try:
        rows = await asyncio.gather(*[one(q, p) for q, p in items])
    finally:
        engine.shutdown()
    print(file=sys.stderr)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    spans = [r for r in rows if r["type"] in SPAN_TYPES]
    n = len(rows)
    return {"questions": n, "span_questions": len(spans),
            "span_f1": 100 * sum(r["em_f1"][1] for r in spans) / max(1, len(spans)),
            "hit_max_tokens": sum(r["finish_reason"] == "length" for r in rows) / n,
            "copied_passage": sum(r["copied"] for r in rows) / n,
            "repeats": sum(r["repeats"] for r in rows) / n,
            "mean_answer_tokens": sum(r["completion_tokens"] for r in rows) / n,
            "mean_prompt_tokens": sum(r["prompt_tokens"] for r in rows) / n}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--half", choices=HALVES, default="a")
    ap.add_argument("--limit", type=int, default=60, help="questions (stratified sample)")
    ap.add_argument("--max-tokens", type=int, default=None,
                    help="answer budget (default: the max_tokens setting)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE",
                    help="a server setting, e.g. --set answer_instruction='...' (JSON values "
                         "for lists: --set 'answer_stop=[\"\\n\"]')")
    ap.add_argument("--json", type=Path, help="write every answer and the summary here")
    args = ap.parse_args(argv)

    from pipeline.settings_sources import load_settings

    values: dict[str, Any] = {}
    for item in args.set:
        key, _, raw = item.partition("=")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    settings = load_settings(None, values, environ={})
    max_tokens = args.max_tokens or settings.max_tokens
    items = load(args.half, args.limit)
    t0 = time.perf_counter()
    rows = asyncio.run(answer_all(items, settings, max_tokens, args.concurrency))
    figures = summary(rows)
    print(f"prose answers, gold context: half {args.half}, {figures['questions']} questions "
          f"({figures['span_questions']} span/multi-span), max_tokens {max_tokens}, "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"  span F1 {figures['span_f1']:.1f} | hit max_tokens {figures['hit_max_tokens']:.0%}"
          f" | start with a copied passage {figures['copied_passage']:.0%} | repeat a 3-gram "
          f"{figures['repeats']:.0%} | answer {figures['mean_answer_tokens']:.1f} tokens, "
          f"prompt {figures['mean_prompt_tokens']:.0f}")
    for r in rows[:5]:
        print(f"  e.g. [{r['type']}] {r['answer'][:110]!r}")
    print_command(__file__, argv)
    if args.json:
        tmp = args.json.with_suffix(args.json.suffix + ".tmp")
        tmp.write_text(json.dumps({"summary": figures, "answers": rows}, indent=1))
        tmp.replace(args.json)


if __name__ == "__main__":
    main()
