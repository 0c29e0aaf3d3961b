"""A count or a quarter a question about the text asks for, cut from a sentence about it.

"How many full-time equivalent employees did Apple have?" asks for a number of employees:
the figure whose own words (those after it, up to the next figure or a break) name the
counted noun ("approximately | 164,000 | full-time equivalent employees"), or restate the
question ("27,100 | were engaged in research and development"); a square footage or a
percentage in the same sentence is about something else, and so is a part stated after the
count it is of ("125,000 people, of whom approximately 44,000 ..."). A count is taken only
from a sentence that names every year the question does; a sentence without it answers
nothing of this kind. A place is asked_places.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.text.asked_acts import states_act
from pipeline.rag.answers.text.span_words import Asked, same_word
from pipeline.rag.answers.text.text_amounts import (
    SCALE_NAMES,
    as_value,
    figures,
    near,
    respective,
    scale_of,
)
from retriever_trt.documents.years import YEAR_DIGITS, years_in

# "How many new stores did Home Depot open", "In how many countries are its products sold",
# "how many of Amgen's staff members worked outside the United States": the counted noun
# phrase, before the verb; after any phrase set off by a comma ("As of June 30, 2024, ...",
# "On average, ...").
_ASKS_COUNT = re.compile(
    r"^\s*(?:[^?]*?, )?(?:(?:in|across|among|over) )?"
    r"(?:(?:about|approximately|roughly|around|nearly|some|over|more than|fewer than) )?how many "
    r"([a-z][\w ,&'’-]*?) (?:did|do|does|were|are|was|is|has|have|had|will|would|"
    r"work(?:ed|s)?|serve[sd]?|operate[sd]?|ma(?:de|kes?) up|comprised?|constitute[sd]?|"
    r"remain(?:ed|s)?|h(?:e|o)ld|holds|own(?:ed|s)?)\b", re.I)
# "Tesla's headcount at year-end", "how big was Visa's workforce": a count of employees.
_ASKS_HEADCOUNT = re.compile(r"\b(?:head ?count|workforce|number of employees|employee count)\b",
                             re.I)
HEADCOUNT_NOUN = ("employee",)
_ASKS_PERCENTAGE = re.compile(r"\bwhat (?:percent(?:age)?|share|portion|proportion)\b", re.I)
# "Starting with which quarter did Intel suspend its dividend?": a fiscal quarter, as the
# sentence names it ("the fourth quarter of 2024", "Q4 2024").
_ASKS_QUARTER = re.compile(r"\b(?:which|what) (?:fiscal )?quarter\b", re.I)
_QUARTER_NAMED = re.compile(r"\b(?:(?:first|second|third|fourth) (?:fiscal )?quarter of (?:fiscal )?"
                            rf"(?:year )?{YEAR_DIGITS}|Q[1-4] (?:fiscal )?(?:FY)?{YEAR_DIGITS})\b",
                            re.I)
# "N of our employees": a part of what is counted, which answers only a question asking for
# a part ("how many of its employees ...").
_PART_OF = re.compile(r"\s*of (?:our|its|their|the)\b", re.I)
_ASKS_PART = re.compile(r"\bhow many of\b", re.I)
# A count said to be the whole ("a total of 4,169 stores across all of our segments: 2,915 in
# the United States, ..., and 647 in Europe"): no answer to how many one part has, when
# another count of the sentence restates as much of the question.
_WHOLE = re.compile(r"\b(?:total|all|combined|overall|aggregate)\b", re.I)
_WHOLE_BEFORE = 20  # the characters before a count that may say it is the whole
# A sentence counting a share of the staff counts a part of it, no head count.
_SHARE_OF_STAFF = re.compile(r"%\s+of\s+(?:our|its|their|the)\s+(?:total\s+)?"
                             r"(?:workforce|employees|head ?count)\b", re.I)
# A sentence stating the company's whole staff: "we had approximately 36,000 employees",
# "employed 470,100 associates", "our headcount was 125,665", "a total of 74,067 employees",
# "approximately 9,000 employees worldwide".
_STAFF_TOTAL = re.compile(r"\b(?:had|has|have|employ(?:s|ed)?|total(?:ed|ing)?|workforce|"
                          r"worldwide|globally|"
                          r"head ?count|consist(?:s|ed)? of)\b", re.I)
# "How many employees did Meta have", "how many associates did Home Depot employ": the whole
# staff, which only a sentence stating it answers.
_ASKS_STAFF = re.compile(r"\bhow many (?:full[- ]time (?:equivalent )?)?(?:employees|people|"
                         r"associates|workers|staff)\b[^?]*\b(?:have|had|employ|work(?:ed|s)?)\b",
                         re.I)
# The words a filing counts its people by: any of them answers a question counting another.
PEOPLE = frozenset({"employee", "people", "person", "associate", "worker", "staff",
                    "teammate", "colleague"})
# The words a sentence may state the whole staff by ("our headcount was 36,000").
STAFF_TERMS = PEOPLE | frozenset({"headcount", "head", "workforce"})
# Counted nouns that are amounts of something else, or periods: "how many shares" is a count,
# "how many dollars" or "how many years" is not.
_NOT_COUNTED = frozenset("""dollar cent percent percentage point basis time year month day
week quarter""".split())
# A count written in words ("declared four cash dividends"); "one" is too often no count,
# "our top three customers" ranks them, and "the first six months" is a period.
_NUMBER_WORD = re.compile(r"(?<!top )\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|"
                          r"twelve)\b(?![- ](?:months?|years?|quarters?|weeks?|days?)\b)", re.I)
# A short aside in brackets right after a figure: its share, a footnote mark.
_ASIDE = re.compile(r"^\s*\([^()]{1,20}\)")
# A figure's own words end at the next figure, a bracket or a clause break (not at the
# comma of a date: "at June 30, 2019"); the clause before it begins after the last one.
_OWN_END = re.compile(r",(?!\s*\d{4}\b)|[;:()]|\s-\s|\.\s|\.$")
# Of the words after a figure, this many at most are its own.
OWN_WORDS = 8
# A figure stated after what it counts: "our employee headcount worldwide was | 125,665",
# "the number of stores totaled | 2,347": the clause before it ends in a verb of being.
_STATED_AS = re.compile(r"\b(?:was|were|is|are|stood at|totall?ed|reached|numbered)\s+"
                        r"(?:(?:approximately|about|roughly|around|nearly|over|more than)\s+)?$",
                        re.I)
# A figure whose own words miss the counted noun answers when they restate this many of the
# question's words ("27,100 | were engaged in research and development").
MIN_RESTATED = 2
# A capitalized word inside a clause right before a figure makes the figure part of a name,
# no count: "our pivotal Phase 3 trial", "Tier 1"; not a clause's first word ("(1) Excludes
# 251,379 units", "Approximately 1,200 stores").
_NAMES_NUMBER = re.compile(r"(?<=[a-z] )[A-Z][a-z]+\s$")
# A word of the sentence restates one of the question's when their stems agree, or the
# shorter, of this many letters or more, opens the longer ("employ|ees"; not "head|ing"
# for "headquartered").
STEM_PREFIX = 6


def asks_headcount(text: str) -> bool:
    """A count of the company's people in other words ("headcount", "workforce")."""
    return _ASKS_HEADCOUNT.search(text) is not None


