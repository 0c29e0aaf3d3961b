"""Which words of a sentence restate a question: the test span_bounds.py cuts spans by.

A word restates the question when it is one of the question's content words inflected
("assumed" for "assumptions", "considers" for "considered"), a year or figure the question
names; it is new when it is a content word, year or figure the question does not have;
it is neither when it is a function word ("the", "since", "we").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.rag.answers.named_filing import named_filing
from pipeline.rag.answers.question_words import tokens
from retriever_trt.documents.years import years_in

if TYPE_CHECKING:
    from pipeline.rag.answers.query import Query

# A word restates one of the question's when their stems agree, or the shorter stem, of
# this many letters or more, opens the longer ("assum|ed" / "assumpt|ions").
STEM_MIN = 4
# Endings an inflection adds or changes, longest first. More than question_words._stem
# drops ("-ation", "-ment", "y" as "i"): here a word need only restate a question's word to
# bound a span ("assumptions" / "assumed"), where a loose match costs little; the label
# match keeps the narrower list, since "investment" is no "investing" there.
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "ies", "ied",
             "ed", "es", "e", "s")
# Words that say nothing of what a sentence is about (beyond question_words.tokens' own list).
FUNCTION_WORDS = frozenset("""since upon within into through regarding under such both each
all any other more less not no if when where while there who whose we us they them it your
you also only then thus so may can will would should could must shall might being""".split())
# A figure as written: "35", "1,027", "2.9", "11%".
_FIGURE = re.compile(r"\(?\$?(\d[\d,]*(?:\.\d+)?)%?\)?[,.;:]?")


def word_stem(word: str) -> str:
    """A word without its inflection ("averag" of "average" and "averaged")."""
    if word.endswith("y"):
        word = word[:-1] + "i"  # "rely" / "relies"
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= STEM_MIN:
            return word[:-len(suffix)]
    return word


def same_word(a: str, b: str, stem_min: int = STEM_MIN) -> bool:
    """One word inflected as the other: their stems equal, or one, of `stem_min` letters or
    more, opening the other ("assum|ed", "assumpt|ion"; not "consist", "consider|ation")."""
    x, y = sorted((word_stem(a), word_stem(b)), key=len)
    return x == y or (len(x) >= stem_min and y.startswith(x))


# Endings of a short word's inflections, which stems of STEM_MIN letters leave on ("own|ed").
_INFLECTIONS = ("s", "d", "ed", "ing")


def inflections(base: str) -> tuple[str, ...]:
    """A short word's inflections its stem leaves on ("own" -> "owns", "owned", ...)."""
    return tuple(base + e for e in _INFLECTIONS)


def is_form_of(word: str, base: str) -> bool:
    """Whether `word` is `base` inflected ("owned" of "own", "assumed" of "assumption")."""
    return same_word(word, base) or word in inflections(base)


@dataclass(frozen=True)
class Asked:
    """What the text rules read of a question, from its `Query` (parsed once): its text,
    content words (`Query.words`), the years it names (in order, as written), its other
    figures, every word it says as written, lower-cased ("into", "with"), the words of the
    companies it names and those that may name what it asks about."""

    text: str
    words: frozenset[str]
    named_years: tuple[int, ...]
    years: frozenset[int]
    figures: frozenset[str]
    said: tuple[str, ...]
    named: frozenset[str] = frozenset()  # the words of the companies it names ("home depot")
    # Its words that may name what it asks about (Query.measure_words): not its companies,
    # periods, units or the asking itself ("many", "total").
    measure: frozenset[str] = frozenset()
    unit: str | None = None  # the scale a figure is asked in ("billion" of "$ billions")

    @classmethod
    def of(cls, query: Query) -> Asked:
        text = query.text
        figures = {m.group(1).replace(",", "") for w in text.split()
                   if (m := _FIGURE.fullmatch(w))}
        said = tuple(w.strip("?,.\"“”").lower() for w in text.split())
        # the year of the filing asked of ("as of its 2024 10-K") dates no sentence
        years = tuple(years_in(named_filing(text).rest))
        companies = frozenset(w for key in query.companies for w in key.split())
        return cls(text, query.words, years, frozenset(years), frozenset(figures), said,
                   companies, query.measure_words, query.unit)

    def restates(self, word: str) -> bool | None:
        """True when `word` is one of the question's (or a year or figure it names), False
        when it is a content word, year or figure it does not have, None for a function
        word."""
        found = years_in(word)
        if found:
            return set(found) <= self.years
        figure = _FIGURE.fullmatch(word)
        if figure:
            return figure.group(1).replace(",", "") in self.figures
        content = [c for c in tokens(word) if c not in FUNCTION_WORDS]
        if not content:
            return None
        return all(any(same_word(c, a) for a in self.words) for c in content)

    def says_before(self, word: str, following: str) -> bool:
        """The question says `word` and then `following` ("entered into | with")."""
        pair = (word.lower().strip(","), following.lower().strip(",.;"))
        return pair in zip(self.said, self.said[1:], strict=False)

    def has_verb(self, word: str) -> bool:
        """The word is the question's own verb (or another of its words), inflected."""
        return any(same_word(v, a) for v in tokens(word) for a in self.words)
