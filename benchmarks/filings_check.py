"""The checks behind every gold answer of the filings question set.

An operand (a line item at a period) is verified twice: as a tagged fact (the item's
concept, no dimensions, exactly the period; duplicates of it must agree) and as the
visible table cell that shows it (in a row whose label reads as the item; the cell's
digits equal the fact's shown digits, a negative fact shows as negative, and the table's
caption states the same scale as the fact: "in millions" for scale 6). A gold answer is
its derivation (the operands' values in the asked unit put into a formula) evaluated
exactly and rounded half up to the asked decimals. `check_record` re-runs all of this for
a record of the committed jsonl against the real filings.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from filings_facts import Cell, Fact, Filing, cell_number, cell_of, parse_filing
from filings_periods import Period
from filings_vocab import LineItem, Measure

# ** for a root ("(r23 / r21) ** (1 / 2) - 1", a two-year CAGR; Decimal's power is correctly
# rounded to 28 digits).
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow}
_LITERAL = re.compile(r"-?\d+(?:\.\d+)?")
# Constants a derivation may hold besides operand values: "* 100" and an average's "/ 2".
FORMULA_CONSTANTS = {Decimal(100), Decimal(2)}


class Unverified(ValueError):
    """An operand or record the filing does not back up; the message says why."""


@dataclass(frozen=True)
class Resolved:
    item: LineItem
    period: Period
    fact: Fact
    cell: Cell

    @property
    def value(self) -> Decimal:
        """The value in the unit the table shows it in (millions for scale 6)."""
        return self.fact.value.scaleb(-self.fact.scale)


def plain(d: Decimal) -> str:
    """A Decimal without exponent or trailing zeros: 391035, 6.08, -0.5."""
    text = format(d, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def evaluate(derivation: str) -> Decimal:
    """The exact value of an arithmetic derivation ("(391035 - 383285) / 383285 * 100")."""
    def ev(node: ast.AST) -> Decimal:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return Decimal(ast.get_source_segment(derivation, node))
        raise Unverified(f"derivation {derivation!r}: only numbers, + - * / ** and brackets")
    return ev(ast.parse(derivation, mode="eval").body)


def rounded(value: Decimal, decimals: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def consistent(facts: list[Fact]) -> bool:
    """Duplicates of a fact agree up to the coarser one's rounding (760,866 thousand and
    760.9 million, as XBRL allows)."""
    def tolerance(f: Fact) -> Decimal:
        return Decimal(0) if f.decimals in ("", "INF") else Decimal(5).scaleb(-int(f.decimals) - 1)
    return all(abs(a.value - b.value) <= max(tolerance(a), tolerance(b))
               for a in facts for b in facts)


def check_cell(fact: Fact, cell: Cell, measure: Measure) -> str | None:
    """Why `cell` does not show `fact` (None when it does)."""
    shown = cell_number(cell.text)
    if shown is None:
        return f"cell {cell.text!r} shows no number"
    if abs(shown) != abs(fact.value.scaleb(-fact.scale)):
        return f"cell {cell.text!r} != fact {fact.value} at scale {fact.scale}"
    if fact.value < 0 and shown >= 0:
        return f"fact {fact.value} is negative, cell {cell.text!r} is not"
    if measure is not Measure.PER_SHARE and cell.caption_scale != fact.scale:
        return f"table caption scale {cell.caption_scale} != fact scale {fact.scale}"
    return None


def resolve(filing: Filing, item: LineItem, period: Period) -> Resolved:
    """The item's fact at `period`, as tagged and as shown; Unverified when not both."""
    why: list[str] = []
    for concept in item.concepts:
        facts = [f for f in filing.numeric(concept) if period.matches(f.context)
                 and f.value is not None]
        if not facts:
            continue
        if not consistent(facts):
            raise Unverified(f"{concept} {period.key}: duplicates disagree "
                             f"{sorted({f.value for f in facts})}")
        for fact in facts:
            cell = cell_of(fact)
            if cell is None:
                continue
            if not item.label_matches(cell.label):
                why.append(f"row {cell.label!r} is not {item.key}")
                continue
            problem = check_cell(fact, cell, item.measure)
            if problem is None:
                return Resolved(item, period, fact, cell)
            why.append(problem)
    raise Unverified(f"{item.key} {period.key}: no tagged fact shown in a matching row"
                     + (f" ({'; '.join(why[:3])})" if why else ""))


def _find(filing: Filing, concept: str, context_ref: str) -> list[Fact]:
    return [f for f in filing.numeric(concept) if f.context.id == context_ref
            and not f.context.dims and f.value is not None]


def check_numeric(record: dict, filing: Filing) -> list[str]:
    problems = []
    values = []
    for fact_ref, cell_text in zip(record["facts"], record["cells"], strict=True):
        facts = _find(filing, fact_ref["concept"], fact_ref["contextRef"])
        if not facts:
            problems.append(f"no fact {fact_ref['concept']} {fact_ref['contextRef']} without "
                            "dimensions")
            continue
        shown = [(f, c) for f in facts if (c := cell_of(f)) and c.render() == cell_text]
        if not shown:
            problems.append(f"{fact_ref['concept']} is not shown as {cell_text!r}")
            continue
        measure = Measure.PER_SHARE if "/" in facts[0].unit else Measure.MONEY
        why = [check_cell(f, c, measure) for f, c in shown]
        if None not in why:
            problems.append(why[0])
        if not consistent(facts):
            problems.append(f"{fact_ref['concept']}: duplicates disagree")
        fact = shown[0][0]
        value = fact.value.scaleb(-fact.scale)
        if plain(value) != fact_ref["value"]:
            problems.append(f"{fact_ref['concept']}: fact {plain(value)} != recorded "
                            f"{fact_ref['value']}")
        values.append(value)
    stray = {x for x in _LITERAL.findall(record["derivation"])
             if Decimal(x) not in set(values) | FORMULA_CONSTANTS}
    if stray:
        problems.append(f"derivation numbers {sorted(stray)} are not operand values")
    gold = plain(rounded(evaluate(record["derivation"]), record["decimals"]))
    if problems == [] and gold != plain(Decimal(record["answer"])):
        problems.append(f"derivation gives {gold}, answer says {record['answer']}")
    return problems


def check_text(record: dict, filing: Filing) -> list[str]:
    ref = record["facts"][0]
    found = [t for t in filing.texts if t.concept == ref["concept"]
             and t.context.id == ref["contextRef"]]
    if not found:
        return [f"no fact {ref['concept']} {ref['contextRef']}"]
    shown = {text_span(t.shown) for t in found}
    if record["answer"] not in shown or record["cells"] != [record["answer"]]:
        return [f"{ref['concept']} shows {sorted(shown)}, answer says {record['answer']!r}"]
    return []


def text_span(shown: str) -> str:
    """A cover fact's shown text as an answer span ("Arlington," -> "Arlington")."""
    return shown.strip().rstrip(",;:").strip()


def check_record(record: dict, filings_dir: Path) -> list[str]:
    """Why a question set record is not backed by its filing ([] when it is)."""
    path = filings_dir / record["doc_id"]
    if not path.is_file():
        return [f"{record['id']}: filing {path} not found"]
    filing = parse_filing(path)
    check = check_text if record["type"] == "text" else check_numeric
    return [f"{record['id']}: {p}" for p in check(record, filing)]
