"""Probe questions made from filings' own inline-XBRL facts, each with its gold answer.

    python3 benchmarks/fact_probes.py --filings DIR --out FILE.jsonl [--kinds k1,k2]
        [--limit-per-filing N] [--seed S]
    python3 benchmarks/fact_probes.py --filings DIR --check FILE.jsonl

For every `*.htm*` inline-XBRL filing in DIR it writes questions in the record format of the
held-out sets (benchmarks/data/README.md), which `benchmarks/filings_eval.py --questions FILE`
scores. The kinds (each record's `type`):

- period: a statement line (revenue, net income, operating income, diluted EPS, total assets,
  cash from operations, capex, R&D, SG&A, long-term debt) at each period the filing holds: a
  10-K's three fiscal years and two balance dates, a 10-Q's quarter, year to date, the same
  periods a year earlier and its balance dates, named in varied ways ("fiscal 2024", "FY24",
  "the year ended ...", "Q2 2025", "the first half of fiscal 2026", "as of ...").
- absent: such a line at a period the filing does not hold (the year before its earliest
  column, the year or quarter after its period, a balance a year before): gold null.
- segment: a revenue or operating income fact with one segment, region or product member,
  named by the printed row label or the member's name in words.
- foreign_segment: another company's segment or product name asked of this filing, which
  neither tags a member like it nor prints it: gold null.
- ratio: gross, operating and net margin, effective tax rate, debt-to-equity, growth year
  over year and a two-year revenue CAGR, each defined in the question; percent, one decimal.
- compare: two companies' same item at the same fiscal year or calendar quarter: which is
  higher or lower (gold: the company), the difference or the sum (numbers); `doc_ids` both.
- cover: dei facts: auditor and its location, shares outstanding (per class where several),
  public float, fiscal year end, every trading symbol (a list).

How a gold is made: a line item's fact is benchmarks/filings_check.py's `resolve` (the
vocabulary's concept, no dimensions, exactly the period, duplicates agreeing, shown in a row
labelled as the item with the table's scale); the one concept a filing uses for an item is
kept for all its periods. A member or cover fact must agree with its duplicates and be shown
(not only in ix:hidden). The gold is the fact's value at its scale in the unit asked (or in
billions to one decimal: the derivation divides by `100 ** (1 + 0.5)`, the only constants the
checker admits), a ratio its derivation evaluated exactly and rounded half up. An absent gold
is null only when no fact of the item's concepts ends in the asked period's window. Anything
in doubt is skipped. Records are deterministic under --seed; --limit-per-filing samples that
many of each kind per filing; `half` alternates a/b within each kind. `--check` re-reads every
gold with benchmarks/filings_heldout_check.py (its own lxml parser) and lists mismatches.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fact_probes_core import Doc, load_doc  # noqa: E402
from fact_probes_cross import compare_probes, cover_probes  # noqa: E402
from fact_probes_items import absent_probes, period_probes, ratio_probes  # noqa: E402
from fact_probes_segments import foreign_probes, segment_probes  # noqa: E402
from filings_heldout_check import check_record  # noqa: E402

Maker = Callable[[Doc, list[Doc], random.Random], Iterator[dict]]
MAKERS: dict[str, Maker] = {
    "period": lambda doc, docs, rng: period_probes(doc, rng),
    "absent": lambda doc, docs, rng: absent_probes(doc, rng),
    "segment": lambda doc, docs, rng: segment_probes(doc, rng),
    "foreign_segment": foreign_probes,
    "ratio": lambda doc, docs, rng: ratio_probes(doc, rng),
    "compare": compare_probes,
    "cover": lambda doc, docs, rng: cover_probes(doc, rng),
}
KINDS = tuple(MAKERS)


def load_docs(filings: Path) -> list[Doc]:
    return [d for p in sorted(filings.glob("*.htm*")) if (d := load_doc(p)) is not None]


def generate(filings: Path, kinds: tuple[str, ...] = KINDS, limit: int | None = None,
             seed: int = 0) -> list[dict]:
    """Every filing's questions of `kinds`, at most `limit` of each kind per filing."""
    docs = load_docs(filings)
    out: list[dict] = []
    for doc in docs:
        for kind in kinds:
            rng = random.Random(f"{seed}|{doc.doc_id}|{kind}")
            found = list(MAKERS[kind](doc, docs, rng))
            if limit is not None and len(found) > limit:
                found = [found[i] for i in sorted(rng.sample(range(len(found)), limit))]
            for i, r in enumerate(found, 1):
                r["id"] = f"{Path(doc.doc_id).stem}-probe-{kind}-{i:03d}"
            out += found
    seen: Counter[str] = Counter()
    for r in out:
        r["half"] = "ab"[seen[r["type"]] % 2]
        seen[r["type"]] += 1
    return out


def check(records: list[dict], filings: Path) -> list[str]:
    """Every mismatch the held-out checker finds between the records and the filings."""
    return [p for r in records for p in check_record(r, filings)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filings", type=Path, required=True, help="folder of inline-XBRL filings")
    ap.add_argument("--out", type=Path, help="write the questions (JSONL) here")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {KINDS}")
    ap.add_argument("--limit-per-filing", type=int, help="at most N questions per kind and filing")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", type=Path, help="re-check the golds of this JSONL instead")
    args = ap.parse_args(argv)
    if not args.filings.is_dir():
        raise SystemExit(f"--filings {args.filings}: not a folder")
    if args.check:
        records = [json.loads(line) for line in args.check.read_text("utf-8").splitlines() if line]
        problems = check(records, args.filings)
        print(f"checked {len(records)} records against {args.filings}: {len(problems)} mismatches")
        print("\n".join(f"  {p}" for p in problems))
        return 1 if problems else 0
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    unknown = [k for k in kinds if k not in MAKERS]
    if unknown or args.out is None:
        raise SystemExit(f"give --out, and --kinds of {KINDS}" + (f" (not {unknown})" if unknown else ""))
    records = generate(args.filings, kinds, args.limit_per_filing, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    counts = Counter(r["type"] for r in records)
    print(f"{len(records)} questions from {len(load_docs(args.filings))} filings -> {args.out}")
    print("  " + ", ".join(f"{k} {counts[k]}" for k in kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
