"""The name a question about the text asks for ("Who is the new joint venture partner ...?",
"From whom did PepsiCo acquire ...?", "the acquisition of which company?"): a run of
capitalized words in the sentence, its legal suffix kept ("Frontier Communications Parent,
Inc."), that the question does not already say, nearest the question's words."""

from __future__ import annotations

import re

from pipeline.rag.answers.answer_checks import WHAT_NAMED
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.text.asked_places import restated_share
from pipeline.rag.answers.text.span_words import Asked
from pipeline.rag.answers.text.text_amounts import IS_MONTH, near

# A name answers from a sentence restating this share of the question's words, as a place does.
NAME_COVER = 0.5
_SUFFIXES = r"Inc|LLC|L\.L\.C|Ltd|Corp|Co|plc|L\.P|LP|N\.V|S\.A|AG|SE|GmbH"
_SUFFIX = re.compile(rf"^(?:{_SUFFIXES})\.?$")
# A name as a sentence writes it: capitalized words, joined by the small words names hold
# ("Communications Workers of America and the International Brotherhood of Electrical
# Workers"), with a legal suffix after a comma ("Loxo Oncology, Inc."). A run joined by
# "and" may hold two names ("Gilead and Mylan Pharmaceuticals"): `_apart` splits it.
_CAPITALIZED = r"(?:[A-Z][\w&'’.-]*|&)"
_NAME = re.compile(rf"{_CAPITALIZED}(?:\s+(?:(?:of|and|the|for|de|du|von|van)\s+)*{_CAPITALIZED})*"
                   rf"(?:,?\s+(?:{_SUFFIXES})\b\.?)?")
# Words a sentence opens with, or a date holds, that name nothing.
_NOT_NAMES = frozenset("""further in we our the as on during for this these additionally also
however moreover under after before at by with from since until following through while
when if it its they their a an of to and""".split())
_POSSESSIVE = re.compile(r"['’]s$")
# "Which three companies", "which competitors": several names, each one asked.
_ASKS_SEVERAL = re.compile(r"\b(?:which|what) (?:(?:two|three|four|five|six|\d+) )?(?:[\w.-]+ )?"
                           r"(?:companies|firms|partners|providers|banks|lenders|customers|"
                           r"suppliers|unions|manufacturers|competitors|distributors|retailers|"
                           r"insurers|businesses)\b", re.I)


def _said(question: str) -> set[str]:
    """The question's words as written, lower-cased, without a closing period or comma."""
    return {w.lower().strip(".,") for w in re.findall(r"[\w&'’.-]+", question)}


def _names(sentence: str, question: str) -> tuple[list[re.Match], list[re.Match]]:
    """The sentence's names the question does not already say: those sharing no word with
    it ("Loxo Oncology, Inc."), and those sharing some ("Lilly Oncology")."""
    said = _said(question)
    new, partly = [], []
    for m in _NAME.finditer(sentence):
        words = [_POSSESSIVE.sub("", w).strip(".,") for w in m.group(0).split()]
        own = [w for w in words if w.lower() not in _NOT_NAMES and not IS_MONTH.match(w)
               and not _SUFFIX.match(w)]
        known = [w for w in own if w.lower() in said]
        if own and len(known) < len(own):
            (partly if known else new).append(m)
    return new, partly


def name_in(asked: Asked, sentence: str) -> tuple[str | list[str], str] | None:
    """(the name, "") the question asks for in `sentence`, or None when it names none the
    question does not: a name sharing no word with the question first, then the nearest
    the question's words."""
    new, partly = _names(sentence, asked.text)
    # "which U.S. broadband provider": words of what the name is, not of what it did
    what = WHAT_NAMED.search(asked.text)
    kind = frozenset(tokens(what.group(0))) if what else frozenset()
    if not new and not partly or restated_share(asked, sentence, kind) < NAME_COVER:
        return None
    if _ASKS_SEVERAL.search(asked.text):  # "which three companies": each one named
        names = [n for m in sorted(new or partly, key=lambda m: m.start())
                 for n in _apart(_as_written(m, sentence), asked.text)]
        if len(names) > 1:
            return names, ""
    chosen = _as_written(near(sentence, new or partly, set(asked.words), ())[0], sentence)
    return " and ".join(_apart(chosen, asked.text)), ""


def _apart(name: str, question: str) -> list[str]:
    """The names a run joined by "and" holds, less those the question already says
    ("Gilead and Mylan Pharmaceuticals" asked of Gilead is Mylan Pharmaceuticals)."""
    said = _said(question)
    parts = re.split(r"\s+and\s+(?=(?:the\s+)?[A-Z])", name)
    kept = [p for p in parts if not all(w.lower().strip(".,") in said for w in p.split())]
    return kept or [name]


def _as_written(m: re.Match, sentence: str) -> str:
    """The name as the sentence writes it, less the words opening the run that name nothing
    ("Further", "In December") and a sentence's closing period."""
    words = m.group(0).split()
    while words and (words[0].lower() in _NOT_NAMES or IS_MONTH.match(words[0])):
        words = words[1:]  # "Further", "In December": no word of the name
    name = _POSSESSIVE.sub("", " ".join(words))
    # "approved by the Board of Directors": the name as the sentence writes it
    the = "the " if sentence[:m.start()].endswith("the ") and words == m.group(0).split() \
        else ""
    if name.endswith(".") and not _SUFFIX.match(name.split()[-1]):
        name = name[:-1]  # "Smith & Nephew." ends the sentence
    return the + name
