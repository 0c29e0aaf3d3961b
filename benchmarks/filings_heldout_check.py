"""Re-check every gold of the held-out filings question set against the filings themselves.

    python benchmarks/filings_heldout_check.py [--questions FILE] [--filings DIR]

The held-out set (benchmarks/data/filings_heldout.jsonl) was written by hand, apart from
the rules it scores; this script shares no code with finrag nor with the generated set's
checker: it parses each filing's `ix:nonFraction` / `ix:nonNumeric` elements and
`xbrli:context`s with lxml on its own. Per record it checks:

- each fact: the element (concept, contextRef) exists; its context's period and
  dimensions are the recorded ones; its value (shown digits x 10^scale, negated by
  sign="-") equals the recorded value x 10^scale; the recorded cell is the visible table
  cell ("row label | cell text") or, outside a table, the element's shown text, and shows
  the same magnitude;
- a numeric gold: the derivation holds only the facts' values and a few constants, and
  evaluates (rounded half up to the record's decimals) to the answer;
- a compare text gold: the company the record's `pick` (higher/lower) names;
- a text (dei) gold: the shown text, a month-day for a fiscal year end, a set for a list;
- a prose gold (no fact): its quote is in the filing's visible text and holds the answer;
- an absent gold (null): no fact of the `absent` concepts with those dimensions whose
  period ends within `absent.ends_within` (anywhere, when not given), or no member whose
  name holds `absent.member_like`; the `held` facts (what the filing does hold) check as
  facts do.

Prints the number of records checked and each mismatch; exit status 1 on any.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import operator
import re
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path

from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "benchmarks" / "data" / "filings_heldout.jsonl"
_CANDIDATES = [base / "shared" / "data" / "filings" for base in (ROOT.parent, ROOT.parent.parent)]
FILINGS = next((p for p in _CANDIDATES if p.is_dir()), _CANDIDATES[0])

NS = {"ix": "http://www.xbrl.org/2013/inlineXBRL", "xbrli": "http://www.xbrl.org/2003/instance",
      "xbrldi": "http://xbrl.org/2006/xbrldi"}
XHTML = "{http://www.w3.org/1999/xhtml}"
HEADER = "{http://www.xbrl.org/2013/inlineXBRL}header"
NIL = "{http://www.w3.org/2001/XMLSchema-instance}nil"
# Constants a derivation may hold besides the facts' values: "* 100", an average's "/ 2",
# "- 1" and a two-year CAGR's "** 0.5".
CONSTANTS = {Decimal(100), Decimal(2), Decimal(1), Decimal("0.5")}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}
_LITERAL = re.compile(r"\d+(?:\.\d+)?")
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
_MONTH_DAY = re.compile(r"-*(\d{1,2})[-/](\d{1,2})")
FISCAL_YEAR_END = "dei:CurrentFiscalYearEndDate"


@dataclass(frozen=True)
class Element:
    concept: str
    context: str
    shown: str
    value: Decimal | None  # the full value (dollars, shares) for a nonFraction
    el: etree._Element


@dataclass
class Doc:
    contexts: dict[str, tuple[str, dict[str, str]]]  # id -> (period, {axis: member})
    numbers: list[Element]
    texts: list[Element]
    visible: str  # the page's text outside ix:header, squashed (_squash)

    def find(self, concept: str, context: str) -> list[Element]:
        return [e for e in self.numbers + self.texts
                if e.concept == concept and e.context == context]


def _text(el: etree._Element) -> str:
    return " ".join("".join(el.itertext()).split())


def _context(c: etree._Element) -> tuple[str, dict[str, str]]:
    instant = c.find("xbrli:period/xbrli:instant", NS)
    if instant is not None:
        period = instant.text.strip()
    else:
        period = (f"{c.find('xbrli:period/xbrli:startDate', NS).text.strip()}.."
                  f"{c.find('xbrli:period/xbrli:endDate', NS).text.strip()}")
    dims = {m.get("dimension"): _text(m) for m in c.iterfind(".//xbrldi:explicitMember", NS)}
    return period, dims


def _value(el: etree._Element) -> Decimal | None:
    if el.get(NIL) == "true":
        return None
    shown = _text(el)
    if el.get("format", "").endswith("fixed-zero"):
        return Decimal(0)
    digits = shown.replace(",", "").replace(" ", "")
    if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", digits):
        return None  # number words ("none"): never a gold here
    value = Decimal(digits).scaleb(int(el.get("scale", "0")))
    return -value if el.get("sign") == "-" else value


@cache
def parse(path: Path) -> Doc:
    # Leading whitespace is stripped: some repositories store a filing with a blank line
    # before its XML declaration, which an XML parser refuses.
    root = etree.fromstring(path.read_bytes().lstrip(), etree.XMLParser(huge_tree=True))
    contexts = {c.get("id"): _context(c) for c in root.iterfind(".//xbrli:context", NS)}
    numbers = [Element(e.get("name"), e.get("contextRef"), _text(e), _value(e), e)
               for e in root.iterfind(".//ix:nonFraction", NS)]
    texts = [Element(e.get("name"), e.get("contextRef"), _text(e), None, e)
             for e in root.iterfind(".//ix:nonNumeric", NS)]
    for header in list(root.iterfind(".//ix:header", NS)):
        header.getparent().remove(header)  # its facts keep it as their ancestor: hidden()
    return Doc(contexts, numbers, texts, _squash("".join(root.itertext())))


def hidden(el: etree._Element) -> bool:
    return any(a.tag == HEADER for a in el.iterancestors())


def cell(el: etree._Element) -> str | None:
    """'row label | cell text' of the table cell showing `el`; its shown text outside a
    table row; None in ix:hidden."""
    if hidden(el):
        return None
    td = next(el.iterancestors(f"{XHTML}td"), None)
    tr = next(el.iterancestors(f"{XHTML}tr"), None)
    if td is None or tr is None:
        return _text(el)
    cells = list(tr.iterchildren(f"{XHTML}td"))
    label = next((_text(c) for c in cells if _text(c) and c is not td), "")
    i = cells.index(td)
    text = _text(td)
    if i + 1 < len(cells) and _text(cells[i + 1]) in (")", ")%", "%"):
        text += _text(cells[i + 1])
    return f"{label} | {text}"


def evaluate(derivation: str) -> Decimal:
    """An arithmetic derivation's exact value (** only as a root: "** 0.5")."""
    def ev(node: ast.AST) -> Decimal:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return Decimal(math.pow(ev(node.left), ev(node.right)))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Decimal(ast.get_source_segment(derivation, node))
        raise ValueError(f"derivation {derivation!r}: only numbers, + - * / ** and brackets")
    return ev(ast.parse(derivation, mode="eval").body)


