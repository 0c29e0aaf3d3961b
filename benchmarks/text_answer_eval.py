"""Short answers from tables and text on TAT-QA dev, without the LLM: how `short_answer.choose`
splits questions between a table's answer and the text's extract, and its thresholds' grid.

    python3 benchmarks/text_answer_eval.py [--half a|b|all] [--grid] [--scoped]
        [--own-half-reports] [--with-test-reports] [--set SETTING=VALUE ...]

The dev set's eval index (the one benchmarks/answer_eval.py builds) and the server's
retrieval settings: each question's top `table_top_k` passages, as /ask retrieves them. Every
question is scored (TAT-QA's metric) on the short answer `choose` returns, 0 when it returns
none (the end-to-end figure, which scores the prose then, is answer_eval.py's). Rows: the
table's answers alone, the text's alone where the table has none, and `choose`. With --grid,
`choose` under each (TEXT_MIN, TABLE_SURE): choose them on half a, report half b. With
--scoped, each question retrieves from its own report only (`filters={"doc_id": ...}`, as
answer_eval.py --scoped asks it). With --own-half-reports, each question retrieves among
the reports of its own half only (142 or 136 of the 278): how the unscoped figure moves with the
number of reports in the index; with --with-test-reports, among 556: dev's and TAT-QA test's
278 (`benchmarks/data/tatqa_test_contexts.json`, no questions), as issue 30 measured test.
--set changes a server setting, as answer_eval.py's does (`--set table_top_k=5`:
the tables of the top 5 passages only).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from answer_eval import add_set_option, eval_settings  # noqa: E402
from reproduce import print_command  # noqa: E402
from tatqa_metric import score  # noqa: E402
from tatqa_split import (  # noqa: E402
    DEV,
    HALVES,
    add_test_reports_option,
    eval_corpus,
    half_of,
    load_questions,
)

import pipeline.rag.answers.short_answer as sa  # noqa: E402
from pipeline.rag.answers.query import parse_query  # noqa: E402

KEYS = ("overall", "arithmetic", "span", "multi-span", "count", "from table", "from table-text",
        "from text")


def short_score(q: Any, got: Any) -> Any:
    """TAT-QA's score of a short answer to the question; none scores 0."""
    if got.short_answer in (None, []):
        return score(q.raw, None)
    return score(q.raw, got.short_answer, got.scale)


def rules_answers(text: str, passages: list[Any], settings: Any, tables: Any,
                  store: Any) -> tuple[Any, Any]:
    """The table's and the text's short answers from the retrieved passages, each from the
    passages /ask gives it (`choose` then picks between them)."""
    query = parse_query(text)  # parsed once, as /ask parses it
    return (sa.short_answer_for(query.question, passages[:settings.table_top_k], tables),
            sa.text_short_answer(query, passages[:settings.top_k], store))


def row(name: str, picks: list[tuple[Any, Any]]) -> str:
    """EM/F1 per key of (question, ShortAnswer) pairs."""
    agg: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for q, got in picks:
        s = short_score(q, got)
        for key in ("overall", q.answer_type, f"from {q.answer_from}"):
            agg[key][0] += 1
            agg[key][1] += s.em
            agg[key][2] += s.f1
    cells = [f"{100 * agg[k][1] / agg[k][0]:.1f}/{100 * agg[k][2] / agg[k][0]:.1f}"
             if agg[k][0] else "-" for k in KEYS]
    return f"| {name} | " + " | ".join(cells) + " |"


def _half_reports() -> dict[str, tuple[str, ...]]:
    """Each half's reports (context uids), from one read of the dev file."""
    reports: dict[str, set[str]] = defaultdict(set)
    for q in load_questions(DEV):
        reports[half_of(q.context)].add(q.context)
    return {h: tuple(sorted(ids)) for h, ids in reports.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--half", choices=HALVES, default="a")
    ap.add_argument("--grid", action="store_true", help="every (TEXT_MIN, TABLE_SURE) pair")
    ap.add_argument("--scoped", action="store_true", help="each question within its own report")
    ap.add_argument("--own-half-reports", action="store_true",
                    help="each question retrieves among its own half's reports only")
    add_test_reports_option(ap)
    add_set_option(ap)
    args = ap.parse_args(argv)

    from pipeline.rag.index_loading import load_retriever
    from retriever_trt.embedders.loader import load_embedder
    from retriever_trt.search.filters import MetadataFilter

    corpus = eval_corpus(DEV, args.with_test_reports)
    settings = eval_settings(corpus, args.set)
    retriever = load_retriever(settings, load_embedder(settings.embedder, settings.engines_path))
    store = retriever.store
    tables = sa.TableSource(store, cache_size=1 << 20)
    questions = load_questions(DEV, args.half)
    k = max(settings.top_k, settings.table_top_k)
    half_reports = _half_reports() if args.own_half_reports else None
    found = []
    for start in range(0, len(questions), 64):
        batch = questions[start:start + 64]
        scopes = [MetadataFilter(doc_id=(q.context,)) if args.scoped else
                  MetadataFilter(doc_id=half_reports[half_of(q.context)]) if half_reports else None
                  for q in batch]
        for q, passages in zip(batch, retriever.retrieve([q.text for q in batch], k, filters=scopes),
                               strict=True):
            found.append((q, passages, *rules_answers(q.text, passages, settings, tables, store)))
        print(f"  {len(found)}/{len(questions)} questions", file=sys.stderr)

    def chosen() -> list[tuple[Any, Any]]:
        return [(q, sa.choose(q.text, table, text, passages, store))
                for q, passages, table, text in found]

    among = ", scoped" if args.scoped else ", its half's reports" if args.own_half_reports else \
        ", among dev's and test's reports" if args.with_test_reports else ""
    print(f"TAT-QA dev half {args.half}{among}: {len(found)} "
          f"questions, EM/F1 of the short answer "
          f"(0 without one), top_k {settings.top_k}, table_top_k {settings.table_top_k}")
    print("| | " + " | ".join(KEYS) + " |\n|---|" + "---:|" * len(KEYS))
    print(row("table only", [(q, table) for q, _, table, _ in found]))
    print(row("table, else text", [(q, table if table.short_answer is not None or text is None
                                     else sa.choose(q.text, sa.ShortAnswer(), text, p, store))
                                   for q, p, table, text in found]))
    print(row(f"choose ({sa.TEXT_MIN}, {sa.TABLE_SURE})", chosen()))
    if args.grid:
        for sa.TEXT_MIN, sa.TABLE_SURE in itertools.product((0.6, 0.7, 0.8, 0.9),
                                                            (0.9, 1.0, 1.1)):
            print(row(f"choose ({sa.TEXT_MIN}, {sa.TABLE_SURE})", chosen()))
    print_command(__file__, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
