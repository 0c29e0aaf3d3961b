"""FinanceBench's numeric questions answered by the filing answer rules alone, over one shelf
of real 10-K PDFs (issue 51's measurement). Measurement only: nothing here tunes a rule.

    python benchmarks/financebench_eval.py [--mirror GIT_DIR] [--shelf DIR] [--out FILE]
        [--limit N] [--misses]

The public FinanceBench set (patronus-ai/financebench) is read from a bare git mirror
(`--mirror`, default /work/.mirror/patronus-ai+financebench/repo):
data/financebench_open_source.jsonl (150 questions) and pdfs/<doc_name>.pdf. Nothing of it
is in this repository.

Which questions: the `metrics-generated` ones (50, over 44 filings) whose gold parses to one
number ("$1577.00", "24.26", "-3.7", "1.9%") and whose filing's PDF the mirror holds (5 of
the 44 PDFs are absent from it: their 5 questions are dropped and counted) — 45 questions
over 39 PDFs. The PDFs are copied into `--shelf` (default engines/financebench-shelf/,
git-ignored), ALL of them into one folder (many companies and years together), read once
with `retriever_trt.indexing.ingest.ingest` (timed: pages, seconds, pages/s), then each PDF's
statement facts are read (`FilingAnswerer.facts_of`, timed too: the rules would read them
on the first question about the filing). Each question goes, as asked, through
`FilingAnswerer.parse`, `.scope` (no caller filter: the question alone names the company and
the fiscal year) and `.answer` (benchmarks/filings_rules.py `respond`).

The gold's unit: a "%" gold is a percent; a "$" gold is USD at the scale the question asks
("in USD millions", "USD billions", "USD thousands"; none named: USD); any other gold is a
plain number (a ratio, days). The response's `short_answer` at its `scale` is put in the
gold's unit as benchmarks/filings_score.py does (a percent gold takes scale "percent" or "";
a plain gold takes scale "" or a percent divided by 100; a USD gold takes any money scale).

TOLERANCE (one rule for every question): right when |answer - gold| <= max(half a unit of
the gold's last printed decimal, 1% of |gold|). "$1577.00" million takes 1561.23..1592.77;
"0.01" takes 0.005..0.015; "30.8%" takes 30.492..31.108.

Printed: n (and what was dropped), EM, right filing first (the scope's first doc_id is the
question's doc_name), right filing used (the filing the answer names), no number, WRONG
NUMBERS SHOWN (a number that is not the gold), by the gold's kind, the reading times, and the
command. `--out` writes one JSON line per question (question, gold, response fields, the
scope's first three filings, the verdicts); `--misses` prints each miss.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from filings_rules import respond  # noqa: E402
from filings_score import gives_number, in_gold_unit, parse_number, used_filing  # noqa: E402
from mirror_files import git, write_whole  # noqa: E402
from reproduce import print_command  # noqa: E402

MIRROR = Path("/work/.mirror/patronus-ai+financebench/repo")
QUESTIONS = "data/financebench_open_source.jsonl"
NUMERIC_TYPE = "metrics-generated"
RELATIVE = Decimal("0.01")   # 1% of the gold
PERCENT, PLAIN = "percent", ""
_USD_SCALE = re.compile(r"\bUSD\s+(thousands|millions|billions)\b", re.I)
_SCALE_WORD = {"thousands": "thousand", "millions": "million", "billions": "billion"}
_SCALE_VALUE = {"": Decimal(1), "thousand": Decimal(10) ** 3, "million": Decimal(10) ** 6,
                "billion": Decimal(10) ** 9}


# -- the scorer (pure functions; tests/test_financebench_score.py) -------------------------

def gold_number(answer: str, question: str) -> tuple[Decimal, str, int] | None:
    """(value, unit, decimals) of a FinanceBench gold: unit "percent" for a "%" gold, "USD",
    "USD thousand/million/billion" for a "$" gold (the scale the question asks), "" for any
    other number; None when the gold is not one number."""
    text = answer.strip()
    value = parse_number(text)
    if value is None:
        return None
    digits = text.replace("%", "").replace(",", "").strip().strip("()")
    decimals = len(digits.split(".", 1)[1]) if "." in digits else 0
    if text.endswith("%"):
        return value, PERCENT, decimals
    if "$" in text:
        m = _USD_SCALE.search(question)
        return value, "USD" + (f" {_SCALE_WORD[m.group(1).lower()]}" if m else ""), decimals
    return value, PLAIN, decimals


def tolerance(gold: Decimal, decimals: int) -> Decimal:
    """Half a unit of the gold's last decimal, or 1% of the gold, whichever is larger."""
    return max(Decimal(5).scaleb(-decimals - 1), abs(gold) * RELATIVE)


