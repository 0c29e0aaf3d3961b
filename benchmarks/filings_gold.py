"""Build, verify and show the filings question set (benchmarks/data/filings_questions.jsonl).

    python benchmarks/filings_gold.py generate [--filings DIR]   # rebuild the jsonl
    python benchmarks/filings_gold.py verify [--filings DIR]     # re-check every gold
    python benchmarks/filings_gold.py show [--n 10]              # records + cells, to hand-check

The gold comes from the filings' inline-XBRL facts, parsed here with lxml
(benchmarks/filings_facts.py), never from finrag's ingestion. `generate` fills every
template of benchmarks/filings_questions.py for every filing; a candidate is kept only
when each operand is both a tagged fact and the cell that shows it
(benchmarks/filings_check.py), when no other filing of the same company shows the same
figures (then the filing a question names is the only right one), and when its
arithmetic is defined (no percent change from a negative base). Dropped candidates are
printed with the reason. Per filing a fixed number of each type is kept, in the order
of a hash of their ids: the same set every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from filings_check import (  # noqa: E402
    Resolved,
    Unverified,
    check_record,
    evaluate,
    plain,
    resolve,
    text_span,
)
from filings_facts import Filing, is_hidden, parse_filing  # noqa: E402
from filings_periods import ORDINAL, Period, periods_of, phrases, spoken_date  # noqa: E402
from filings_questions import (  # noqa: E402
    PERCENT_DECIMALS,
    RATIO_DECIMALS,
    Formula,
    QType,
    Template,
    pick,
    templates_for,
)
from filings_vocab import COMPANIES, ITEMS, Measure, Statement, possessive  # noqa: E402

# A clone sits beside shared/ (CI, /work/main); a worktree one level further down.
_CANDIDATES = [base / "shared" / "data" / "filings" for base in (ROOT.parent, ROOT.parent.parent)]
FILINGS = next((p for p in _CANDIDATES if p.is_dir()), _CANDIDATES[0])
QUESTIONS = ROOT / "benchmarks" / "data" / "filings_questions.jsonl"
QUOTAS = {QType.LOOKUP: 4, QType.CHANGE: 1, QType.MARGIN: 1, QType.RATIO: 2, QType.TEXT: 1}
TEXT_ONLY_QUOTA = 2  # filings without statements (IBM's and Wells Fargo's 10-K) ask two
MONEY_UNITS = {3: "USD thousands", 6: "USD millions", 9: "USD billions"}
SHARE_UNITS = {0: "shares", 3: "thousand shares", 6: "million shares"}
UNIT_WORDS = {
    "USD thousands": ("in USD thousands", "in thousands of dollars"),
    "USD millions": ("in USD millions", "in millions of dollars", "in $ millions"),
    "USD billions": ("in USD billions",),
    "USD per share": ("in dollars per share", "in USD per share"),
    "shares": ("in shares",), "thousand shares": ("in thousands of shares",),
    "million shares": ("in millions of shares",),
}


@dataclass(frozen=True)
class Doc:
    doc_id: str
    ticker: str
    filing: Filing
    periods: dict[str, Period]

    @property
    def form(self) -> str:
        return self.filing.dei("DocumentType")

    @property
    def fiscal_year(self) -> int:
        return int(self.filing.dei("DocumentFiscalYearFocus"))


def half_of(qid: str) -> str:
    return "a" if hashlib.sha256(qid.encode()).digest()[0] % 2 == 0 else "b"


def load_docs(folder: Path) -> list[Doc]:
    paths = sorted(folder.glob("*.htm*"))
    if not paths:
        raise SystemExit(f"{folder}: no .html filings (expected ../shared/data/filings)")
    docs = []
    for path in paths:
        filing = parse_filing(path)
        docs.append(Doc(path.name, path.name.split("-")[0], filing, periods_of(filing)))
    return docs


def _shown_elsewhere(doc: Doc, docs: list[Doc], ops: list[Resolved]) -> str | None:
    """Another filing of the company with every operand's concept at the same period."""
    for other in docs:
        if other.ticker != doc.ticker or other is doc:
            continue
        if all(any(r.period.matches(f.context) for f in other.filing.numeric(r.fact.concept))
               for r in ops):
            return other.doc_id
    return None