def asks_staff(text: str) -> bool:
    """A count of the company's whole staff, in any words: "headcount", "how many people did
    AT&T employ", "how many employees did Meta have"."""
    return asks_headcount(text) or _ASKS_STAFF.search(text) is not None


def counted_noun(asked: Asked) -> tuple[str, ...]:
    """The words of what a "how many" question counts ("full time equivalent employee"),
    its companies left out; () when it asks no count."""
    m = _ASKS_COUNT.search(asked.text)
    if m is None:  # "cut its workforce by what percentage" asks a percentage, no count
        return HEADCOUNT_NOUN if _ASKS_HEADCOUNT.search(asked.text) and \
            not _ASKS_PERCENTAGE.search(asked.text) else ()
    noun = tuple(w for w in tokens(m.group(1)) if w not in asked.named)
    # "how many million of receivables": an amount in a scale, not a count
    return noun if noun and noun[-1] not in _NOT_COUNTED and noun[0] not in SCALE_NAMES else ()


def asks_quarter(asked: Asked) -> bool:
    return _ASKS_QUARTER.search(asked.text) is not None


def quarter_in(asked: Asked, sentence: str) -> tuple[str, str] | None:
    """(the quarter, "") a "which quarter" question asks for in `sentence`: the one nearest
    the question's words, "quarter" itself aside ("we suspended ... dividends starting with
    the fourth quarter of 2024", not the "first quarter of 2021" of the repurchase before)."""
    found = list(_QUARTER_NAMED.finditer(sentence))
    anchors = {w for w in asked.words if not w.startswith("quarter")}
    return (near(sentence, found, anchors, ())[0].group(0), "") if found else None


