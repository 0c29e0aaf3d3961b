"""How well the PDF reader reads the printed statements of companies' own 10-K PDFs, which
have no inline-XBRL twin to score against: per statement kind, whether it is located, the
share of its rows whose label holds an amount (a column read into the label), whether the
standard key rows are read with a value in every column period, and whether it passes its
self-checks; and pages read a second.

Issue 51's failures on real 10-Ks, counted here:
  (a) an amount read INTO the row label ("Inventories 1,559.3"): the row loses that
      column's value. Counted: body rows whose label ends with an amount-like word (digits
      with a thousands separator or a decimal point, "(1,234)", "$ 5"; not a year or a
      date's day, which labels print: "Balance at December 31, 2022");
  (b) a key row ("Total current assets", "Inventories", "Net cash provided by operating
      activities", ...) missing, or present without a value in one of its statement's
      column periods. A key row a company does not print (a bank's "Total current assets")
      counts as missing: compare before and after, not against 100%;
  (c) statements failing their self-checks (`statement_checks.py`), with the reason.

The shelf: a folder of real 10-K PDFs (outside the repository; issue 51's development
companies only, never the FinanceBench measurement's).

    python3 benchmarks/pdf_real_rows.py --pdfs DIR [--show]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from pipeline.rag.answers.filings.printed.statement_checks import failed_statements  # noqa: E402
from pipeline.rag.answers.filings.printed.statement_rows import (  # noqa: E402
    StatementTable,
    statement_rows,
    statement_tables,
)
from retriever_trt.documents import load_document  # noqa: E402
from retriever_trt.documents.pdf.pdf_statements import StatementKind  # noqa: E402
from retriever_trt.indexing.chunking import chunk_document  # noqa: E402

CHUNK_TOKENS = 120
KINDS = (StatementKind.INCOME, StatementKind.BALANCE, StatementKind.CASH_FLOWS,
         StatementKind.EQUITY, StatementKind.COMPREHENSIVE)
# A label's last word that is an amount: "1,559.3", "12,645", "(1,234)", "$ 5", "2.50";
# not a year ("2022") or a day ("31").
_AMOUNT_END = re.compile(r"(?:^|\s)\$?\s?\(?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)\)?$")
_PHRASE_WORDS = frozenset({"and", "of", "or", "to"})
# Standard rows of each statement, by the words their labels start with.
KEY_ROWS: dict[StatementKind, tuple[tuple[str, str], ...]] = {
    StatementKind.INCOME: (
        ("revenue", r"^(?:total )?(?:net )?(?:operating )?(?:sales|revenues?)\b|^total revenues"
                    r"|^revenues?,? net\b|^net revenues?\b"),
        ("operating income", r"^(?:total )?operating (?:income|profit|loss)|"
                             r"^income from operations|^operating income"),
        ("net income", r"^net (?:income|earnings|loss)\b"),
        ("diluted EPS", r"\bdiluted\b"),
    ),
    StatementKind.BALANCE: (
        ("cash", r"^cash and (?:cash )?equivalents"),
        ("inventories", r"^(?:merchandise )?inventor(?:y|ies)"),
        ("total current assets", r"^total current assets"),
        ("total assets", r"^total assets$"),
        ("accounts payable", r"^(?:trade )?accounts payable|^trade payables"),
        ("total current liabilities", r"^total current liabilities"),
        ("total liabilities", r"^total liabilities$"),
        ("total equity", r"^total (?:[\w'’()]+ )*(?:equity|deficit|investment)$"),
    ),
    StatementKind.CASH_FLOWS: (
        ("operating cash flow", r"^(?:net )?cash\b(?! flows? from).*\boperati(?:ng activities|ons)"),
        ("investing cash flow", r"^(?:net )?cash\b(?! flows? from).*\binvesting activities"),
        ("financing cash flow", r"^(?:net )?cash\b(?! flows? from).*\bfinancing activities"),
        ("D&A", r"^depreciation|^amortization and depreciation"),
        ("capex", r"^(?:purchases?|acquisitions?|payments?|additions?|expenditures?)\b.*"
                  r"\b(?:property|plant|equipment|fixed assets)|^capital expenditures"),
        ("dividends paid", r"\bdividends?\b"),
    ),
}


def label_holds_amount(label: str) -> bool:
    """Whether a row label ends with an amount-like word (failure (a)); not a figure the
    label's words give ("net of tax of $(16.0), $(24.9), and $36.6", "per share: $1.46",
    "2022, $5; 2021, $11)")."""
    words = " ".join(label.split()).split(" ")
    if _AMOUNT_END.search(words[-1]) is None:
        return False
    return len(words) < 2 or not (words[-2][-1:] in ",;:" or words[-2] in _PHRASE_WORDS)


def _largest(sts: list[StatementTable]) -> list[StatementTable]:
    """The parts of the statement of this kind with the most dated figures: the primary
    statement, not a summary of it in the discussion, a guarantor's condensed one in a
    note, or quarterly data read as an income statement by its rows."""
    size: Counter[int] = Counter()
    for st in sts:
        size[st.statement] += len(statement_rows(st)) + 1
    number = max(size, key=lambda n: (size[n], -n))
    return [st for st in sts if st.statement == number]


def _key_rows(kind: StatementKind, sts: list[StatementTable], counts: Counter[str],
              notes: list[str]) -> None:
    """Count each key row of a located statement: all periods, some, or missing."""
    rows = [r for st in sts for r in statement_rows(st)]
    periods = {p for st in sts for p in st.periods if p is not None}
    labels = [lab for st in sts for lab in st.table.row_labels[st.table.n_header:]]
    for name, pattern in KEY_ROWS.get(kind, ()):
        rx = re.compile(pattern, re.I)
        got = {r.period for r in rows if rx.search(r.label)}
        verdict = "all" if got and got >= periods else "some" if got else "missing"
        counts[f"{kind.value}|{name}|{verdict}"] += 1
        if verdict != "all":
            printed = [lab for lab in labels if rx.search(" ".join(lab.split()))]
            notes.append(f"{kind.value}: {name} {verdict} (labels: {printed[:3]})")


def measure(pdf: Path, counts: Counter[str], show: bool) -> tuple[int, float]:
    """Read one PDF and count its statements into `counts`; (pages, seconds to load)."""
    start = time.perf_counter()
    doc = load_document(pdf, pdf.name)
    seconds = time.perf_counter() - start
    chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
    tables = statement_tables(chunks, doc.metadata)
    failed = failed_statements(tables)
    notes: list[str] = []
    for kind in KINDS:
        sts = [st for st in tables if st.kind is kind]
        counts[f"{kind.value}|files"] += 1
        if not sts:
            notes.append(f"{kind.value}: not located")
            continue
        counts[f"{kind.value}|located"] += 1
        main = _largest(sts)
        body = [lab for st in main for lab in st.table.row_labels[st.table.n_header:] if lab]
        amounts = [lab for lab in body if label_holds_amount(lab)]
        counts[f"{kind.value}|rows"] += len(body)
        counts[f"{kind.value}|amount in label"] += len(amounts)
        notes.extend(f"{kind.value}: amount in label {lab!r}" for lab in amounts[:4])
        _key_rows(kind, main, counts, notes)
        statements = {st.statement for st in sts}
        counts[f"{kind.value}|statements"] += len(statements)
        counts[f"{kind.value}|failed"] += sum(n in failed for n in statements)
    notes.extend(f"check failed: {f.kind.value} p.{f.pages}: {f.reason}" for f in failed.values())
    pages = doc.metadata.pages or 0
    print(f"{pdf.stem:30} {pages:5d} p {seconds:6.2f} s  {len(failed)} failed check(s)")
    for note in notes if show else ():
        print(f"{'':32}{note}")
    return pages, seconds


def report(counts: Counter[str]) -> None:
    print(f"\n{'statement':26} {'located':>9} {'rows':>6} {'amount in label':>16} "
          f"{'failed checks':>14}")
    for kind in KINDS:
        k = kind.value
        rows = counts[f"{k}|rows"] or 1
        print(f"{k:26} {counts[f'{k}|located']:4d}/{counts[f'{k}|files']:<4d} "
              f"{counts[f'{k}|rows']:6d} {counts[f'{k}|amount in label']:6d} "
              f"({counts[f'{k}|amount in label'] / rows:5.1%}) "
              f"{counts[f'{k}|failed']:5d}/{counts[f'{k}|statements']:<5d}")
    print(f"\n{'key row':40} {'all periods':>11} {'some':>5} {'missing':>8}")
    for kind, keys in KEY_ROWS.items():
        for name, _ in keys:
            c = [counts[f"{kind.value}|{name}|{v}"] for v in ("all", "some", "missing")]
            print(f"{kind.value + ': ' + name:40} {c[0]:11d} {c[1]:5d} {c[2]:8d}")
    total = [sum(counts[key] for key in counts if key.endswith(f"|{v}") and key.count("|") == 2)
             for v in ("all", "some", "missing")]
    print(f"{'all key rows':40} {total[0]:11d} {total[1]:5d} {total[2]:8d}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdfs", type=Path, nargs="+", required=True, help="folders of 10-K PDFs")
    ap.add_argument("--show", action="store_true",
                    help="print, per filing, what was missed: labels with amounts, key rows, checks")
    args = ap.parse_args()
    pdfs = sorted(p for d in args.pdfs if d.is_dir() for p in d.glob("*.pdf"))
    if not pdfs:
        print(f"pdf_real_rows: no PDFs in {', '.join(map(str, args.pdfs))}", file=sys.stderr)
        return 2
    counts: Counter[str] = Counter()
    pages, seconds = 0, 0.0
    for pdf in pdfs:
        p, s = measure(pdf, counts, args.show)
        pages, seconds = pages + p, seconds + s
    report(counts)
    print(f"reading: {len(pdfs)} PDFs, {pages} pages in {seconds:.1f} s, "
          f"{pages / max(seconds, 1e-9):.1f} pages/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