def _unit(t: Template, ops: list[Resolved]) -> tuple[str, int]:
    if t.percent:
        return "percent", PERCENT_DECIMALS
    if t.formula in (Formula.RATIO, Formula.AVERAGE_RATIO):
        return "ratio", RATIO_DECIMALS
    scales = {r.fact.scale for r in ops}
    measure = ops[0].item.measure
    if len(scales) > 1:
        raise Unverified(f"operands shown at different scales {sorted(scales)}")
    if measure is Measure.PER_SHARE:
        return "USD per share", max(-r.value.as_tuple().exponent for r in ops)
    units = SHARE_UNITS if measure is Measure.SHARES else MONEY_UNITS
    return units[scales.pop()], 0


def _check_defined(t: Template, ops: list[Resolved]) -> None:
    base = {Formula.CHANGE_PCT: ops[1:2], Formula.SHARE_PCT: ops[1:2], Formula.RATIO: ops[1:2],
            Formula.AVERAGE_RATIO: ops, Formula.AVERAGE_RATIO_PCT: ops}.get(t.formula, [])
    if any(r.value <= 0 for r in base):
        raise Unverified(f"{t.formula.name} of a non-positive base "
                         f"{[plain(r.value) for r in base]}")


def _name(r: Resolved, doc: Doc, key: str, salt: str) -> str:
    """The line item as the question names it ("net income attributable to Coca-Cola")."""
    name = pick(r.item.names_for(r.cell.label), salt, key)
    if r.item.nci_concept and any(r.period.matches(f.context) and f.value is not None
                                  and f.value != r.fact.value
                                  for f in doc.filing.numeric(r.item.nci_concept)):
        name += f" attributable to {COMPANIES[doc.ticker].name}"
    if r.fact.value < 0 and r.item.statement is Statement.INCOME and "income" in name:
        name = name.replace("income", "income (loss)", 1)
    return name


def _bare(phrase: str) -> str:
    for prep in ("as of ", "in ", "for ", "at "):
        if phrase.startswith(prep):
            return phrase[len(prep):]
    return phrase


def _wording(t: Template, doc: Doc, qid: str, ops: list[Resolved], unit: str) -> str:
    company = pick(COMPANIES[doc.ticker].aliases, "company", qid)
    style = hashlib.sha256(f"period|{qid}".encode()).digest()[0]
    periods = [phrases(r.period) for r in ops]
    fields = {"co": possessive(company), "co_plain": company,
              "unit": pick(UNIT_WORDS.get(unit, ("",)), "unit", qid),
              "item": _name(ops[0], doc, qid, "item"),
              "op1": _name(ops[1], doc, qid, "op1") if len(ops) > 1 else ""}
    for i, options in enumerate(periods[:2]):
        fields[f"p{i}"] = options[style % len(options)]
        fields[f"p{i}_bare"] = _bare(fields[f"p{i}"])
    text = pick(t.wording, "wording", qid).format(**fields)
    return text[0].upper() + text[1:]


def _record(doc: Doc, qid: str, qtype: QType, question: str) -> dict:
    return {"id": qid, "question": question, "type": qtype.value, "doc_id": doc.doc_id,
            "company": COMPANIES[doc.ticker].name, "form": doc.form,
            "fiscal_year": doc.fiscal_year}


