"""Two companies' operands written apart, each with its own measure, definition, part and
period: "Apple's gross margin % for the nine months ended June 29, 2024 (gross margin / total
net sales) minus NVIDIA's fiscal 2023 gross margin % (gross profit / revenue)", "Apple's
operating income for the March 2025 quarter divided by the operating income of Intel's Client
Computing Group for 2024", "(RTX capital expenditures plus Netflix purchases of property and
equipment)", "UPS's Q2 2023 revenue as a fraction of Walgreens' sales", "the ratio of General
Dynamics' 2023 diluted EPS to Colgate-Palmolive's". Each side of the operator is one company's
own question, read apart from the other's; a side that names no company, or both, leaves the
question whole.
"""

from __future__ import annotations

import re

from pipeline.rag.answers.company_names import NameSpan

# "A as a fraction of B", "A was how many times B", "A is what multiple of B" and "A as a
# percentage / share of B": A divided by B, as a ratio or in percent
# (`filings/companies.combination` reads which).
AS_FRACTION_OF = r"\bas an? (?:fraction|multiple) of\b|\bhow many times\b|\bwhat multiple of\b"
AS_PERCENT_OF = r"\bas an? (?:percentage|percent|%|proportion|share) of\b"
# The operators that set one company's figure against another's, written between them.
OPERATOR = re.compile(rf"\bminus\b|\bdivided by\b|\bplus\b|÷|{AS_FRACTION_OF}|{AS_PERCENT_OF}",
                      re.I)
# "The ratio of General Dynamics' diluted EPS to Colgate-Palmolive's": its "to" divides.
_RATIO_OF = re.compile(r"\bratio of\b", re.I)
_TO = re.compile(r"\bto\b", re.I)


def _enclosing(text: str, at: int) -> tuple[int, int]:
    """The bounds of the innermost parenthesis holding position `at`, else the whole text."""
    depth, start = 0, None
    for i in range(at - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            if depth == 0:
                start = i + 1
                break
            depth -= 1
    if start is None:
        return 0, len(text)
    close = text.find(")", at)
    return start, close if close >= 0 else len(text)


def operand_clauses(text: str, names: tuple[NameSpan, ...]) -> tuple[tuple[str, str], ...]:
    """(company key, its side of the operator) for the first operator with one company named
    on each side, the two different; () when no operator splits the question so."""
    ratio = _RATIO_OF.search(text)
    tos = [(m, ratio.end()) for m in _TO.finditer(text, ratio.end())] if ratio else []
    for m, lo in [*((m, None) for m in OPERATOR.finditer(text)), *tos]:
        start, hi = _enclosing(text, m.start())
        lo = start if lo is None else lo
        left = {n.key for n in names if lo <= n.start < m.start()}
        right = {n.key for n in names if m.end() <= n.start < hi}
        if len(left) == 1 and len(right) == 1 and left != right:
            return ((left.pop(), text[lo:m.start()]), (right.pop(), text[m.end():hi]))
    return ()
