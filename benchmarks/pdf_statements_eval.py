"""How much of a filing's primary statements its PDF reads: per statement, the share of the
HTML twin's tagged statement facts the PDF reading shows in a cell with the same row label,
period and value.

The gold: each PDF's inline-XBRL twin (same name, .html, in ../shared/data/filings) read
with `load_document`; its facts that are us-gaap, undimensioned, in USD (or USD a share) and
shown in a table the statement finder names (income statement, comprehensive income,
balance sheet, cash flows, equity), with the label of the row they are shown in. A fact is
found when a record of the PDF reading has the same label (case, punctuation and footnote
marks aside), the same period (end; a balance, or the same length in months; a column
naming only "Fiscal 2023" ends within 6 days of the tagged end: a 52/53-week year's end is
not printed) and the same value up to its sign (a statement prints "(1,234)" for a payment
the taxonomy tags as positive).

A statement of equity's facts also count where their only dimension is a member of
`StatementEquityComponentsAxis` (the component: "Retained Earnings"), and must then be
found in a record of that component: a PDF record's component (its column's header, or its
section where the components are sections) names a member when the words of the member's
name are among its words ("Additional Paid-in Capital" -> AdditionalPaidInCapitalMember),
or those of a name the member is printed as (`_PRINTED`: "Accumulated deficit" for
RetainedEarningsMember, "Total ... equity" for ParentMember); a component naming no member,
a total, or temporary equity ("Redeemable Noncontrolling Interests") stands for the
undimensioned facts. A record may so name two members ("Common stock and additional
paid-in capital"); the value must still match.

A label the twin's table prints on two rows with figures under two parents ("Marketable
securities" under "Current assets:" and "Non-current assets:") must be found under the
same parent (the twin's heading above it, whose block a total naming it ends); these facts
are also counted apart. `before` is the reading before statements were located (every
table whose caption `table_facts.is_statement` accepts, its labels as parsed); `now` the
statement records of `pipeline/rag/answers/filings/printed/statement_rows.py`, with the statements
that fail their self-check (`statement_checks.py`) counted separately.

    python3 benchmarks/pdf_statements_eval.py [--pdfs DIR ...] [--html DIR] [--misses N]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from pipeline.rag.answers.filings.printed.statement_checks import failed_statements  # noqa: E402
from pipeline.rag.answers.filings.printed.statement_rows import (  # noqa: E402
    FISCAL_WEEK_DAYS,
    SCALE_POWER,
    clean_label,
    statement_rows,
    statement_tables,
)
from pipeline.rag.answers.filings.printed.table_facts import is_statement  # noqa: E402
from pipeline.rag.answers.tables.column_periods import column_periods  # noqa: E402
from retriever_trt.documents import load_document  # noqa: E402
from retriever_trt.documents.model import Document  # noqa: E402
from retriever_trt.documents.pdf.pdf_statements import StatementKind, statement_kind  # noqa: E402
from retriever_trt.documents.tables import parse_table  # noqa: E402
from retriever_trt.indexing.chunking import chunk_document  # noqa: E402
from retriever_trt.store.document_store import Chunk  # noqa: E402

FILINGS = REPO.parent / "shared" / "data" / "filings"
CHUNK_TOKENS = 120
_WORDS = re.compile(r"[a-z0-9]+")
EQUITY_AXIS = "us-gaap:StatementEquityComponentsAxis"
_CAMEL = re.compile(r"[A-Z][a-z]+|[A-Z]+(?![a-z])")
# Names the taxonomy's usual equity members are printed under, beside their own words.
_PRINTED = {
    "RetainedEarningsMember": ("accumulated deficit", "reinvested earnings",
                               "earnings reinvested", "retained deficit"),
    "AccumulatedOtherComprehensiveIncomeMember": ("accumulated other comprehensive",),
    "TreasuryStockMember": ("treasury",),
    "TreasuryStockCommonMember": ("treasury",),
    "ParentMember": ("total",),
    "NoncontrollingInterestMember": ("noncontrolling", "non controlling"),
    "CommonStockIncludingAdditionalPaidInCapitalMember": ("common stock paid in capital",
                                                          "common stock capital in excess"),
    "AdditionalPaidInCapitalMember": ("paid in capital", "capital surplus", "capital in excess"),
    "AdditionalPaidInCapitalCommonStockMember": ("paid in capital", "capital in excess"),
}
# Words of a column that is no component: temporary equity, tagged without the axis.
_NO_COMPONENT = frozenset({"redeemable", "temporary"})
GOLD_KINDS = (StatementKind.INCOME, StatementKind.COMPREHENSIVE, StatementKind.BALANCE,
              StatementKind.CASH_FLOWS, StatementKind.EQUITY)


@dataclass(frozen=True)
class Key:
    """What a found figure must match: label words, period end, months (0: a balance), and
    the equity component's member ("" for an undimensioned fact)."""

    label: str
    end: date
    months: int
    member: str = ""
    parent: str = ""  # only for a label the statement prints under two parents