def build(t: Template, doc: Doc, docs: list[Doc]) -> dict:
    """The record of template `t` over `doc`; Unverified when the filing does not back it."""
    missing = [op.period for op in t.operands if op.period not in doc.periods]
    if missing:
        raise Unverified(f"the filing has no period {missing}")
    ops = [resolve(doc.filing, ITEMS[op.item], doc.periods[op.period]) for op in t.operands]
    elsewhere = _shown_elsewhere(doc, docs, ops)
    if elsewhere:
        raise Unverified(f"the same figures are also in {elsewhere}")
    _check_defined(t, ops)
    unit, decimals = _unit(t, ops)
    derivation = t.formula.value.format(*(plain(r.value) for r in ops))
    answer = evaluate(derivation).quantize(Decimal(1).scaleb(-decimals), rounding="ROUND_HALF_UP")
    qid = f"{doc.doc_id.rsplit('.', 1)[0]}-{t.key}"
    return {**_record(doc, qid, t.type, _wording(t, doc, qid, ops, unit)),
            "answer": format(answer, "f"), "unit": unit, "decimals": decimals,
            "facts": [{"concept": r.fact.concept, "contextRef": r.fact.context.id,
                       "period": _period_text(r.period), "value": plain(r.value)} for r in ops],
            "derivation": derivation, "cells": [r.cell.render() for r in ops],
            "periods": [op.period for op in t.operands], "half": half_of(qid)}


def _period_text(p: Period) -> str:
    return f"{p.start}..{p.end}" if p.start else str(p.end)


def _filing_name(doc: Doc, qid: str) -> str:
    fy = doc.fiscal_year
    if doc.form == "10-K":
        return pick((f"10-K for fiscal {fy}", f"annual report on Form 10-K for fiscal year {fy}",
                     f"fiscal {fy} Form 10-K"), "filing", qid)
    q = doc.periods["Q"]
    fiscal = "" if q.calendar else "fiscal "
    return pick((f"10-Q for the quarter ended {spoken_date(q.end)}",
                 f"Form 10-Q for the {ORDINAL[q.quarter]} quarter of {fiscal}{fy}"), "filing", qid)


TEXT_ASKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "incorporation": ("dei:EntityIncorporationStateCountryCode", (
        "In which state is {co_plain} incorporated, according to its {filing}?",
        "What is {co} state of incorporation as given on the cover of its {filing}?")),
    "exchange": ("dei:SecurityExchangeName", (
        "On which exchange is {co} common stock registered, per its {filing}?",
        "Name the exchange {co} common stock trades on, as listed in its {filing}.")),
    "symbol": ("dei:TradingSymbol", (
        "What is the trading symbol of {co} common stock, according to its {filing}?",)),
    "period_end": ("dei:DocumentPeriodEndDate", (
        "On what date did {co} {period} end?", "What was the last day of {co} {period}?")),
    "tax_id": ("dei:EntityTaxIdentificationNumber", (
        "What is {co} IRS employer identification number, as stated in its {filing}?",)),
    "city": ("dei:EntityAddressCityOrTown", (
        "In which city are {co} principal executive offices located, according to its "
        "{filing}?",)),
}
_COMMON = ("common stock", "capital stock")


def _cover_fact(doc: Doc, concept: str) -> tuple[str, str]:
    """(contextRef, shown span) of a visible cover fact; for the exchange and symbol, the
    one row of the securities table that registers common stock."""
    found = doc.filing.text(concept)
    if concept in ("dei:SecurityExchangeName", "dei:TradingSymbol"):
        rows = {t.context.id for t in doc.filing.texts if t.concept == "dei:Security12bTitle"
                and any(w in t.shown.lower() for w in _COMMON)}
        if len(rows) != 1:
            raise Unverified(f"{concept}: {len(rows)} common stock rows on the cover")
        found = [t for t in doc.filing.texts if t.concept == concept and t.context.id in rows]
    shown = [t for t in found if not is_hidden(t.element) and text_span(t.shown)]
    if len(shown) != 1:
        raise Unverified(f"{concept}: {len(shown)} visible facts")
    return shown[0].context.id, text_span(shown[0].shown)


