"""Why the rules miss unscoped what they answer scoped, on TAT-QA dev: each miss classified.

    python3 benchmarks/unscoped_misses.py [--half a|b|all] [--with-test-reports] [--show N]

Each question is answered by the rules alone (`short_answer.choose`, as
benchmarks/text_answer_eval.py does) twice: among every indexed report, and scoped to its own
report (`filters={"doc_id": ...}`). Of the questions right scoped and wrong unscoped, each is
put in the first class that holds:
- "gold not in the top 30": no passage of its report among 30 retrieved;
- "gold ranked 11-30": its report's first passage is past the `table_top_k` passages the
  rules read;
- "tie": another report's table fits the question as well (the prose names it), and
  retrieval order chose that one;
- "other report fits better": another report's table was chosen on a better row match;
- "own report, wrong answer": the right report cited, another answer than scoped.
With --with-test-reports the index holds TAT-QA test's 278 reports beside dev's (the
556-report setting of issue 30). --show N prints N questions of each class.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from answer_eval import eval_settings  # noqa: E402
from tatqa_split import DEV, HALVES, eval_corpus, load_questions  # noqa: E402
from text_answer_eval import rules_answers, short_score  # noqa: E402

import pipeline.rag.short_answer as sa  # noqa: E402

DEEP = 30  # passages retrieved to see how far down a missed report is
CLASSES = ("gold not in the top 30", "gold ranked 11-30", "tie", "other report fits better",
           "own report, wrong answer")


def _answer(q, passages, settings, tables, store) -> tuple[float, sa.ShortAnswer]:
    """The rules' EM on the question from these passages, and their answer."""
    got = sa.choose(q.text, *rules_answers(q.text, passages, settings, tables, store),
                    passages, store)
    return short_score(q, got).em, got


def _class(q, docs: list[str], got: sa.ShortAnswer, table_top_k: int) -> str:
    """The miss's class (`CLASSES`); `docs`: the report of each retrieved passage, in order."""
    if q.context not in docs:
        return CLASSES[0]
    if docs.index(q.context) >= table_top_k:
        return CLASSES[1]
    cited = getattr(got.cited, "doc_id", None)
    if cited == q.context:
        return CLASSES[4]
    return CLASSES[2] if got.also else CLASSES[3]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=HALVES, default="a")
    ap.add_argument("--with-test-reports", action="store_true",
                    help="index TAT-QA test's 278 reports (no questions) beside dev's")
    ap.add_argument("--show", type=int, default=0, help="questions printed of each class")
    args = ap.parse_args(argv)

    from pipeline.rag.pipeline import load_retriever
    from retriever_trt.filters import MetadataFilter
    from retriever_trt.loader import load_embedder

    corpus = eval_corpus(DEV, args.with_test_reports)
    settings = eval_settings(corpus, [])
    retriever = load_retriever(settings, load_embedder(settings.embedder, settings.engines_path))
    store = retriever.store
    tables = sa.TableSource(store, cache_size=1 << 20)
    questions = load_questions(DEV, args.half)
    k = max(settings.top_k, settings.table_top_k)
    right = 0
    misses: dict[str, list[str]] = defaultdict(list)
    for start in range(0, len(questions), 64):
        batch = questions[start:start + 64]
        texts = [q.text for q in batch]
        top = retriever.retrieve(texts, k)  # as /ask retrieves: fusion order moves with k
        deep = retriever.retrieve(texts, DEEP)
        own = retriever.retrieve(texts, k, filters=[MetadataFilter(doc_id=(q.context,))
                                                    for q in batch])
        for q, passages, retrieved, scoped in zip(batch, top, deep, own, strict=True):
            em, got = _answer(q, passages, settings, tables, store)
            right += em == 1.0
            if em == 1.0 or _answer(q, scoped, settings, tables, store)[0] != 1.0:
                continue
            docs = [p.doc_id for p in retrieved]
            misses[_class(q, docs, got, settings.table_top_k)].append(q.text)
        print(f"  {start + len(batch)}/{len(questions)} questions", file=sys.stderr)

    counts = Counter({c: len(misses[c]) for c in CLASSES})
    among = "dev's and test's 556 reports" if args.with_test_reports else "dev's 278 reports"
    print(f"TAT-QA dev half {args.half}, among {among}: {right:.0f}/{len(questions)} right "
          f"unscoped (rules alone); {sum(counts.values())} right scoped only:")
    for c in CLASSES:
        print(f"  {counts[c]:4d}  {c}")
        for text in misses[c][:args.show]:
            print(f"          {text}")
    given = sys.argv[1:] if argv is None else argv
    print(f"\nreproduce: python3 benchmarks/unscoped_misses.py {' '.join(given)}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