def names_the_years(asked: Asked, sentence: str) -> bool:
    """Whether the sentence names every year the question does."""
    return asked.years <= set(years_in(sentence))


def restates(word: str, asked_word: str) -> bool:
    """Whether a word of a sentence restates one of the question's (`STEM_PREFIX`)."""
    return same_word(word, asked_word, STEM_PREFIX)


def _year_fit(asked: Asked, own: str, before: str) -> int:
    """1 when the figure's year is one the question asks, -1 when it is another, 0 when it
    has none: the year in its own words ("from 1,501 employees at June 30, 2018 to 1,620
    employees at June 30, 2019"), else the last before it ("In fiscal 2023, ... approximately
    80 new stores ..., and in fiscal 2024, we opened 12 new stores")."""
    years = years_in(own) or years_in(before)[-1:]
    if not asked.years or not years:
        return 0
    return 1 if set(years) & asked.years else -1


def _own_text(sentence: str, start: int, end: int) -> str:
    """The words after a figure that are its own: past a short aside in brackets ("87,000
    (54%) hourly employees"), up to `end` (the next figure), a bracket or a clause break,
    OWN_WORDS at most."""
    tail = _ASIDE.sub("", sentence[start:end], count=1)
    stop = _OWN_END.search(tail)
    return " ".join((tail[:stop.start()] if stop else tail).split()[:OWN_WORDS])


def _value(m: re.Match) -> tuple[str, str] | None:
    """A figure as a plain number and its scale; a number word as written."""
    return as_value(m) if m.re is not _NUMBER_WORD else (m.group(0), "")


def _stated_after(before: str, heads: set[str] | frozenset[str]) -> bool:
    """Whether the clause before a figure names what is counted and states the figure as
    its value ("our employee headcount worldwide was")."""
    clause = _OWN_END.split(before)[-1]
    return _STATED_AS.search(clause) is not None and \
        any(restates(w, h) for w in tokens(clause) for h in heads)


# How far before a colon the count a list breaks down names what it counts ("4,169 stores
# across all of our segments: 2,915 in the United States, ..., and 647 in Europe").
_LIST_HEAD = 60


def _listed_under(before: str, heads: set[str] | frozenset[str]) -> bool:
    """Whether a figure is an item of a list, opened by a colon, of what the words before
    the colon count: each item counts the same thing."""
    head, colon, items = before.rpartition(":")
    return bool(colon) and not re.search(r"[.;]", items) and \
        any(restates(w, h) for w in tokens(head[-_LIST_HEAD:]) for h in heads)


def count_in(asked: Asked, sentence: str) -> tuple[str, str] | None:
    """(the count, its scale) the question asks for in `sentence`; None when the sentence
    names no count of it (or not every year the question names)."""
    noun = counted_noun(asked)
    if not noun or not names_the_years(asked, sentence) or not states_act(asked.text, sentence):
        return None
    if _ASKS_HEADCOUNT.search(asked.text) and _SHARE_OF_STAFF.search(sentence):
        return None  # "58,000 employees, 34% of our total workforce, were union represented"
    if (_ASKS_HEADCOUNT.search(asked.text) or _ASKS_STAFF.search(asked.text)) and \
            not _STAFF_TOTAL.search(sentence):
        return None  # "14,000 Boeing employees leveraged our tuition assistance": some
    found = [m for m in figures(sentence) if not m.group(1) and scale_of(m) != "percent"
             and not _NAMES_NUMBER.search(sentence, 0, m.start())]
    found = sorted(found + list(_NUMBER_WORD.finditer(sentence)), key=lambda m: m.start())
    if not found:
        return None
    # "268,000 and 108,000 shares for ... 2019 and 2018, respectively": of a sentence that
    # names what is counted, the figure in the place of the year asked.
    heads = PEOPLE if noun[-1] in PEOPLE else {noun[-1]}
    paired = respective(sentence, found, asked.named_years)
    if len(paired) == 1 and any(restates(w, h) for w in tokens(sentence) for h in heads):
        return _value(paired[0])
    scored = _scored_counts(asked, sentence, found, heads, noun)
    # a figure of another thing the question names is no count of what it counts: "57.5
    # million shares ... registered by 17,160 stockholders" counts stockholders by the second
    scored = [c for c in scored if c.head or not c.other] or scored
    best = max(scored, key=lambda c: c.score, default=None)  # the first of equal scores
    if best is not None and best.whole:
        # the whole, when a part's count restates a word of the question it does not
        parts = [c for c in scored if not c.whole and c.restated - best.restated]
        best = max(parts, key=lambda c: c.score, default=best)
    return _value(best.match) if best is not None else None