def _label(text: str) -> str:
    return " ".join(_WORDS.findall(clean_label(text).lower().replace("’", "'")))


def _member_of(f) -> str | None:
    """A fact's equity component member ("" undimensioned; None: other dimensions)."""
    if not f.dimensions:
        return ""
    if len(f.dimensions) == 1 and f.dimensions[0][0] == EQUITY_AXIS:
        return f.dimensions[0][1].split(":")[-1]
    return None


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower().replace("’", "'").replace("'s", "").replace("'", "")))


def members_named(component: str, members: set[str]) -> set[str]:
    """The members of `members` (and "" for undimensioned) a printed component names."""
    words = _words(component)
    if not words or words & _NO_COMPONENT:
        return {""}
    named = {m for m in members if m and (
        _words(" ".join(_CAMEL.findall(m.removesuffix("Member")))) <= words
        or any(_words(name) <= words for name in _PRINTED.get(m, ())))}
    return named | {""} if not named or "total" in words else named


def gold(html: Path) -> dict[StatementKind, list[tuple[Key, Decimal]]]:
    """The twin's tagged statement facts by statement kind."""
    doc = load_document(html, html.name)
    facts = {f.fact_id: f for f in doc.facts}
    out: dict[StatementKind, list[tuple[Key, Decimal]]] = {}
    seen: set[str] = set()
    for t in doc.tables():
        kind = statement_kind(t.caption)
        if kind not in GOLD_KINDS or not t.fact_ids:
            continue
        # The heading above, up to the total naming it (the HTML keeps no indentation).
        parents = parse_table(t.rows, levels=[0] * len(t.rows)).parents
        under: dict[str, set[str]] = {}
        for row, ids, parent in zip(t.rows, t.fact_ids, parents, strict=False):
            if any(ids):  # a row with figures (a heading of the same words is no second row)
                under.setdefault(_label(row[0]), set()).add(_label(parent))
        for row, ids, parent in zip(t.rows, t.fact_ids, parents, strict=False):
            label = _label(row[0])
            parent = _label(parent) if len(under.get(label, ())) > 1 else ""
            for fid in ids:
                f = facts.get(fid) if fid else None
                member = _member_of(f) if f is not None else None
                if f is None or fid in seen or member is None or (
                        member and kind is not StatementKind.EQUITY) or \
                        not f.concept.startswith("us-gaap:") or f.unit not in ("USD", "USD/shares"):
                    continue
                seen.add(fid)
                out.setdefault(kind, []).append((Key(label, f.end, f.months, member, parent),
                                                 abs(f.value)))
    return out


def _keys(label: str, period, value: Decimal, members=("",), parent: str = ""
          ) -> list[tuple[Key, Decimal]]:
    shift = FISCAL_WEEK_DAYS if period.fiscal_year else 0
    ends = [period.end + timedelta(days=d) for d in range(-shift, shift + 1)]
    lengths = ([period.months] if period.months is not None else []) + \
        ([0] if period.shows_balances() else [])
    parents = {"", _label(parent)}
    return [(Key(_label(label), end, n, m, p), abs(value)) for end in ends for n in lengths
            for m in members for p in parents]


def read_before(doc, chunks) -> set[tuple[Key, Decimal]]:
    """Figures of every table whose caption names a statement, before this change."""
    found: set[tuple[Key, Decimal]] = set()
    seen: set[str] = set()
    for chunk in chunks:
        key = chunk.sources.get("table") if chunk.table else None
        caption = chunk.sources.get("caption", "")
        if key is None or key in seen or not is_statement(caption):
            continue
        seen.add(key)
        table = parse_table(chunk.table, [caption])
        periods = column_periods(table, caption, doc.metadata)
        power = SCALE_POWER.get(table.scale, 0)
        for c in table.numeric_cells():
            p = periods[c.column_index]
            if p is not None and not c.value.percent:
                found.update(_keys(table.row_labels[c.row_index], p, c.value.number.scaleb(power)))
    return found


def read_now(doc, chunks, members: set[str]
             ) -> tuple[set[tuple[Key, Decimal]], set[tuple[Key, Decimal]], list[str]]:
    """(figures of statements that pass their checks, of those that fail, why they fail);
    `members`: the equity component members of the twin's gold facts."""
    tables = statement_tables(chunks, doc.metadata)
    failed = failed_statements(tables)
    good: set[tuple[Key, Decimal]] = set()
    bad: set[tuple[Key, Decimal]] = set()
    for st in tables:
        for r in statement_rows(st):
            named = members_named(r.component or r.section, members) \
                if r.kind is StatementKind.EQUITY else {""}
            (bad if st.statement in failed else good).update(
                _keys(r.label, r.period, r.value, named, r.section))
    return good, bad, [f"{f.kind.value} p.{f.pages}: {f.reason}" for f in failed.values()]


