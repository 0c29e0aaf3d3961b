"""The words a question writes right before its measure's name that narrow the measure:
"deferred" of "deferred revenue", "accrued" of "accrued liabilities", "lease" of "lease
liabilities", "intangible" of "intangible assets", "other" of "other operating expenses".

The vocabulary's name alone ("revenue", "liabilities") is another, larger figure. So the
filing must match such a word, with a label that holds it beside the name ("Deferred
revenue") or a part of the company it names ("Data Center" revenue, a segment), or the
answer gives no number: never total revenue for deferred revenue. Words that do not narrow
the figure are no modifiers: a year, the company's name or possessive, "total", "annual",
"consolidated", the words that name periods, units or operations, "segment" (a part's cue,
read by the part rules).
"""

from __future__ import annotations

import re

from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.vocabulary.line_items import Kind, LineItem
from pipeline.rag.answers.vocabulary.phrasing import mentions, normalized

# Words before a measure's name that leave the figure whole: "net" (of "net revenue"),
# "total", "consolidated", "GAAP", "unadjusted", "reported", "worldwide", "operating" (a
# utility's "operating revenues" are its revenues), "trade" (receivables), the company's own
# figure, the year's; and the prepositions and verbs a question sets before a name
# ("calculating revenue").
NOT_NARROWING = frozenset("""net total consolidated gaap unadjusted overall company companys
group fiscal fy year yearly entire whole aggregate cumulative reported respective its their our your
last prior previous prior-year current-year same full-year ytd yoy year-over-year
what which how much segment segmental reportable division worldwide global operating
trade before after into under over up through via use using calculate calculating closing new final
revised main basic diluted""".split())
# "dividends paid on preferred shares", "dividends JCI paid to preference shareholders".
_CLASS_AFTER = re.compile(r"(?:\s+[\w&'’.]+){0,3}?\s+(?:on|to)\s+(?:the\s+|its\s+|their\s+)?"
                          r"(preferred|preference)\s+(?:stock|shares?|stockholders|shareholders)\b")
_BEFORE = re.compile(r"([\w&'’]+(?:-[\w&'’]+)*)(?:\s+|-)$")
# "Construction in progress within Marathon's property and equipment": what comes before
# "within" is a part of the measure, as a word right before its name is.
_WITHIN = re.compile(r"(?:^|[\s,;:(])((?:[\w&'’-]+\s+){0,3}?[\w&'’-]+)\s+within\s+"
                     r"(?:the\s+|its\s+|their\s+|[\w&'’.-]+(?:'s|’s|s')\s+)?$")
# So does what comes before "in" a balance ("mining rigs in property and equipment"); of a
# flow, "in" is a change's ("the increase in revenue") or a payment's ("investment in").
_IN = re.compile(r"(?:^|[\s,;:(])((?:[\w&'’-]+\s+){0,3}?[\w&'’-]+)\s+in\s+"
                 r"(?:the\s+|its\s+|their\s+|[\w&'’.-]+(?:'s|’s|s')\s+)?$")
# "property and equipment, gross": a word after the name that narrows it.
_AFTER = re.compile(r",?\s+(gross)\b")


def measure_modifiers(text: str, item: LineItem, ignore: frozenset[str] = frozenset()
                      ) -> frozenset[str]:
    """The words narrowing `item` where the question names it ("deferred" of "What was
    Apple's deferred revenue?", "non" of "non-current liabilities"); none where one of its
    mentions stands plain ("Apple's revenue"), or whose word before is in `ignore` (the
    company's names, period and unit words) or `NOT_NARROWING`."""
    low = normalized(text)
    found: set[str] = set()
    for phrase in item.phrases:
        for m in mentions(low, phrase):
            if _inside_longer(low, m, item):
                continue
            within = _part_before(low, m.start(), _WITHIN)
            if item.kind is Kind.BALANCE:
                within += _part_before(low, m.start(), _IN)
            words = [w for w in [*_words_before(low, m.start()), *within]
                     if w not in ignore and w not in NOT_NARROWING] + _class_after(low, m.end())
            if after := _AFTER.match(low, m.end()):
                words.append(after.group(1))
            if not words:
                return frozenset()
            found.update(words)
    return frozenset(found)


def _class_after(low: str, at: int) -> list[str]:
    """The class of stock a measure is narrowed to after its name ("dividends paid on
    preferred shares"): the company's preferred, never its common, the figure's whole."""
    after = _CLASS_AFTER.match(low, at)
    return tokens(after.group(1)) if after else []


def _part_before(low: str, at: int, preposition: re.Pattern[str]) -> list[str]:
    """The content words naming a part "within" (or "in") the measure named at `at`."""
    before = preposition.search(low, 0, at)
    return tokens(before.group(1)) if before else []


def _words_before(low: str, at: int) -> list[str]:
    """The content words of the word right before `at` (joined to it by a space or a
    hyphen: "non-current"), as `tokens` writes them; none for a stop word, a possessive,
    or a word holding a digit ("fy2024")."""
    before = _BEFORE.search(low, 0, at)
    raw = before.group(1) if before else ""
    if not raw or raw.endswith(("'s", "’s", "s'")) or any(c.isdigit() for c in raw):
        return []
    return tokens(raw)


def _inside_longer(low: str, m: re.Match[str], item: LineItem) -> bool:
    """Whether a mention is part of a longer name of the same item ("sales" in "net
    sales"): the longer one's own mention decides."""
    return any(len(p) > len(m.group()) and o.start() <= m.start() and m.end() <= o.end()
               for p in item.phrases for o in re.finditer(re.escape(p), low))