# The word right after a figure (past its scale): what it is a figure of ("57.5 million
# shares").
_UNIT_WORD = re.compile(r"\s*(?:(?:thousand|million|billion)\s+)?([A-Za-z]+)", re.I)


@dataclass(frozen=True)
class _Count:
    match: re.Match
    score: int
    restated: frozenset[str]  # the question's words its own words restate
    whole: bool               # said to be the whole ("a total of", "across all of our")
    head: bool = False        # its own words name what is counted
    other: bool = False       # its own first word names another thing the question does


def _scored_counts(asked: Asked, sentence: str, found: list[re.Match],
                   heads: set[str] | frozenset[str], noun: tuple[str, ...]) -> list[_Count]:
    """Each count that its own words (or the list it closes) say is of what is asked."""
    out = []
    for m, nxt in zip(found, [*found[1:], None], strict=True):
        end = nxt.start() if nxt else len(sentence)
        text = _own_text(sentence, m.end(), end)
        if _PART_OF.match(text) and not _ASKS_PART.search(asked.text):
            continue  # "13,000 of our employees ... advanced their careers": some, not all
        own = tokens(text)
        if _part_unasked(asked, sentence, m, own):
            continue
        head = any(restates(w, h) for w in own for h in heads) or \
            _stated_after(sentence[:m.start()], heads) or _listed_under(sentence[:m.start()], heads)
        # "our backlog as of that date was | 408 aircraft": the clause stating the figure as
        # its value names what it is too
        clause = _OWN_END.split(sentence[:m.start()])[-1]
        stated = tokens(clause) if _STATED_AS.search(clause) else []
        restated = frozenset(c for c in asked.measure
                             if any(restates(w, c) for w in [*own, *stated]))
        said = sentence[max(0, m.start() - _WHOLE_BEFORE):m.start()] + text
        whole = bool(_WHOLE.search(said)) and not _WHOLE.search(asked.text)
        if head or len(restated) >= MIN_RESTATED:
            # a word beyond the counted noun says which count ("backlog" of "F-35 aircraft")
            which = len(restated - set(noun))
            unit = _UNIT_WORD.match(text)
            first = tokens(unit.group(1)) if unit else []
            other = bool(first) and any(restates(first[0], c) for c in asked.measure
                                        if c not in noun)
            out.append(_Count(m, len(restated) + which + head +
                              _year_fit(asked, text, sentence[:m.start()]), restated, whole,
                              head, other))
    return [c for c in out if c.score > 0]


# A count stated as a part of the one before it: "employed approximately 125,000 people, of
# whom approximately 44,000 were employed in the United States".
_PART_AFTER = re.compile(r"\b(?:of whom|of which|including)\s+(?:(?:approximately|about|roughly|"
                         r"nearly|over|more than|some)\s+)?$", re.I)


def _part_unasked(asked: Asked, sentence: str, m: re.Match, own: list[str]) -> bool:
    """Whether the count at `m` is a part of the count before it whose own words restate
    nothing the question asks that the sentence had not said before it."""
    if not _PART_AFTER.search(sentence[:m.start()]):
        return False
    before = tokens(sentence[:m.start()])
    return not any(any(restates(w, c) for w in own) and
                   not any(restates(w, c) for w in before) for c in asked.measure)
