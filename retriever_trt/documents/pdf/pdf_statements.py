"""Which primary statement a printed table is, and which tables are one statement.

A PDF has no fact tags: a statement is found by its title ("CONSOLIDATED BALANCE SHEETS",
"Statements of Shareowners' Equity", "... (continued)") and, where the title was not read
(a table at the top of a page whose title ended the page before was lost), by its shape:
the lines only that statement prints ("Total assets" with "Total liabilities ...", "Net
cash provided by operating activities"). A statement's parts (a balance sheet's assets on
one page and its liabilities on the next, or a "(continued)" part) are the tables of one
kind that follow each other on the same or the next page: their self-checks
(`pipeline/rag/answers/filings/printed/statement_checks.py`) read them as one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum


class StatementKind(Enum):
    INCOME = "income statement"
    COMPREHENSIVE = "statement of comprehensive income"
    BALANCE = "balance sheet"
    CASH_FLOWS = "cash flow statement"
    EQUITY = "statement of equity"
    SEGMENTS = "segment note"


# "Statements of Redeemable Noncontrolling Interests and Equity": temporary equity first.
_INTERESTS = r"(?:(?:redeemable |convertible )*(?:non-?controlling|preferred|temporary) " \
             r"(?:interests?|stock|equity) and )?"
_OWNERS = r"(?:share|stock)(?:owner|holder)s?['’]?|shareowners['’]?|owners['’]?|members['’]?"
# Title patterns, the more specific first ("comprehensive income" before "income").
_TITLES: tuple[tuple[StatementKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.I)) for kind, pattern in (
        (StatementKind.COMPREHENSIVE, r"\bstatements? of (?:consolidated )?comprehensive "
                                      r"(?:income|loss|earnings)"),
        (StatementKind.CASH_FLOWS, r"\bstatements? of (?:consolidated )?cash flows?"),
        (StatementKind.BALANCE, r"\bbalance sheets?\b|\bstatements? of (?:consolidated )?"
                                r"financial (?:position|condition)"),
        # "... Stockholders' (Deficit) Equity" (Oracle), "... Common Stockholders'Investment"
        # (FedEx, the apostrophe touching the next word)
        (StatementKind.EQUITY, r"\bstatements? of (?:consolidated )?(?:changes in )?"
                               rf"{_INTERESTS}(?:common )?(?:(?:{_OWNERS}) ?)?(?:\(deficit\) )?"
                               r"(?:equity|deficit|investment)"),
        (StatementKind.INCOME, r"\bstatements? of (?:consolidated )?(?:operations|income|"
                               r"earnings)(?: and comprehensive (?:income|loss))?"),
        (StatementKind.SEGMENTS, r"\b(?:reportable |operating )?segments? (?:information|"
                                 r"results|data|revenues?|operating income)\b"),
    ))
_QUALIFIERS = re.compile(r"(?:\b(?:condensed|consolidated)\s*)+$", re.I)
# A statement's name after these words is a mention in a note's sentence, not a title.
_REFERRING = frozenset({"the", "our", "in", "on", "within", "its", "company's", "company’s",
                        "of", "to", "and"})
_CONTINUED = re.compile(r"\(\s*continued\s*\)|\bcontinued\b", re.I)
# Rows only one statement prints, each a set of patterns that must all name a row.
_SHAPES: tuple[tuple[StatementKind, tuple[re.Pattern[str], ...]], ...] = tuple(
    (kind, tuple(re.compile(p, re.I) for p in patterns)) for kind, patterns in (
        (StatementKind.BALANCE, (r"^total assets\b", r"^total liabilities\b")),
        (StatementKind.CASH_FLOWS, (r"^net cash (?:provided|used|from|\(used)", r"investing")),
        (StatementKind.INCOME, (r"^(?:total )?(?:net )?(?:sales|revenues?)\b",
                                r"^net (?:income|earnings|loss)\b", r"per share|^diluted\b")),
    ))
# Parts of one statement are on the same page or this many pages apart.
MAX_PART_GAP = 1


def statement_kind(caption: str, labels: Sequence[str] = ()) -> StatementKind | None:
    """The statement a table is, by its title, else (no title, or only "(continued)") by
    the rows it prints; None for a note's table."""
    text = " ".join(caption.split())
    for kind, pattern in _TITLES:
        for m in pattern.finditer(text):
            before = _QUALIFIERS.sub("", text[:m.start()]).split()
            if not before or before[-1].lower() not in _REFERRING:
                return kind
    if text and not _CONTINUED.search(text):
        return None  # a note's table: only a table whose title was lost is read by shape
    rows = [" ".join(label.split()) for label in labels]
    for kind, needs in _SHAPES:
        if all(any(p.search(row) for row in rows) for p in needs):
            return kind
    return None


def continued(caption: str) -> bool:
    return _CONTINUED.search(caption) is not None


@dataclass(frozen=True)
class Part:
    """A table as the statement finder sees it: its kind (or None) and its page."""

    kind: StatementKind | None
    page: int | None


def group_parts(parts: Sequence[Part]) -> list[int | None]:
    """The statement number of each part (None: no statement). Parts of one kind that
    follow each other (another kind's table in between ends a statement), on the same or
    the next page, are one statement."""
    out: list[int | None] = []
    number = -1
    last: Part | None = None
    for part in parts:
        if part.kind is None:
            out.append(None)
            continue
        near = last is not None and last.kind is part.kind and (
            part.page is None or last.page is None or 0 <= part.page - last.page <= MAX_PART_GAP)
        if not near:
            number += 1
        out.append(number)
        last = part
    return out