@dataclass(frozen=True)
class Twin:
    """A PDF filing read and chunked as the server reads it, beside its inline-XBRL twin."""

    pdf: Path
    html: Path
    doc: Document
    chunks: list[Chunk]
    seconds: float  # reading the PDF (load_document), not chunking it


def read_twins(pdfs: list[Path], html_dir: Path) -> Iterator[Twin]:
    """Each PDF with an HTML twin (the same stem) in `html_dir`, read and chunked; a PDF
    without one is named on stderr and passed over."""
    for pdf in pdfs:
        html = html_dir / f"{pdf.stem}.html"
        if not html.is_file():
            print(f"{pdf.name}: no HTML twin {html}", file=sys.stderr)
            continue
        start = time.perf_counter()
        doc = load_document(pdf, pdf.name)
        seconds = time.perf_counter() - start
        yield Twin(pdf, html, doc, chunk_document(doc, CHUNK_TOKENS, 0)[0], seconds)


def _score(stem: str, kind: StatementKind, facts: list[tuple[Key, Decimal]],
           reads: tuple[set, set, set], totals: Counter[str], misses: int) -> None:
    """Count and print one statement's facts found before, now, and in failed statements."""
    before, good, bad = reads
    n = len(facts)
    b = sum(f in before for f in facts)
    g = sum(f in good for f in facts)
    x = sum(f in bad and f not in good for f in facts)
    totals.update({f"{kind.value}:n": n, f"{kind.value}:b": b, f"{kind.value}:g": g,
                   f"{kind.value}:x": x, "n": n, "b": b, "g": g, "x": x,
                   "parent:n": sum(bool(k.parent) for k, _ in facts),
                   "parent:g": sum(bool(f[0].parent) and f in good for f in facts),
                   "plain:n": sum(kind is StatementKind.EQUITY and not k.member for k, _ in facts),
                   "plain:g": sum(kind is StatementKind.EQUITY and not f[0].member and f in good
                                  for f in facts)})
    print(f"{stem:28} {kind.value:34} {n:5d} {b / n:7.1%} {g / n:7.1%} {x:6d}")
    for key, value in [f for f in facts if f not in good][:misses]:
        under = f" under {key.parent!r}" if key.parent else ""
        print(f"{'':28} missed: {key.label!r} {key.end} {key.months}m {key.member or '-'} "
              f"{value:,f}{under}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pdfs", type=Path, nargs="+", default=[FILINGS / "pdf"],
                    help="folders of PDF filings, each with an HTML twin in --html")
    ap.add_argument("--html", type=Path, default=FILINGS)
    ap.add_argument("--misses", type=int, default=0, metavar="N",
                    help="print up to N facts a statement's reading missed, per filing")
    args = ap.parse_args()
    pdfs = sorted(p for d in args.pdfs if d.is_dir() for p in d.glob("*.pdf"))
    missing = [str(d) for d in [*args.pdfs, args.html] if not d.is_dir()]
    if missing or not pdfs:
        print(f"pdf_statements_eval: no PDFs to read ({', '.join(missing) or 'empty folders'}); "
              "give --pdfs DIR and --html DIR", file=sys.stderr)
        return 2
    totals: Counter[str] = Counter()
    pages, seconds = 0, 0.0
    print(f"{'filing':28} {'statement':34} {'facts':>5} {'before':>7} {'now':>7} {'failed':>6}")
    for twin in read_twins(pdfs, args.html):
        seconds += twin.seconds
        pages += twin.doc.metadata.pages or 0
        before = read_before(twin.doc, twin.chunks)
        facts_by_kind = gold(twin.html)
        members = {k.member for facts in facts_by_kind.values() for k, _ in facts}
        good, bad, why = read_now(twin.doc, twin.chunks, members)
        for kind, facts in facts_by_kind.items():
            _score(twin.pdf.stem, kind, facts, (before, good, bad), totals, args.misses)
        for line in why:
            print(f"{'':28} check failed: {line}")
    print()
    for kind in GOLD_KINDS:
        n = totals[f"{kind.value}:n"]
        if n:
            print(f"{'all':28} {kind.value:34} {n:5d} {totals[f'{kind.value}:b'] / n:7.1%} "
                  f"{totals[f'{kind.value}:g'] / n:7.1%} {totals[f'{kind.value}:x']:6d}")
    n = totals["n"] or 1
    print(f"{'all':28} {'all statements':34} {totals['n']:5d} {totals['b'] / n:7.1%} "
          f"{totals['g'] / n:7.1%} {totals['x']:6d}")
    print(f"statement of equity, undimensioned facts only: {totals['plain:g']} of "
          f"{totals['plain:n']}")
    print(f"labels printed under two parents: {totals['parent:g']} of {totals['parent:n']} "
          "facts found under the right parent")
    print(f"reading: {pages} pages in {seconds:.2f} s, {pages / max(seconds, 1e-9):.1f} pages/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
