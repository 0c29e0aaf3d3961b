"""A printed table row read as a line item of the vocabulary (`line_items.py`), for filings
with no tagged facts (a PDF): "Total net sales" is revenue, "Purchases of property,
equipment and technology" capital expenditures, "Diluted" under "Earnings per share:"
diluted EPS.

A row is an item when all the content words of one of the item's names are in its label
(plural or singular, footnotes and parentheses aside) and they make up at least half of
the label's words, or the label begins with them ("Purchases of property and equipment
excluding finance leases, net of sales"). A label of one word or none that names no item
itself ("Diluted", "Total") is read with its section's ("Earnings per share:") when the
item's name holds its word ("Goodwill" under "Current assets:" is no item). A row
under "Current liabilities:" is no non-current item ("Term debt" there is no long-term
debt), and a row under an expenses section ("Operating expenses:", "Costs and expenses:") is
an expense item or none where its label holds other words: eBay's "Sales and marketing"
there is no revenue. The best cover wins; per-share items only on per-share rows, never on
share counts ("Shares used in computing earnings per share: Diluted").

"Net income attributable to Tesla common stockholders" is net income, and it is the
figure the taxonomy's NetIncomeLoss tags (the parent's share), so it is marked to win over
the consolidated "Net income" row above it; a row attributable to noncontrolling
interests is no item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from pipeline.rag.answers.vocabulary.line_items import LINE_ITEMS, PER_SHARE, LineItem

# A row is an item when the item's words make up this share of the label's words.
MIN_COVER = 0.5
# Words statements print for one another: AbbVie's "Operating earnings" and "Earnings before
# income tax expense" are operating and pretax income.
SAME_WORDS = {"earning": "income"}
# Words that put a row's figure in a measure of its own: "Other comprehensive income,
# before tax" is no pretax income, nor "Income tax related to items of other comprehensive
# income" the income tax expense.
_OWN_STATEMENT = frozenset({"comprehensive"})
# Current assets or liabilities, and an item that is their non-current kind.
# "current" in a label, unless it says non-current or that the current part is taken out
# ("Long-term debt, less current maturities", "net of current portion").
_CURRENT = re.compile(r"^(?!.*\bnon-?\s?current\b)(?!.*\b(?:less|net of|excluding)\s+(?:the\s+)?"
                      r"current\b).*\bcurrent\b", re.I)
_NONCURRENT = re.compile(r"\blong-term\b|\bnon-?current\b", re.I)
# Plurals that add "es".
_ES_PLURALS = ("xes", "sses", "ches", "shes")
_STOP = frozenset({"of", "and", "the", "for", "from", "in", "to", "by", "on", "a", "an",
                   "total", "at", "as"})
_PARENS = re.compile(r"\([^)]*\)")
_WORD = re.compile(r"[a-z0-9&]+")
_SHARE_COUNT = re.compile(r"\bshares\b", re.I)
# A rate a label states: "$0.016 per common share", "(per share — $1.94, $1.84 and ...)".
_RATE = re.compile(r"\$?\s?\d[\d,]*(?:\.\d+)?\s+per[ -](?:\w+ )?share\b|"
                   r"\bper[ -](?:\w+ )?share\W+\$\s?\d", re.I)
# A section of expense rows ("Operating expenses (1)(2):", its footnote marks and colon
# too), and an item that may stand in one (tax expense is no outflow).
EXPENSES_SECTION = re.compile(r"\bexpenses\s*(?:\(\d+\)\s*)*:?\s*$", re.I)
_EXPENSE_ITEM = re.compile(r"\bexpenses?\b")
# A cash flow statement's supplemental row of what was not paid ("Acquisitions of property
# and equipment included in liabilities", "accrued", "non-cash") is no payment.
_UNPAID = re.compile(r"\bincluded in\b|\bnon-?cash\b|\bunpaid\b|\baccrued\b|\bnot (?:yet )?paid\b",
                     re.I)
# Cash coming in: a row saying so is no payment or outflow item.
_INFLOW = re.compile(r"\b(?:received|receipts?|proceeds|collected|collections)\b", re.I)
_ATTRIBUTABLE = re.compile(r"\battributable\b.*", re.I)
_MINORITY = re.compile(r"non-?controlling|minority", re.I)


@dataclass(frozen=True)
class RowItem:
    item: LineItem
    cover: float    # the share of the label's words the item's name accounts for, 0..1
    attributable: bool = False  # "... attributable to <the company's> shareholders"


def content_words(text: str) -> list[str]:
    """Lower-case words without stop words, parentheses or plural "s", in order, each
    written as statements write it most ("earnings" as "income")."""
    text = _PARENS.sub(" ", text.lower().replace("’", "'").replace("'", ""))
    words = (_singular(w) for w in _WORD.findall(text) if w not in _STOP)
    return [SAME_WORDS.get(w, w) for w in words]


def _singular(word: str) -> str:
    if word.endswith(_ES_PLURALS):  # "taxes", "losses": not "taxe", "losse"
        return word[:-2]
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


# Names a statement row prints for an item that a question means otherwise: a row "Gross
# margin" of dollars is gross profit (Apple's, Intel's income statements), where a question's
# "gross margin" asks the percentage (`metrics.py`).
PRINTED_AS = {"gross profit": ("gross margin", "total gross margin")}
_NAMES = tuple((item, tuple(content_words(p))) for item in LINE_ITEMS
               for p in (*item.phrases, *PRINTED_AS.get(item.name, ())))


def per_share_row(label: str, section: str = "") -> bool:
    """Whether a row's figures are per share ("Diluted" under "Earnings per share:"), not
    share counts ("Shares used in computing earnings per share:") or a par value's row, nor
    a total that states its rate ("Cash dividends declared ($0.016 per common share)")."""
    both = _RATE.sub(" ", f"{label} {section}")
    return bool(PER_SHARE.search(both)) and not _SHARE_COUNT.search(both)


# Distinct (label, section) pairs remembered: a shelf of filings prints the same labels
# ("Total", "Net income") in every table, read once each.
ROW_CACHE = 65536


@lru_cache(maxsize=ROW_CACHE)
def match_row(label: str, section: str = "") -> RowItem | None:
    """The line item the row shows, or None."""
    owners = _ATTRIBUTABLE.search(label)
    if owners and _MINORITY.search(owners.group()):
        return None
    label = label[:owners.start()] if owners else label
    both = f"{label} {section}"
    per_share = per_share_row(label, section)
    words = content_words(label)
    found = _best(words, per_share) if words else None
    if found is None and len(words) <= 1:
        # The label's own word must be of the item's name: "Diluted" under "Earnings per
        # share:" is diluted EPS, but "Goodwill" under "Current assets" no current assets.
        found = _best(content_words(both), per_share, set(words))
    if found and _NONCURRENT.search(found.item.name) and _current(label, section):
        return None  # Apple's "Term debt" under "Current liabilities:" is the current part
    if found and found.item.outflow and (_INFLOW.search(label) or _UNPAID.search(label)):
        return None  # Amcor's "Dividends received from affiliated companies" is no payment
    if found and found.cover < 1 and EXPENSES_SECTION.search(section) and \
            not _expense(found.item):
        return None  # a label naming the item whole stands: a section may be read too far
    return RowItem(found.item, found.cover, True) if found and owners else found


def _expense(item: LineItem) -> bool:
    """Whether an item is an expense: an outflow, or named one (income tax expense)."""
    return item.outflow or bool(_EXPENSE_ITEM.search(item.name))


def _current(label: str, section: str) -> bool:
    """Whether a row is a current asset or liability: its label says so ("Current portion
    of long-term debt"), or its section does and the label does not say non-current (a
    section read too far down must not take "Long-term debt" in)."""
    return bool(_CURRENT.search(label)) or \
        bool(_CURRENT.search(section)) and not _NONCURRENT.search(label)


def _best(words: list[str], per_share: bool, own: frozenset[str] | set[str] = frozenset(),
          ) -> RowItem | None:
    """The item whose name covers most of `words` (and holds every word of `own`)."""
    have = set(words)
    best: RowItem | None = None
    for item, name in _NAMES:
        if not name or item.per_share != per_share or not own <= set(name) <= have or \
                have & _OWN_STATEMENT - set(name):
            continue
        cover = len(set(name)) / len(have)
        if cover < MIN_COVER and tuple(words[:len(name)]) != name:
            continue
        if best is None or cover > best.cover:
            best = RowItem(item, cover)
    return best
