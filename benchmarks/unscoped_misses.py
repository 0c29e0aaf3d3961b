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

Each miss is also asked of every indexed report's table alone: its rivals are the other
reports whose table answers it at least as well as its own report's table does
(`short_answer.fit`: the row match and its bonuses, retrieval aside) with another answer. A
miss with a rival is ambiguous on the tables' evidence: only the report, which the question
does not name, tells them apart. The misses without one bound what better retrieval and
ranking could still win.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from answer_eval import eval_settings  # noqa: E402
from reproduce import print_command  # noqa: E402
from tatqa_split import DEV, HALVES, add_test_reports_option, eval_corpus, load_questions  # noqa: E402
from text_answer_eval import rules_answers, short_score  # noqa: E402

import pipeline.rag.answers.short_answer as sa  # noqa: E402
from pipeline.rag.answers.question import operation  # noqa: E402
from retriever_trt.documents.tables import Table  # noqa: E402

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


def _rivals(q, tables: dict[str, Table]) -> int | None:
    """The other reports whose table answers `q` at least as well as its own report's table,
    with another answer (None when its own table gives no answer)."""
    parsed = operation(q.text)
    own = sa.answer_question(parsed, [tables[q.context]]) if q.context in tables else None
    if own is None:
        return None
    floor = sa.fit(parsed, own) - sa.TIE
    count = 0
    for doc, table in tables.items():
        got = sa.answer_question(parsed, [table]) if doc != q.context else None
        count += got is not None and sa.fit(parsed, got) >= floor and \
            short_score(q, sa.ShortAnswer(got.short_answer, got.scale)).em != 1.0
    return count


def _report(misses: dict[str, list[tuple[str, int | None]]], right: float, show: int) -> None:
    """Each class with its ambiguous share, then the misses no rival makes ambiguous."""
    print(f"  {'misses':>6}  {'a rival':>7}  class")
    for c in CLASSES:
        rivals = [r for _, r in misses[c]]
        print(f"  {len(rivals):6d}  {sum(1 for r in rivals if r):7d}  {c}")
        for text, r in misses[c][:show]:
            print(f"          {text}  [rivals: {'text answer' if r is None else r}]")
    every = [r for c in CLASSES for _, r in misses[c]]
    rivalled = [r for r in every if r]
    clear = len(every) - len(rivalled)
    print(f"{len(rivalled)} of the {len(every)} have another report whose table fits as well with "
          f"another answer (median {statistics.median(rivalled) if rivalled else 0} such reports); "
          f"{clear} have none ({sum(r is None for r in every)} of them answered from the text): "
          f"{right:.0f} + {clear} = {right + clear:.0f} right if every one of those were won")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=HALVES, default="a")
    add_test_reports_option(ap)
    ap.add_argument("--show", type=int, default=0, help="questions printed of each class")
    args = ap.parse_args(argv)

    from pipeline.rag.index_loading import load_retriever
    from retriever_trt.embedders.loader import load_embedder
    from retriever_trt.search.filters import MetadataFilter

    corpus = eval_corpus(DEV, args.with_test_reports)
    settings = eval_settings(corpus, [])
    retriever = load_retriever(settings, load_embedder(settings.embedder, settings.engines_path))
    store = retriever.store
    tables = sa.TableSource(store, cache_size=1 << 20)
    report_tables = {doc: found[1] for doc in dict.fromkeys(c.doc_id for c in store)
                     if (found := tables.table_of(doc)) is not None}
    questions = load_questions(DEV, args.half)
    k = max(settings.top_k, settings.table_top_k)
    right = 0
    misses: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
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
            scoped_em, scoped_got = _answer(q, scoped, settings, tables, store)
            if em == 1.0 or scoped_em != 1.0:
                continue
            docs = [p.doc_id for p in retrieved]
            misses[_class(q, docs, got, settings.table_top_k)].append(
                (q.text, None if scoped_got.quote is not None else _rivals(q, report_tables)))
        print(f"  {start + len(batch)}/{len(questions)} questions", file=sys.stderr)

    among = "dev's and test's 556 reports" if args.with_test_reports else "dev's 278 reports"
    print(f"TAT-QA dev half {args.half}, among {among}: {right:.0f}/{len(questions)} right "
          f"unscoped (rules alone); {sum(map(len, misses.values()))} right scoped only:")
    _report(misses, right, args.show)
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
