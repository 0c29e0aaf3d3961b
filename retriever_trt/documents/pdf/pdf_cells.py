"""A PDF line's cells: its text runs, with the currency signs, percent signs and amounts
drawn apart joined or split as a table's cells hold them."""

from __future__ import annotations

import re

from retriever_trt.documents.pdf.pdf_layout import CURRENCY_SIGNS, Line, Segment
from retriever_trt.documents.tables import parse_value

DASHES = frozenset({"—", "–", "-", "--"})
# A word that is an amount on its own: digits with separators, maybe in parentheses or
# signed, or a dash for nil (but not "$" or "%" alone, which go with an amount).
_AMOUNT_WORD = re.compile(r"^(\(?-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\)?%?|[—–])$")
_DIGIT = re.compile(r"\d")


def is_amount(text: str) -> bool:
    """A number as tables write it, or a dash for nil ("$ —" too)."""
    if _DIGIT.search(text) is None:  # most cells are words: no number to parse
        return text.lstrip("".join(CURRENCY_SIGNS) + " ") in DASHES
    return parse_value(text) is not None


def cells(line: Line) -> list[Segment]:
    """The line's segments with a lone currency sign joined to the amount after it and a
    lone "%" to the amount before it ("$" and "391,035" are one cell)."""
    out: list[Segment] = []
    segs = [part for s in line.segments for part in _split_amounts(_without_trailing_sign(s))]
    i = 0
    while i < len(segs):
        s = segs[i]
        if s.text in CURRENCY_SIGNS and i + 1 < len(segs) and is_amount(segs[i + 1].text):
            nxt = segs[i + 1]
            s, i = Segment(f"{s.text} {nxt.text}", s.x0, nxt.x1), i + 1
        elif s.text == "%" and out and is_amount(out[-1].text):
            last = out.pop()
            s = Segment(last.text + "%", last.x0, s.x1)
        out.append(s)
        i += 1
    return out


def _split_amounts(s: Segment) -> list[Segment]:
    """Amounts of two columns drawn so close they read as one segment ("436 37,589") as
    two: joined, they would parse as one number. Their x ranges are shared out by length."""
    words = s.text.split(" ")
    if len(words) < 2 or not all(_AMOUNT_WORD.match(w) for w in words):
        return [s]
    step = (s.x1 - s.x0) / len(s.text)
    out, x = [], s.x0
    for w in words:
        out.append(Segment(w, x, x + step * len(w)))
        x += step * (len(w) + 1)
    return out


def _without_trailing_sign(s: Segment) -> Segment:
    """An amount drawn touching the next cell's currency sign ("391,035$") without it:
    the sign belongs to the amount after it, and amounts read the same without it."""
    if s.text[-1:] in CURRENCY_SIGNS and is_amount(s.text[:-1].strip()):
        return Segment(s.text[:-1].strip(), s.x0, s.x1)
    return s