def build_text(key: str, doc: Doc) -> dict:
    concept, wording = TEXT_ASKS[key]
    context_ref, span = _cover_fact(doc, concept)
    qid = f"{doc.doc_id.rsplit('.', 1)[0]}-text-{key}"
    company = pick(COMPANIES[doc.ticker].aliases, "company", qid)
    if doc.form == "10-K":
        period = f"fiscal year {doc.fiscal_year}"
    else:
        q = doc.periods["Q"]
        period = f"{ORDINAL[q.quarter]} quarter of {'' if q.calendar else 'fiscal '}{q.fiscal_year}"
    text = pick(wording, "wording", qid).format(co=possessive(company), co_plain=company,
                                                 filing=_filing_name(doc, qid), period=period)
    return {**_record(doc, qid, QType.TEXT, text), "answer": span, "unit": "", "decimals": None,
            "facts": [{"concept": concept, "contextRef": context_ref}], "derivation": "",
            "cells": [span], "periods": [], "half": half_of(qid)}


def _order(record: dict) -> bytes:
    return hashlib.sha256(record["id"].encode()).digest()


def _select(records: list[dict], quota: int) -> list[dict]:
    """`quota` records in hash order, first spreading over statements and line items."""
    chosen: list[dict] = []
    seen: set[str] = set()
    for r in sorted(records, key=_order):
        group = r["id"].split("-")[-2] if r["type"] != "text" else r["id"]
        stmt = _statement_of(r)
        if len(chosen) < quota and stmt not in seen and group not in seen:
            chosen.append(r)
            seen |= {stmt, group}
    rest = [r for r in sorted(records, key=_order) if r not in chosen]
    return chosen + rest[: quota - len(chosen)]


def _statement_of(record: dict) -> str:
    parts = record["id"].split("-")
    item = ITEMS.get(parts[-2]) if record["type"] == "lookup" else None
    return item.statement.value if item else record["type"] + parts[-3]


def generate(folder: Path) -> tuple[list[dict], list[str]]:
    docs = load_docs(folder)
    kept: list[dict] = []
    dropped: list[str] = []
    for doc in docs:
        by_type: dict[QType, list[dict]] = defaultdict(list)
        for t in templates_for(doc.form, "YTD" in doc.periods):
            try:
                by_type[t.type].append(build(t, doc, docs))
            except Unverified as exc:
                dropped.append(f"{doc.doc_id} {t.key}: {exc}")
        for key in TEXT_ASKS:
            try:
                by_type[QType.TEXT].append(build_text(key, doc))
            except Unverified as exc:
                dropped.append(f"{doc.doc_id} text-{key}: {exc}")
        only_text = not any(by_type[t] for t in QType if t is not QType.TEXT)
        for qtype, quota in QUOTAS.items():
            kept += _select(by_type[qtype], TEXT_ONLY_QUOTA if only_text else quota)
    return kept, dropped


def summary(records: list[dict]) -> list[str]:
    lines = [f"{len(records)} questions"]
    for field in ("type", "half", "company", "form"):
        counts = Counter(str(r[field]) for r in records)
        lines.append(f"by {field}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return lines


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("generate", "verify", "show"))
    ap.add_argument("--filings", type=Path, default=FILINGS, help="folder of the filings")
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="the jsonl")
    ap.add_argument("--n", type=int, default=10, help="show: how many records")
    ap.add_argument("--verbose", action="store_true", help="generate: print every drop")
    args = ap.parse_args(argv)
    if not args.filings.is_dir():
        raise SystemExit(f"--filings {args.filings}: not a folder (the shared SEC filings live "
                         "in ../shared/data/filings)")
    if args.command == "generate":
        records, dropped = generate(args.filings)
        args.questions.parent.mkdir(parents=True, exist_ok=True)
        args.questions.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        print(f"candidates dropped: {len(dropped)}")
        for line in dropped if args.verbose else []:
            print("  dropped", line)
        print("\n".join(summary(records)) + f"\nwritten: {args.questions}")
    records = load_questions(args.questions)
    if args.command == "show":
        for r in sorted(records, key=_order)[: args.n]:
            print(json.dumps({k: r[k] for k in ("id", "question", "answer", "unit", "facts",
                                                "derivation", "cells")}, indent=1))
        return 0
    problems = [p for r in records for p in check_record(r, args.filings)]
    print("\n".join(problems) or f"verified: all {len(records)} gold answers agree with their "
          "tagged facts and shown cells")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
