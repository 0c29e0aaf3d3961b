"""The names a question gives that a filing may not know: the name it sets its figure
against ("than PG&E"), and the capitalized names among its measure's words that none of the
filing's labels holds ("WhatsApp", "Innovative Medicine"), which a filing with no figure by
that name cannot answer with its total.
"""

from __future__ import annotations

import re

from pipeline.rag.answers.filings.parts.qualifiers import NAME, SENTENCE_START, spelled_out
from pipeline.rag.answers.question_words import tokens

# "than PG&E", "than that of Intel": what a question compares its figure with, when a name.
_THAN_NAME = re.compile(r"\bthan\s+(?:(?i:the)\s+|that\s+of\s+|those\s+of\s+)?([A-Z][\w&.'’-]*)")
# Capitalized words that name a period, not a company or a part: "than FY2023", "than Q2".
_PERIOD_NAME = re.compile(r"(?:fy|q[1-4]|h[12]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
                          r"fiscal|first|second|third|fourth|last|prior|previous)", re.I)
# A possessive before a capitalized name: "Hill's Pet Nutrition".
_OWNED_NAME = re.compile(r"['\u2019]s\s+([A-Z][\w&-]*)")
# Text ending on a possessive: "Colgate's ".
_AFTER_POSSESSIVE = re.compile(r"['\u2019]s\s+$")


def compared_name(text: str) -> str | None:
    """The name a question sets its figure against: "PG&E" of "How much more did Verizon
    spend than PG&E Corporation in 2019?" (not a period: "than in 2018", "than FY2023")."""
    found = _THAN_NAME.search(text)
    return found.group(1) if found and not _PERIOD_NAME.match(found.group(1)) else None


def unknown_names(text: str, measure_words: frozenset[str], known: set[str]) -> list[str]:
    """The names the question gives that none of `known` (the filing's labels, the measure's
    phrases) holds: a capitalized word inside a sentence ("WhatsApp", "Innovative
    Medicine") among its measure words names a part of the company or a product, and a
    filing with no figure by that name has no answer for it, not its total. Acronyms
    ("EPS", "R&D"), the first word of a sentence and, after the company's possessive, the
    owner's name before a name the filing knows ("Colgate's Hill's Pet Nutrition", printed "Pet
    Nutrition") are no names."""
    out = []
    known = known | {w for spelled, acronym in spelled_out(text) if acronym in known
                     for w in spelled}
    for match in NAME.finditer(text):
        word = match.group(0)
        found = tokens(word)
        # "Colgate's Hill's Pet Nutrition": after the company's possessive, the owner's
        # name is the segment's ("Intel's Data Center" alone names Intel, no part)
        owned = _OWNED_NAME.match(text, match.end()) \
            if _AFTER_POSSESSIVE.search(text, 0, match.start()) else None
        owner = tokens(owned.group(1)) if owned else []
        if found and found[0] in measure_words and found[0] not in known and \
                not SENTENCE_START.search(text[:match.start()]) and \
                not (owner and owner[0] in known):
            out.append(word)
    return out
