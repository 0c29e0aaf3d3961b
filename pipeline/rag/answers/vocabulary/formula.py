"""A metric's formula: line items, constants and + - * /, evaluated for one period.

The vocabulary's metrics (metrics.py) build theirs from a numerator and a denominator; a
question that defines its metric ("DPO is defined as: 365 * (average accounts payable
between FY2023 and FY2024) / (FY2024 COGS + change in inventory between FY2023 and FY2024)")
is parsed into one by `parse_formula`, so the answer follows the question's definition,
not ours. An item reads its value for the period asked, its average over the period's
start and end ("average ..."), or its change over the period ("change in ..."); a year the
item names ("FY2023 revenue") reads that many years before the question's latest year.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, DivisionByZero, InvalidOperation
from enum import Enum

from pipeline.rag.answers.arithmetic import operand
from retriever_trt.documents.years import YEAR_DIGITS


class ItemMode(Enum):
    VALUE = "value"        # the item for the period (a balance at its end)
    AVERAGE = "average"    # (at the period's end + a year before) / 2
    CHANGE = "change"      # at the period's end - a year before


class Op(Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    POW = "^"   # a compound growth rate's root: "(FY2025 revenue / FY2023 revenue) ^ (1/2) - 1"


@dataclass(frozen=True)
class ItemTerm:
    # a line item's name (line_items.BY_NAME), or PHRASE + the words of one the vocabulary
    # lacks, which the filing's own labels resolve (measure_match.labelled_items)
    item: str
    mode: ItemMode = ItemMode.VALUE
    years_back: int = 0              # before the period asked
    # a phrase's vocabulary item, read where no label of the filing names the phrase: "net
    # income attributable to common stock" is the filing's row of that name, else net income
    fallback: str = ""


@dataclass(frozen=True)
class Const:
    value: Decimal


@dataclass(frozen=True)
class BinOp:
    op: Op
    left: Node
    right: Node


Node = ItemTerm | Const | BinOp
# Reads one line item: (name, years before the period asked) -> its value, None if missing.
Reader = Callable[[str, int], Decimal | None]

# A minus sign may be typeset: U+2212, or an en dash between spaces ("revenue – cost").
_OPS = {"+": Op.ADD, "plus": Op.ADD, "-": Op.SUB, "−": Op.SUB, "–": Op.SUB,
        "minus": Op.SUB, "less": Op.SUB,
        "*": Op.MUL, "×": Op.MUL, "x": Op.MUL, "times": Op.MUL, "multiplied by": Op.MUL,
        "/": Op.DIV, "÷": Op.DIV, "divided by": Op.DIV, "over": Op.DIV, "^": Op.POW,
        "**": Op.POW}
# Word operators and a hyphen count only between spaces ("year-over-year", "non-current").
_TOKEN = re.compile(r"(\(|\)|\*\*|\^|[*/×÷]|(?<=\s)(?:[-+x−–]|plus|minus|less|times|multiplied by|"
                    r"divided by|over)(?=\s))", re.I)
_NUMBER = re.compile(r"^\d[\d,]*(?:\.\d+)?$")
# Up to three words in parentheses right after a word: the operand's own ("(noncurrent)").
_WORD_ASIDE = re.compile(r"(?<=[A-Za-z'’])\s*\(\s*([A-Za-z][A-Za-z'’-]*"
                         r"(?:\s+[A-Za-z][A-Za-z'’-]*){0,2})\s*\)")
_CHANGE = re.compile(r"\b(?:change|increase|decrease)s? in\b", re.I)
_AVERAGE = re.compile(r"\baverage\b", re.I)
# A four-digit year, "FY2023" included (a header's "FY19" is not a definition's way).
_YEAR = re.compile(rf"(?<!\d)({YEAR_DIGITS})(?!\d)")


def _has(node: Node, cls: type) -> bool:
    if isinstance(node, BinOp):
        return _has(node.left, cls) or _has(node.right, cls)
    return isinstance(node, cls)


def terms(node: Node) -> list[ItemTerm]:
    """The line-item terms a formula reads, left to right."""
    if isinstance(node, BinOp):
        return terms(node.left) + terms(node.right)
    return [node] if isinstance(node, ItemTerm) else []


def items(node: Node) -> list[str]:
    """The line items a formula reads, left to right."""
    return [t.item for t in terms(node)]


def divides(node: Node) -> bool:
    """Whether the formula is a ratio of some kind (else an amount: a sum or difference)."""
    if isinstance(node, BinOp):
        return node.op in (Op.DIV, Op.MUL) or divides(node.left) or divides(node.right)
    return False


def multiplies_by_hundred(node: Node) -> bool:
    """Whether the formula states its own "* 100" (then it is a percent already)."""
    if isinstance(node, BinOp):
        if node.op is Op.MUL and Const(Decimal(100)) in (node.left, node.right):
            return True
        return multiplies_by_hundred(node.left) or multiplies_by_hundred(node.right)
    return False


# The mark of an operand named by the question's words, not by the vocabulary.
PHRASE = "phrase:"
# Names the phrase of a term: a line item (an ItemTerm of its name), or a metric's formula.
Resolver = Callable[[str], "Node | None"]


def _term(phrase: str, latest_year: int | None, resolve: Resolver) -> Node | None:
    text = phrase.strip(" :,")
    if _NUMBER.match(text):
        return Const(Decimal(text.replace(",", "")))
    mode = (ItemMode.CHANGE if _CHANGE.search(text) else
            ItemMode.AVERAGE if _AVERAGE.search(text) else ItemMode.VALUE)
    years = [int(y) for y in _YEAR.findall(text)]
    back = latest_year - max(years) if years and latest_year is not None else 0
    # The years and "change in" are harmless to `resolve`: it looks for an item's phrases.
    node = resolve(text)
    if node is None or back < 0:
        return None
    return ItemTerm(node.item, mode, back, node.fallback) if isinstance(node, ItemTerm) else node


class _Parser:
    """Recursive descent over the tokens: sum := product (+|- product)*,
    product := power (*|/ power)*, power := factor (^ factor)*,
    factor := ( sum ) | a number | an item phrase."""

    def __init__(self, tokens: list[str], latest_year: int | None, resolve: Resolver) -> None:
        self.tokens, self.at = tokens, 0
        self.latest_year, self.resolve = latest_year, resolve

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1]

    def binary(self, ops: tuple[Op, ...], operand: Callable[[], Node | None]) -> Node | None:
        left = operand()
        while left is not None and _OPS.get((self.peek() or "").lower()) in ops:
            op = _OPS[self.take().lower()]
            right = operand()
            left = None if right is None else BinOp(op, left, right)
        return left

    def sum(self) -> Node | None:
        return self.binary((Op.ADD, Op.SUB), self.product)

    def product(self) -> Node | None:
        return self.binary((Op.MUL, Op.DIV), self.power)

    def power(self) -> Node | None:
        return self.binary((Op.POW,), self.factor)

    def factor(self) -> Node | None:
        token = self.peek()
        if token is None or token == ")" or token.lower() in _OPS:
            return None
        self.take()
        if token == "(":
            inner = self.sum()
            return inner if inner is not None and self.peek() == ")" and self.take() else None
        return _term(token, self.latest_year, self.resolve)


def parse_formula(text: str, latest_year: int | None, resolve: Resolver) -> Node | None:
    """The formula a definition states, or None when a part of it names nothing `resolve`
    knows or it is not arithmetic on items. A few words in parentheses right after an
    operand's words are more of its name: "long-term debt (noncurrent)" is the noncurrent
    long-term debt, no factor of its own."""
    text = _WORD_ASIDE.sub(lambda m: f" {m.group(1)}" if _OPS.keys().isdisjoint(
        m.group(1).lower().split()) else m.group(0), text)
    tokens = [t.strip() for t in _TOKEN.split(f" {text} ") if t and t.strip()]
    parser = _Parser(tokens, latest_year, resolve)
    node = parser.sum()
    if node is None or parser.peek() is not None or not _has(node, ItemTerm):
        return None
    return node


def _read(term: ItemTerm, read: Reader) -> tuple[Decimal | None, str]:
    now = read(term.item, term.years_back)
    if term.mode is ItemMode.VALUE or now is None:
        return now, operand(now) if now is not None else term.item
    before = read(term.item, term.years_back + 1)
    if before is None:
        return None, term.item
    if term.mode is ItemMode.AVERAGE:
        return (now + before) / 2, f"(({operand(now)} + {operand(before)}) / 2)"
    return now - before, f"({operand(now)} - {operand(before)})"


def evaluate(node: Node, read: Reader) -> tuple[Decimal | None, str]:
    """The formula's value for the period `read` reads, and the formula with the values
    put in ("365 * (68960 + 62611) / 2 / ..."); None when an operand is missing or a
    divisor is zero."""
    if isinstance(node, Const):
        return node.value, operand(node.value)
    if isinstance(node, ItemTerm):
        return _read(node, read)
    left, left_text = evaluate(node.left, read)
    right, right_text = evaluate(node.right, read)
    text = f"{_group(node.left, left_text, node.op)} {node.op.value} " \
        f"{_group(node.right, right_text, node.op)}"
    if left is None or right is None:
        return None, text
    try:
        if node.op is Op.POW:  # a negative base's root is no growth rate: InvalidOperation
            return left ** right, text
        value = {Op.ADD: left + right, Op.SUB: left - right, Op.MUL: left * right}.get(node.op)
        return (left / right if value is None else value), text
    except (DivisionByZero, InvalidOperation):
        return None, text


def _group(node: Node, text: str, parent: Op) -> str:
    """A sum inside a product, or any operation inside a power, in parentheses."""
    inner = (Op.ADD, Op.SUB) if parent is not Op.POW else tuple(Op)
    return f"({text})" if isinstance(node, BinOp) and node.op in inner else text


