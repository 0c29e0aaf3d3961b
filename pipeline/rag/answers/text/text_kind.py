"""What a question about a filing's text asks for: the kind of span the text rules cut from
the sentence answering it (an amount, a date, a place, a count, a cause...), read from the
question's words alone."""

from __future__ import annotations

import re
from enum import StrEnum

from pipeline.rag.answers.answer_checks import asks_name
from pipeline.rag.answers.text.asked_places import asks_place
from pipeline.rag.answers.text.asked_spans import asks_quarter, counted_noun
from pipeline.rag.answers.text.span_words import Asked
from pipeline.rag.answers.text.text_amounts import RESPECTIVELY


class TextKind(StrEnum):
    """The kind of a text extract, asked or found (a str: the answer's JSON and logs show it)."""

    TABLE = "table"                  # what a table shows, from the sentence introducing it
    PLACE = "place"
    DURATION = "duration"
    QUARTER = "quarter"
    DATE = "date"
    NAME = "name"                    # a company, a partner, a union: a capitalized name
    COUNT = "count"
    AMOUNT = "amount"                # a figure with its unit or scale
    STATED_AMOUNT = "stated_amount"  # "what was X in 2019": an amount only when one is stated
    REASON = "reason"
    SENTENCE = "sentence"            # no span: the sentence (or the clause) answering


# What the question asks for.
_ASKS_DURATION = re.compile(r"^\s*(?:(?:for )?how long|over (?:what|which) (?:period|duration)|"
                            r"(?:over |within |in |for )?how many (?:years|months|days)|"
                            r"what (?:is|was) the (?:expected |remaining )?(?:term|period|life)|"
                            r"what (?:term|length of time|duration))\b", re.I)
_ASKS_DATE = re.compile(r"^\s*(?:(?:until |till |since |by |to |through )?when|"
                        r"(?:in|on) (?:which|what) (?:year|period|month|date|day)|"
                        r"what (?:is|was) the (?:\w+ )?(?:date|maturity))\b|"
                        r"\b(?:on|by|through|until|till) what (?:date|day)\b", re.I)
# "As of December 31, 2019, what was ...", "Of the 50 restaurants acquired, how many ...":
# a leading phrase.
_LEAD = r"^\s*(?:(?:as of|as at|at|in|for|during|of) [^?]*?, )?"
_ASKS_AMOUNT = re.compile(
    _LEAD + r"(?:(?:by )?how much|how many|how (?:large|big)\b|"
    r"(?:what|which)(?: [\w-]+){0,3}? (?:cost|charge|amount|payment|expense|fee|loss|gain)s? "
    r"(?:did|does|do)\b|(?:what|which) (?:is|was|were|are|will be)(?: the)?(?: \w+){0,2}? "
    r"(?:amount|value|total|number|cost|price|rate|percentage|balance|sum|expense|fee|"
    r"revenue|income|loss|gain|liabilit\w+|asset|cash|debt|obligation|guarantee|charge))", re.I)
# "What was the increase in X?": the amount of the change (checked after a reason: "What
# was the increase driven by?" asks for its cause).
_ASKS_CHANGE = re.compile(_LEAD + r"(?:what|which) (?:is|was|were|are)(?: the)?(?: \w+){0,2}? "
                          r"(?:increases?|decreases?|declines?|changes?|growth|reductions?|"
                          r"rises?)\b", re.I)
# A question ending on its preposition ("What were the investments mainly engaged in?")
# asks for that preposition's object, a phrase: not for an amount the sentence states.
_ENDS_ON_PREPOSITION = re.compile(r"\b(?:in|of|to|on|by|for|from|with|as)\s*\?\s*$", re.I)
# "Cut its workforce by roughly what percentage": a figure asked, wherever the words stand.
# "What percentage ...", "What effective tax rate does it expect": a percentage asked.
_WHAT_PERCENT = re.compile(r"\bwhat percent(?:age)?\b|\bwhat (?:[\w-]+ ){0,3}?rate\b", re.I)
# "What share of its employees are based in the US (approx. %)?", "What portion ... (%)": a
# percentage asked (after a reason: "Why did margin fall 2%?" asks why).
_ASKS_A_SHARE = re.compile(r"%|\bwhat (?:share|portion|proportion|fraction)\b", re.I)
_ASKS_REASON = re.compile(r"^\s*why\b|\b(?:reasons?|caused?|led to|lead to|drove|driven|"
                          r"drivers?|attributable|due to|result of)\b", re.I)
# "What was the X in 2019?", "What were the X and Y, respectively?": an amount when the
# sentence states one with its currency or unit, else the sentence.
_ASKS_STATED = re.compile(_LEAD + r"(?:what|how much) (?:is|was|were|are|"
                          r"did)\b", re.I)
# "What does the table show?", "What financial information does the table represent?":
# what the report's sentence introducing its table says the table shows.
_ASKS_TABLE = re.compile(r"^\s*what (?:[\w-]+ ){0,3}(?:does|do) the (?:following )?table(?: below| above)? "
                         r"(?:show|represent|present|summari[sz]e|provide|display|illustrate|"
                         r"depict|describe|set forth|detail)s?\b", re.I)


def asks_duration(question: str) -> bool:
    """A length of time ("Over how many years ...", "What term do its agreements have?"),
    which prose states where no fact does."""
    return _ASKS_DURATION.search(question) is not None


def kind_of(asked: Asked) -> TextKind:
    """What a question about the text asks for."""
    question = asked.text
    if _ASKS_TABLE.search(question):
        return TextKind.TABLE
    if asks_place(asked):
        return TextKind.PLACE
    if asks_duration(question):
        return TextKind.DURATION
    if asks_quarter(asked):
        return TextKind.QUARTER
    if _ASKS_DATE.search(question):
        return TextKind.DATE
    if asks_name(question):
        return TextKind.NAME
    if counted_noun(asked):
        return TextKind.COUNT
    # "cut its workforce by roughly what percentage", "... in $ billions": a figure asked
    if _ASKS_AMOUNT.search(question) or _WHAT_PERCENT.search(question) or asked.unit:
        return TextKind.AMOUNT
    if _ASKS_REASON.search(question):
        return TextKind.REASON
    if _ASKS_CHANGE.search(question) or _ASKS_A_SHARE.search(question):
        return TextKind.AMOUNT
    if _ASKS_STATED.search(question) and (asked.named_years or RESPECTIVELY.search(question)) \
            and not _ENDS_ON_PREPOSITION.search(question):
        return TextKind.STATED_AMOUNT
    return TextKind.SENTENCE
