"""Short-answer quality with the gold context given (no retrieval, no model): how well the
table parser, question analysis and arithmetic answer TAT-QA dev by themselves.

Contexts are split by index parity: the even half is where the rules were developed, the odd
half is held out. Prints exact match and F1 (TAT-QA's metric) by answer type on each half,
and how many questions got an answer at all (the rest say "not found" rather than guess).

    python benchmarks/oracle_answer_eval.py [--data PATH] [--show N]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tatqa_metric import score  # noqa: E402

from pipeline.rag.answers.short_answer import answer_question  # noqa: E402
from retriever_trt.documents.tables import parse_table  # noqa: E402

DEFAULT_DATA = "/work/shared/data/tatqa/tatqa_dataset_dev.json"
TYPES = ("arithmetic", "span", "multi-span", "count")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--show", type=int, default=0, help="print N wrong answers of the even half")
    ap.add_argument("--type", default=None, help="only show wrong answers of this type")
    args = ap.parse_args()
    contexts = json.loads(Path(args.data).read_text(encoding="utf-8"))
    stats = {h: collections.defaultdict(lambda: [0, 0.0, 0.0, 0]) for h in ("even", "odd")}
    wrong = []
    for n, ctx in enumerate(contexts):
        half = "even" if n % 2 == 0 else "odd"
        paragraphs = [p["text"] for p in ctx["paragraphs"]]
        table = parse_table(ctx["table"]["table"], paragraphs)
        for q in ctx["questions"]:
            got = answer_question(q["question"], [table])
            pred, scale = (got.short_answer, got.scale) if got else (None, "")
            s = score(q, pred, scale)
            for key in (q["answer_type"], "all"):
                row = stats[half][key]
                row[0] += 1
                row[1] += s.em
                row[2] += s.f1
                row[3] += got is not None
            if half == "even" and s.em < 1 and (args.type in (None, q["answer_type"])):
                wrong.append((q, got))
    print(f"oracle-context short answers on {args.data} (even contexts: development, odd: held out)")
    print(f"{'half':5} {'type':11} {'n':>5} {'EM%':>6} {'F1%':>6} {'answered%':>9}")
    for half in ("even", "odd"):
        for key in (*TYPES, "all"):
            n, em, f1, answered = stats[half][key]
            if n:
                print(f"{half:5} {key:11} {n:5d} {100 * em / n:6.1f} {100 * f1 / n:6.1f} "
                      f"{100 * answered / n:9.1f}")
    print("command: python benchmarks/oracle_answer_eval.py")
    for q, got in wrong[: args.show]:
        print("-", q["question"], "| gold:", q["answer"], q["scale"], "|", q["derivation"])
        print("  got:", None if got is None else (got.short_answer, got.scale, got.derivation))


if __name__ == "__main__":
    main()
