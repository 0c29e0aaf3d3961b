"""The name a question about the text asks for ("Who is the new joint venture partner ...?",
"From whom did PepsiCo acquire ...?", "the acquisition of which company?"): a run of
capitalized words in the sentence, its legal suffix kept ("Frontier Communications Parent,
Inc."), that the question does not already say, nearest the question's words."""

from __future__ import annotations

import re

from pipeline.rag.answers.text.span_words import Asked
from pipeline.rag.answers.text.text_amounts import MONTH, near

# What asks for a name: who, whom, or which company, partner, union ... (not "which segment
# had higher revenue": a comparison of figures, which the facts answer).
_ASKS_NAME = re.compile(
    r"^\s*(?:who|whom)\b|\b(?:from|to|by|with) whom\b|"
    r"\b(?:which|what) (?:(?!(?:is|was|are|were|do|does|did|has|have|had)\b)[\w.-]+ ){0,3}?"
    r"(?:company|companies|firm|partner|provider|bank|"
    r"lender|customer|supplier|unions?|acquirer|buyer|subsidiary|organization|agency|"
    r"counterparty|manufacturer|operator|retailer|distributor|insurer|business)\b", re.I)
_COMPARES = re.compile(r"\b(?:higher|lower|more|less|larger|smaller|greater|fewer|most|least|"
                       r"largest|smallest|biggest)\b", re.I)
_SUFFIXES = r"Inc|LLC|L\.L\.C|Ltd|Corp|Co|plc|L\.P|LP|N\.V|S\.A|AG|SE|GmbH"
_SUFFIX = re.compile(rf"^(?:{_SUFFIXES})\.?$")
# A name as a sentence writes it: capitalized words, joined by the small words names hold
# ("Communications Workers of America and the International Brotherhood of Electrical
# Workers"), with a legal suffix after a comma ("Loxo Oncology, Inc.").
_CAPITALIZED = r"(?:[A-Z][\w&'’.-]*|&)"
_NAME = re.compile(rf"{_CAPITALIZED}(?:\s+(?:(?:of|and|the|for|de|du|von|van)\s+)*{_CAPITALIZED})*"
                   rf"(?:,?\s+(?:{_SUFFIXES})\b\.?)?")
# Words a sentence opens with, or a date holds, that name nothing.
_NOT_NAMES = frozenset("""further in we our the as on during for this these additionally also
however moreover under after before at by with from since until following through while
when if it its they their a an as of to and""".split())
_MONTH = re.compile(rf"^{MONTH}$", re.I)
_POSSESSIVE = re.compile(r"['’]s$")


def asks_name(question: str) -> bool:
    return _ASKS_NAME.search(question) is not None and not _COMPARES.search(question)


def _names(sentence: str, question: str) -> tuple[list[re.Match], list[re.Match]]:
    """The sentence's names the question does not already say: those sharing no word with
    it ("Loxo Oncology, Inc."), and those sharing some ("Lilly Oncology")."""
    said = {w.lower().strip(".,") for w in re.findall(r"[\w&'’.-]+", question)}
    new, partly = [], []
    for m in _NAME.finditer(sentence):
        words = [_POSSESSIVE.sub("", w).strip(".,") for w in m.group(0).split()]
        own = [w for w in words if w.lower() not in _NOT_NAMES and not _MONTH.match(w)
               and not _SUFFIX.match(w)]
        known = [w for w in own if w.lower() in said]
        if own and len(known) < len(own):
            (partly if known else new).append(m)
    return new, partly


def name_in(asked: Asked, sentence: str) -> tuple[str, str] | None:
    """(the name, "") the question asks for in `sentence`, or None when it names none the
    question does not: a name sharing no word with the question first, then the nearest
    the question's words."""
    new, partly = _names(sentence, asked.text)
    if not new and not partly:
        return None
    m = near(sentence, new or partly, set(asked.words), ())[0]
    words = m.group(0).split()
    while words and (words[0].lower() in _NOT_NAMES or _MONTH.match(words[0])):
        words = words[1:]  # "Further", "In December": no word of the name
    name = _POSSESSIVE.sub("", " ".join(words))
    # "approved by the Board of Directors": the name as the sentence writes it
    the = "the " if sentence[:m.start()].endswith("the ") and words == m.group(0).split() \
        else ""
    return the + name, ""