def rounded(value: Decimal, decimals: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def check_fact(fact: dict, doc: Doc, shown_cell: str) -> list[str]:
    where = f"{fact['concept']} {fact['contextRef']}"
    found = doc.find(fact["concept"], fact["contextRef"])
    if not found:
        return [f"{where}: no such fact"]
    period, dims = doc.contexts[fact["contextRef"]]
    problems = []
    if period != fact["period"]:
        problems.append(f"{where}: period {period} != recorded {fact['period']}")
    if dims != fact.get("dimensions", {}):
        problems.append(f"{where}: dimensions {dims} != recorded {fact.get('dimensions')}")
    if "value" in fact:
        full = Decimal(fact["value"]).scaleb(fact.get("scale", 0))
        if not any(e.value == full for e in found):
            problems.append(f"{where}: tagged {[str(e.value) for e in found]} != recorded {full}")
        shown = [e for e in found if cell(e.el) == shown_cell]
        if not shown:
            problems.append(f"{where}: not shown as {shown_cell!r} "
                            f"(shown: {[cell(e.el) for e in found]})")
        digits = _DIGITS.findall(shown_cell.split(" | ")[-1])
        if not digits or abs(Decimal(digits[-1].replace(",", ""))) != abs(Decimal(fact["value"])):
            problems.append(f"{where}: cell {shown_cell!r} does not show {fact['value']}")
    elif not any(_same_text(e.shown, shown_cell) for e in found):
        problems.append(f"{where}: shown {[e.shown for e in found]} != cell {shown_cell!r}")
    return problems


def _norm(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").split()).strip(" ,;:.").lower()


def _squash(text: str) -> str:
    """Text without whitespace, lower case: a quote matches however the page broke its lines."""
    return re.sub(r"\s+", "", text.replace("\u2019", "'")).lower()


def _same_text(a: str, b: str) -> bool:
    return _norm(a) == _norm(b)


def month_day(shown: str) -> str:
    """A fiscal year end as shown ("--09-28", "11/29", "September 28") -> "September 28"."""
    m = _MONTH_DAY.fullmatch(shown.strip())
    if m:
        return f"{MONTHS[int(m.group(1)) - 1]} {int(m.group(2))}"
    month, day = shown.strip().split()
    return f"{month.capitalize()} {int(day)}"


def check_gold(r: dict, docs: list[Doc]) -> list[str]:
    facts, answer = r["facts"], r["answer"]
    if answer is None:
        return check_absent(r, docs[0])
    if not facts:
        quote = r["cells"][0]
        problems = [] if _squash(quote) in docs[0].visible else [
            f"quote {quote!r} not in the filing's text"]
        spoken = quote.replace(",", "") if r["unit"] != "text" else quote  # a count: 164,000
        if _squash(answer) not in _squash(spoken):
            problems.append(f"answer {answer!r} not in the quote")
        return problems
    values = [Decimal(f["value"]) for f in facts if "value" in f]
    if isinstance(answer, list):
        shown = {_norm(c) for c in r["cells"]}  # a symbol listed on two exchanges counts once
        return [] if shown == {_norm(a) for a in answer} else [f"spans {sorted(shown)} != {answer}"]
    if r["unit"] == "text" and "pick" in r:
        full = [Decimal(f["value"]).scaleb(f.get("scale", 0)) for f in facts]  # across scales
        chosen = (max if r["pick"] == "higher" else min)(range(len(full)), key=full.__getitem__)
        name = r["operands"][chosen]
        return [] if name == answer else [f"the {r['pick']} is {name}, answer says {answer}"]
    if r["unit"] == "text":
        want = month_day(r["cells"][0]) if facts[0]["concept"] == FISCAL_YEAR_END else r["cells"][0]
        return [] if _same_text(want, answer) else [f"shown {want!r} != answer {answer!r}"]
    stray = {x for x in _LITERAL.findall(r["derivation"])
             if Decimal(x) not in {abs(v) for v in values} | CONSTANTS}
    if stray:
        return [f"derivation numbers {sorted(stray)} are not fact values"]
    got = rounded(evaluate(r["derivation"]), r["decimals"])
    return [] if got == Decimal(answer) else [f"derivation gives {got}, answer says {answer}"]


def check_absent(r: dict, doc: Doc) -> list[str]:
    spec = r["absent"]
    like = spec.get("member_like")
    if like:
        members = {m for _, dims in doc.contexts.values() for m in dims.values()
                   if like.lower() in m.lower()}
        return [f"members {sorted(members)} hold {like!r}"] if members else []
    hits = [e for e in doc.numbers if e.concept in spec["concepts"] and e.value is not None
            and _ends_within(doc.contexts[e.context][0], spec.get("ends_within"))
            and doc.contexts[e.context][1] == spec.get("dimensions", {})]
    return [f"{e.concept} {e.context} = {e.value} exists" for e in hits]


def _ends_within(period: str, window: str | None) -> bool:
    """Whether a period ("2024-01-01..2024-12-31" or an instant) ends inside the window
    ("2021-01-01..2021-12-31"); any period when there is no window."""
    if window is None:
        return True
    first, last = window.split("..")
    return first <= period.split("..")[-1] <= last


def check_record(r: dict, filings: Path) -> list[str]:
    doc_ids = r.get("doc_ids") or [r["doc_id"]]
    missing = [d for d in doc_ids if not (filings / d).is_file()]
    if missing:
        return [f"{r['id']}: filing {missing} not found"]
    docs = {d: parse(filings / d) for d in doc_ids}
    problems = []
    if r["facts"] and len(r["facts"]) != len(r["cells"]):
        problems.append("facts and cells differ in number")
    # A prose gold has no fact and one cell (its quote): nothing to pair.
    for fact, shown_cell in zip(r["facts"], r["cells"], strict=False):
        problems += check_fact(fact, docs[fact.get("doc_id", r["doc_id"])], shown_cell)
    for fact in r.get("held", []):
        problems += check_fact(fact, docs[r["doc_id"]], fact["cell"])
    if not problems:
        problems = check_gold(r, list(docs.values()))
    return [f"{r['id']}: {p}" for p in problems]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--filings", type=Path, default=FILINGS)
    args = ap.parse_args(argv)
    if not args.filings.is_dir():
        raise SystemExit(f"--filings {args.filings}: not a folder (the shared SEC filings live "
                         "in ../shared/data/filings)")
    if not args.questions.is_file():
        raise SystemExit(f"--questions {args.questions}: no such file")
    records = [json.loads(line) for line in args.questions.read_text("utf-8").splitlines() if line]
    problems = [p for r in records for p in check_record(r, args.filings)]
    print(f"checked {len(records)} records against {args.filings}: {len(problems)} mismatches")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