def answer_in_unit(short: Any, scale: str, unit: str) -> Decimal | None:
    """The response's number (`short_answer` at `scale`) in the gold's unit; None when it
    gives no one number or its scale cannot meet the unit."""
    if isinstance(short, list):
        short = short[0] if len(short) == 1 else None
    value = parse_number(short) if isinstance(short, str) else None
    if value is None:
        return None
    scale = scale or ""
    if unit.startswith("USD"):
        if scale not in _SCALE_VALUE:
            return None
        return value * _SCALE_VALUE[scale] / _SCALE_VALUE[unit[4:]]
    return in_gold_unit(value, scale, "ratio" if unit == PLAIN else PERCENT)


def matches(short: Any, scale: str, gold: Decimal, unit: str, decimals: int) -> bool:
    got = answer_in_unit(short, scale, unit)
    return got is not None and abs(got - gold) <= tolerance(gold, decimals)


# -- the data --------------------------------------------------------------------------------

def has_blob(mirror: Path, path: str) -> bool:
    return subprocess.run(["git", f"--git-dir={mirror}", "cat-file", "-e", f"HEAD:{path}"],
                          capture_output=True).returncode == 0


def numeric_questions(mirror: Path) -> tuple[list[dict], dict[str, int]]:
    rows = [json.loads(line) for line in git(mirror, "show", f"HEAD:{QUESTIONS}").decode().splitlines()
            if line.strip()]
    counts = {"questions": len(rows)}
    kept = [r for r in rows if r["question_type"] == NUMERIC_TYPE]
    counts[NUMERIC_TYPE] = len(kept)
    out = []
    for r in kept:
        gold = gold_number(r["answer"], r["question"])
        if gold is None:
            counts["gold not one number"] = counts.get("gold not one number", 0) + 1
            continue
        r = dict(r, gold=gold)
        out.append(r)
    present = {d: has_blob(mirror, f"pdfs/{d}.pdf") for d in {r["doc_name"] for r in out}}
    counts["filings"] = len(present)
    counts["PDF absent from the mirror"] = sum(not p for p in present.values())
    counts["questions on an absent PDF"] = sum(not present[r["doc_name"]] for r in out)
    return [r for r in out if present[r["doc_name"]]], counts


def fill_shelf(mirror: Path, shelf: Path, docs: set[str]) -> None:
    shelf.mkdir(parents=True, exist_ok=True)
    for old in shelf.iterdir():
        if old.suffix != ".pdf" or old.stem not in docs:
            old.unlink()
    for d in sorted(docs):
        target = shelf / f"{d}.pdf"
        if not target.exists():
            write_whole(target, git(mirror, "show", f"HEAD:pdfs/{d}.pdf"))


# -- the run ---------------------------------------------------------------------------------

