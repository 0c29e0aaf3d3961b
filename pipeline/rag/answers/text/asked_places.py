"""A place a question about the text asks for, cut from a sentence about it.

"Where is Apple headquartered?" asks for a place: the "City, State" after a preposition in a
sentence restating the question ("headquarters is located in | Cupertino, California");
"which countries" asks for the countries' names the sentence lists. A place is taken only
from a sentence restating enough of the question and naming every year it does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.rag.answers.filings.parts.place_codes import COUNTRIES, STATES_AND_PROVINCES
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.text.asked_spans import names_the_years, restates
from pipeline.rag.answers.text.span_words import Asked
from pipeline.rag.answers.text.text_amounts import near

# "Where is X headquartered?", "In which city are its principal executive offices?", "Near
# which city is its headquarters?"; not "Where are personnel expenses included?" (a line
# of a statement, a note).
_ASKS_PLACE = re.compile(r"^\s*(?:[^,?]*,\s*)?(?:where\b(?!.*\b(?:included|recorded|recognized|"
                         r"presented|reported|classified|disclosed|reflected|shown)\b)|"
                         r"(?:(?:in|near|at|to) )?(?:which|what) (?:\w+ )?"
                         r"(?:city|town|state|country|countries|site|facility|plant|campus)\b)",
                         re.I)
# "Which country ...", "In which European countries ...": the country's (or a state's) name
# alone, not "City, State"; the plural asks every one the sentence lists.
_ASKS_REGION = re.compile(r"\b(?:which|what) (?:\w+ )?(country|countries|state|states)\b", re.I)
_WH_WORDS = frozenset({"where", "which", "what", "city", "town", "state", "country", "location",
                       "countries", "states", "site", "facility", "plant", "campus"})
# A place: "City, State" or "City, ST" after a preposition ("located in | Santa Clara,
# California", "near | Beaverton, Oregon").
_PLACE = re.compile(r"(?:^|\b(?:in|at|near)\s+(?:the\s+)?)((?:[A-Z][\w.'’-]*\s){0,3}?[A-Z][\w.'’-]*,\s+"
                    r"(?:[A-Z][a-z]+(?:\s[A-Z][a-z]+)?|[A-Z]{2})\b)")
# How sentences write some countries besides their short names.
_COUNTRY_ABBREVIATIONS = ("U.S.", "U.K.", "USA", "UK", "United States", "Mainland China")


def _any_of(names: Sequence[str]) -> re.Pattern[str]:
    longest_first = sorted(map(re.escape, names), key=len, reverse=True)
    return re.compile(rf"(?<![\w.])(?:{'|'.join(longest_first)})(?!\w)")


_REGION_NAMES = {"country": _any_of([*COUNTRIES.values(), *_COUNTRY_ABBREVIATIONS]),
                 "state": _any_of(list(STATES_AND_PROVINCES.values()))}
_SINGULAR = {"countries": "country", "states": "state"}
# What joins the places of one list: "Germany, Ghana, ..., the UK and the United States".
_LISTED = re.compile(r",?\s+(?:and\s+)?(?:the\s+)?|,\s*(?:and\s+)?(?:the\s+)?")
_CONTINENTS = ("Europe", "Asia", "Africa", "North America", "South America", "Latin America",
               "Asia Pacific", "the Middle East", "Oceania")
_ANY_REGION = _any_of([*COUNTRIES.values(), *_COUNTRY_ABBREVIATIONS,
                       *STATES_AND_PROVINCES.values(), *_CONTINENTS])
_AFTER_PREPOSITION = re.compile(r"\b(?:in|at|near|from)\s+(?:the\s+)?$", re.I)
# A capitalized word before a place's name makes it part of another name ("New | Jersey").
_IN_A_NAME = re.compile(r"[A-Z][\w.'’-]*\s$")
# A place answers from a sentence restating this share of the question's words.
PLACE_COVER = 0.6


def asks_place(asked: Asked) -> bool:
    return asks_where(asked.text)


def asks_where(question: str) -> bool:
    """A place asked: "where", "which city", "in which countries"."""
    return _ASKS_PLACE.search(question) is not None


def restated_share(asked: Asked, sentence: str, besides: frozenset[str] = frozenset()) -> float:
    """The share of the question's words (what it asks about, not "where" or "which city",
    nor `besides`) that the sentence restates."""
    content = [w for w in asked.measure if w not in _WH_WORDS | besides]
    said = tokens(sentence)
    return sum(any(restates(w, c) for w in said) for c in content) / (len(content) or 1)


def place_in(asked: Asked, sentence: str) -> tuple[str | list[str], str] | None:
    """(the place, "") a "where" question asks for in `sentence`: the first "City, State"
    after the question's words; None when the sentence restates too little of the question
    (or names not every year it does) or names no place."""
    if restated_share(asked, sentence) < PLACE_COVER or not names_the_years(asked, sentence):
        return None
    region = _ASKS_REGION.search(asked.text)
    if region is not None:
        return _regions_in(asked, sentence, region.group(1).lower())
    at = _asked_at(asked, sentence.lower())
    # "in Asia, Australia, Canada": a list of regions, no "City, State"
    places = [m for m in _PLACE.finditer(sentence)
              if not _ANY_REGION.fullmatch(m.group(1).split(",")[0])]
    after = [m for m in places if m.start() >= at] or places
    if after:
        return after[0].group(1), ""
    # no "City, State": a country, state or continent after a preposition ("assembled in
    # the U.S.", "primarily in Europe")
    named = [m for m in _ANY_REGION.finditer(sentence)
             if _AFTER_PREPOSITION.search(sentence, 0, m.start())
             and m.group(0).lower() not in asked.text.lower()]
    named = [m for m in named if m.start() >= at] or named
    return (named[0].group(0), "") if named else None


def _asked_at(asked: Asked, low: str) -> int:
    """Where the sentence starts saying what the question asks the place of: at the first of
    the question's words it says only once ("the primary research and development center for
    Oral Care ... is located in New Jersey, ... for Pet Nutrition products is located in
    Kansas": "pet"), else at the first of its words it says."""
    said = [w for w in asked.measure - _WH_WORDS if w in low]
    once = [w for w in said if low.count(w) == 1]
    return min((low.find(w) for w in once or said), default=0)


def _regions_in(asked: Asked, sentence: str, asked_for: str) -> tuple[str | list[str], str] | None:
    """The country (or state) the question asks for that the sentence names and the question
    does not: the one nearest the question's words, or, asked in the plural, each in order."""
    plural = asked_for in _SINGULAR
    names = _REGION_NAMES[_SINGULAR.get(asked_for, asked_for)]
    found = [m for m in names.finditer(sentence)
             if not _IN_A_NAME.search(sentence, 0, m.start())
             and m.group(0).lower() not in asked.text.lower()]
    if not found:
        return None
    if not plural:
        return near(sentence, found, set(asked.words), ())[0].group(0), ""
    # the list nearest the question's words: "defined benefit schemes in Germany, ..., the
    # United States and ... indemnity plans in Greece and Turkey"
    runs: list[list[re.Match]] = []
    for m in found:
        if runs and _LISTED.fullmatch(sentence, runs[-1][-1].end(), m.start()):
            runs[-1].append(m)
        else:
            runs.append([m])
    first = near(sentence, [run[0] for run in runs], set(asked.words), ())[0]
    listed = list(dict.fromkeys(m.group(0) for run in runs if run[0] is first for m in run))
    return (listed if len(listed) > 1 else listed[0]), ""
