"""How the answer rules read a question's words: lower case, plain apostrophes, asides
left out (`normalized`), and where the text names a phrase as whole words (`mentions`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

# Asides that are no part of a formula: a source, the rounding asked ("(two decimals)"), what
# a line already holds ("capital expenditures (including capitalized software)"; an
# "excluding" aside would change the figure, so it stays and the formula is not read), or how
# an average the formula names is taken ("(the average of the opening and closing balances)").
ASIDE = re.compile(r"\s*\((?:as shown|from|per|in|using|see|round\w*|\w+ decimals?|"
                   r"including|incl\.|(?:the )?average of)(?![\w.])[^()]*\)", re.I)
_MARGIN = re.compile(r"\s*%\s*margin\b", re.I)
# "Diluted earnings per common share", "per share of common stock": the vocabulary's "per
# share" (a company with one class of common stock prints either).
# "Operating cash outflow": the operating cash flow, its sign aside (`fact_answer`'s sizes).
_CASH_IN_OR_OUT = re.compile(r"\bcash (?:out|in)(flows?)\b", re.I)
_PER_COMMON_SHARE = re.compile(r"\bper (?:common|ordinary) share\b|\bper share of common stock\b",
                               re.I)


# "segment profit", "segment EBITA", "segment adjusted EBITDA": the measure a company reports
# its segments by, often a concept of its own ("Segment EBITA", "Segment Reporting Information
# Segment Profit") that no vocabulary item holds. Group 1: the word narrowing it; group 2: the
# measure's word.
SEGMENT_MEASURE = re.compile(r"\bsegment(?:al)?\s+(?:(operating|adjusted)\s+)?(profit|income|"
                             r"earnings|ebitda|ebita|ebit|results?)\b", re.I)

# A unit of dollars with its scale, as questions write it after the figure asked ("$
# millions", "$M", "USD thousands", "US$ billions"): a fragment of patterns.
DOLLAR_SCALE = r"(?:\busd |\bus\$ ?|\$ ?)(?:thousands|millions|billions|mm|m|bn)\b"

# "property, plant, and equipment" names what "property, plant and equipment" does.
_OXFORD_COMMA = re.compile(r",\s+(and|or)\b", re.I)


# "Non-current" as the taxonomy's labels write it ("Long Term Debt Noncurrent"): one word, so
# "non-current liabilities" names no "current liabilities".
_NONCURRENT = re.compile(r"\bnon[- ]current\b", re.I)


def noncurrent_joined(text: str) -> str:
    return _NONCURRENT.sub("noncurrent", text)


# The other sign a statement's row names in brackets ("Operating (loss) earnings", "Income
# (loss) before income taxes", "Net (loss) income"): the line's name is the words around it.
_SIGN_ASIDE = re.compile(r"\s*\((?:loss|losses|income|gain|gains|expense|benefit|earnings|"
                         r"deficit|profit)\)(?=\s)", re.I)


def normalized(text: str) -> str:
    """Lower case, plain apostrophes, one space; "EBITDA % margin" as "EBITDA margin", and
    asides such as "(as shown in the cash flow statement)" or a row's other sign ("(loss)")
    left out."""
    text = _SIGN_ASIDE.sub("", ASIDE.sub("", text))
    text = _PER_COMMON_SHARE.sub("per share", _MARGIN.sub(" margin", text))
    text = _OXFORD_COMMA.sub(r" \1", _CASH_IN_OR_OUT.sub(r"cash \1", noncurrent_joined(text)))
    return " ".join(text.lower().replace("’", "'").split())


def mentions(low: str, phrase: str) -> Iterator[re.Match[str]]:
    """Each place the (normalized) text names `phrase` as whole words."""
    return re.finditer(rf"(?<![\w&]){re.escape(phrase)}(?![\w&])", low)