def pct(k: int, n: int) -> str:
    return f"{k}/{n} = {100 * k / n:.1f}%" if n else "0/0"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror", type=Path, default=MIRROR)
    ap.add_argument("--shelf", type=Path, default=ROOT / "engines" / "financebench-shelf")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--limit", type=int, help="the first N questions only")
    ap.add_argument("--misses", action="store_true", help="print each miss")
    args = ap.parse_args()

    from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
    from retriever_trt.indexing.ingest import ingest

    records, counts = numeric_questions(args.mirror)
    if args.limit:
        records = records[:args.limit]
    docs = {r["doc_name"] for r in records}
    fill_shelf(args.mirror, args.shelf, docs)
    print("selection: " + ", ".join(f"{k}: {v}" for k, v in counts.items())
          + f"; kept n = {len(records)} questions over {len(docs)} PDFs", flush=True)

    t0 = time.perf_counter()
    store, report = ingest(args.shelf)
    read_s = time.perf_counter() - t0
    print(f"reading: {report.summary()} (wall {read_s:.1f} s)", flush=True)
    answerer = FilingAnswerer(store)
    t0 = time.perf_counter()
    facts = {d: answerer.facts_of(d) for d in answerer.info}
    facts_s = time.perf_counter() - t0
    n_facts = sum(len(getattr(i, "facts", ()) or ()) for i in facts.values())
    total_s = read_s + facts_s
    print(f"statement facts: {n_facts} from {len(facts)} PDFs in {facts_s:.1f} s; reading + "
          f"facts {total_s:.1f} s = {report.pages / total_s:.1f} pages/s", flush=True)

    results = []
    for r in records:
        gold, unit, decimals = r["gold"]
        query = answerer.parse(r["question"])
        scope = answerer.scope(query, None)
        t0 = time.perf_counter()
        resp = respond(answerer, r["question"])
        ms = (time.perf_counter() - t0) * 1000
        first = Path(scope.doc_ids[0]).stem if scope.doc_ids else None
        used = used_filing(resp)
        got = answer_in_unit(resp["short_answer"], resp["scale"] or "", unit)
        right = matches(resp["short_answer"], resp["scale"] or "", gold, unit, decimals)
        number = gives_number(resp["short_answer"])
        results.append({
            "financebench_id": r["financebench_id"], "doc_name": r["doc_name"],
            "question": r["question"], "gold": r["answer"], "gold_value": str(gold),
            "unit": unit, "decimals": decimals,
            "short_answer": resp["short_answer"], "scale": resp["scale"],
            "in_gold_unit": None if got is None else f"{got:f}",
            "derivation": resp["derivation"], "answer": resp["answer"],
            "company": query.company, "periods": [str(p) for p in query.periods],
            "scope": [Path(d).stem for d in scope.doc_ids[:3]], "used": used and Path(used).stem,
            "right": right, "right_filing_first": first == r["doc_name"],
            "right_filing_used": bool(used) and Path(used).stem == r["doc_name"],
            "no_number": not number, "wrong_number": number and not right, "ms": round(ms, 1)})
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("".join(json.dumps(x) + "\n" for x in results))

    n = len(results)
    print(f"\nFinanceBench numeric ({NUMERIC_TYPE}, gold one number, PDF present), n = {n}, "
          "tolerance: |answer - gold| <= max(half a unit of the gold's last decimal, 1% of "
          "|gold|)")
    print(f"  EM:                   {pct(sum(x['right'] for x in results), n)}")
    print(f"  right filing first:   {pct(sum(x['right_filing_first'] for x in results), n)}")
    print(f"  right filing used:    {pct(sum(x['right_filing_used'] for x in results), n)}")
    print(f"  no number:            {pct(sum(x['no_number'] for x in results), n)}")
    print(f"  WRONG NUMBERS SHOWN:  {pct(sum(x['wrong_number'] for x in results), n)}")
    for kind, name in ((PERCENT, "percent golds"), (PLAIN, "plain-number golds (ratios, days)"),
                       ("USD", "USD golds")):
        sub = [x for x in results if (x["unit"].startswith("USD") if kind == "USD"
                                      else x["unit"] == kind)]
        print(f"    {name}: n {len(sub)}, EM {sum(x['right'] for x in sub)}, no number "
              f"{sum(x['no_number'] for x in sub)}, wrong {sum(x['wrong_number'] for x in sub)}")
    print(f"  reading: {report.pages} pages, ingest {read_s:.1f} s "
          f"({report.pages / read_s:.1f} pages/s), + statement facts {facts_s:.1f} s "
          f"= {report.pages / total_s:.1f} pages/s")
    if args.misses:
        for x in results:
            if not x["right"]:
                print(f"\nMISS {x['financebench_id']} {x['doc_name']} gold {x['gold']} ({x['unit']})"
                      f" got {x['short_answer']!r} {x['scale']!r} scope {x['scope']}\n"
                      f"  Q: {x['question'][:200]}\n  A: {x['answer'][:400]}")
    print_command(__file__, prefix="PYTHONPATH=$PWD")


if __name__ == "__main__":
    main()
