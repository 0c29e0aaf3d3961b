"""Re-verifies every gold of the real-PDF development set against the printed 10-K pages.

    python benchmarks/pdf_dev_check.py [--questions FILE] [--shelf DIR]

The set (benchmarks/data/pdf_dev_questions.jsonl) asks about the 10-K PDFs that
benchmarks/pdf_dev_shelf.py copies into `--shelf` (default engines/pdf-dev-shelf/; run that
first). A record's `evidence` lists each printed number its gold uses: {"name", "page" (1-based
PDF page), "line" (the row's text as printed, on the line that holds the value), "value" (as
printed: "(13,313)", "$ 25,913" or "25,913"), "scale" (10 ** scale: 6 for a table "in
millions"), "doc_id" (only when not the record's own filing)}. Checked:

- a line of that page holds the evidence's row text and, after it, its value (pypdfium2's text
  of the page, whitespace normalized, the row text in any case);
- a numeric gold equals its `derivation`, a formula over the evidence names (each name the
  printed value x 10 ** scale, in the record's unit: USD millions divides by 10 ** 6; a percent,
  ratio or per-share unit keeps USD, so the formula's scale cancels or says "* 100"), evaluated
  exactly (+ - * /, and ** for a two-year CAGR's root: "((s21 / s19) ** (1 / 2) - 1) * 100",
  Decimal's power rounded to 28 digits) and rounded half up to `decimals`;
- a company gold ("which is higher") equals the operand whose formula is the higher (or lower)
  one: derivation "higher of a, b" with `operands` naming the companies in that order;
- an absent gold (null) has only evidence of what the filing does hold (`note` says why the
  figure asked is not there).

Set 3 (benchmarks/data/pdf_dev3_questions.jsonl, ids "pdfdev3-...") asks about the route shelf
instead: 100 questions over 14 of its 10-K PDFs (Alphabet FY2021/FY2023, Apple FY2019/FY2021,
Meta FY2020/FY2022, NVIDIA FY2021/FY2023, Broadcom FY2022, Lyft FY2021, Oracle FY2020,
Salesforce FY2022, Tesla FY2019, Uber FY2021), which benchmarks/route_shelf.py copies into
engines/route-shelf/. Check it with

    python benchmarks/pdf_dev_check.py --shelf engines/route-shelf
        --questions benchmarks/data/pdf_dev3_questions.jsonl

(one command line).

Prints the records and evidence lines checked and each mismatch; exits 1 on any mismatch, 2
when the set or a PDF is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from functools import cache
from pathlib import Path

import pypdfium2 as pdfium

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from filings_check import Unverified, evaluate, rounded  # noqa: E402
from filings_score import UNITS, parse_number  # noqa: E402

QUESTIONS = ROOT / "benchmarks" / "data" / "pdf_dev_questions.jsonl"
SHELF = ROOT / "engines" / "pdf-dev-shelf"
TEXT_UNIT = "text"
_PICK = re.compile(r"^(higher|lower) of (.+)$")
_NAME = re.compile(r"\b[a-z_][a-z0-9_]*\b")
_SPACE = re.compile(r"\s+")
# "( 1,234 )" and "$ 1,234" are one printed cell: the PDF text puts spaces inside.
_PAREN_OPEN, _PAREN_CLOSE = re.compile(r"\(\s+"), re.compile(r"\s+\)")
REQUIRED = ("id", "question", "type", "doc_id", "company", "form", "fiscal_year", "answer",
            "unit", "decimals", "evidence", "derivation")


class Kind(StrEnum):
    LINE = "line"
    PRIOR_YEAR = "prior_year"
    RATIO = "ratio"
    SEGMENT = "segment"
    COMPARE = "compare"
    YEAR_FILING = "year_filing"
    ABSENT = "absent"
    PHRASING = "phrasing"


@dataclass(frozen=True)
class Evidence:
    name: str
    doc_id: str
    page: int
    line: str
    value: str
    scale: int

    @classmethod
    def of(cls, item: dict, doc_id: str) -> Evidence:
        try:
            ev = cls(item.get("name", ""), item.get("doc_id", doc_id), int(item["page"]),
                     str(item["line"]), str(item["value"]), int(item.get("scale", 0)))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise Unverified(f"evidence {item!r}: needs page, line and value ({e})") from e
        if not ev.line.strip():  # an empty row text would match any line of the page
            raise Unverified(f"evidence {item!r}: an empty line")
        return ev

    def number(self, unit: str) -> Decimal:
        """The printed value in the record's unit (see the module's docstring)."""
        printed = parse_number(self.value)
        if printed is None:
            raise Unverified(f"{self.value!r} is not one number")
        return printed.scaleb(self.scale) / UNITS.get(unit, Decimal(1))


def normalize(text: str) -> str:
    text = _SPACE.sub(" ", text.replace("\u00a0", " ")).strip()
    return _PAREN_CLOSE.sub(")", _PAREN_OPEN.sub("(", text)).replace("$ ", "$")


@cache
def page_lines(pdf: Path, page: int) -> tuple[str, ...]:
    doc = pdfium.PdfDocument(pdf)
    try:
        if not 1 <= page <= len(doc):
            raise Unverified(f"{pdf.name} has {len(doc)} pages, not page {page}")
        text = doc[page - 1].get_textpage().get_text_range()
    finally:
        doc.close()
    return tuple(normalize(t) for t in re.split(r"\r\n|\r|\n", text))


def printed(ev: Evidence, shelf: Path) -> bool:
    """Whether a line of the page holds the row's text and, after it, the value. The row's
    text matches in any case: the text layer of some PDFs lowercases a printed capital
    (Oracle's "research and development")."""
    row, value = normalize(ev.line).casefold(), normalize(ev.value).lstrip("$")
    for line in page_lines(shelf / ev.doc_id, ev.page):
        at = line.casefold().find(row)
        if at < 0:
            continue
        cells = [c.lstrip("$") for c in line[at + len(row):].split()]
        if value in cells:
            return True
    return False


def derived(record: dict, evidence: list[Evidence]) -> Decimal | str:
    """The gold the derivation gives: a number, or the company a pick names."""
    values = {e.name: e.number(record["unit"]) for e in evidence if e.name}

    def formula(text: str) -> Decimal:
        unknown = set(_NAME.findall(text)) - values.keys()
        if unknown:
            raise Unverified(f"derivation names no evidence: {', '.join(sorted(unknown))}")
        return evaluate(_NAME.sub(lambda m: str(values[m.group(0)]), text))

    pick = _PICK.match(record["derivation"])
    if not pick:
        return rounded(formula(record["derivation"]), record["decimals"])
    results = [formula(t.strip()) for t in pick.group(2).split(",")]
    best = (max if pick.group(1) == "higher" else min)(results)
    return record["operands"][results.index(best)]


def check_evidence(record: dict, shelf: Path) -> tuple[list[Evidence], list[str]]:
    """The record's evidence and the evidence lines its page does not print."""
    try:
        evidence = [Evidence.of(e, record["doc_id"]) for e in record["evidence"]]
        return evidence, [f"p.{e.page} of {e.doc_id}: no line {e.line!r} ... {e.value!r}"
                          for e in evidence if not printed(e, shelf)]
    except Unverified as e:
        return [], [str(e)]


def check_gold(record: dict, evidence: list[Evidence]) -> list[str]:
    """Whether the gold is what the derivation over the evidence gives."""
    if record["answer"] is None:
        return [] if record.get("note") else ["an absent gold needs a note"]
    if not evidence:
        return ["a gold with no evidence"]
    try:
        gold = derived(record, evidence)
        same = gold == (record["answer"] if record["unit"] == TEXT_UNIT
                        else Decimal(record["answer"]))
    except (Unverified, KeyError, IndexError, ZeroDivisionError, InvalidOperation) as e:
        return [f"derivation {record['derivation']!r} or gold {record['answer']!r}: {e!r}"]
    return [] if same else [f"gold {record['answer']} but derivation gives {gold}"]


def check(record: dict, shelf: Path) -> list[str]:
    """The record's mismatches (empty when every evidence line and its gold hold)."""
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        return [f"missing field(s) {', '.join(missing)}"]
    if record["type"] not in Kind.__members__.values():
        return [f"type {record['type']!r} is none of {', '.join(Kind)}"]
    evidence, problems = check_evidence(record, shelf)
    if problems and not evidence:  # the evidence itself is malformed: no gold to check
        return problems
    return problems + check_gold(record, evidence)


def read_set(path: Path) -> list[dict]:
    """The question set's records; Unverified names the line that is not a JSON object."""
    records = []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            raise Unverified(f"{path}:{n}: not JSON ({e.msg})") from e
        if not isinstance(record, dict):
            raise Unverified(f"{path}:{n}: not a JSON object")
        records.append(record)
    return records


def pdfs_of(records: list[dict]) -> set[str]:
    """The PDF file names the records and their evidence name."""
    docs = {r.get("doc_id") for r in records}
    docs |= {e.get("doc_id") for r in records for e in r.get("evidence", []) if isinstance(e, dict)}
    return {d for d in docs if isinstance(d, str) and d}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--shelf", type=Path, default=SHELF, help="folder of the dev 10-K PDFs")
    args = ap.parse_args(argv)
    if not args.questions.is_file():
        print(f"{args.questions}: no such question set (--questions)", file=sys.stderr)
        return 2
    try:
        records = read_set(args.questions)
    except Unverified as e:
        print(e, file=sys.stderr)
        return 2
    docs = pdfs_of(records)
    absent = sorted(d for d in docs if not (args.shelf / d).is_file())
    if absent:
        print(f"{args.shelf}: lacks {', '.join(absent)} (run benchmarks/pdf_dev_shelf.py)",
              file=sys.stderr)
        return 2
    ids = [r.get("id") for r in records]
    mismatches = [f"duplicate id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for r in records:
        mismatches += [f"{r.get('id')}: {p}" for p in check(r, args.shelf)]
    for m in mismatches:
        print(m)
    lines = sum(len(r.get("evidence", [])) for r in records)
    print(f"checked {len(records)} records, {lines} evidence lines over {len(docs)} PDFs: "
          f"{len(mismatches)} mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
