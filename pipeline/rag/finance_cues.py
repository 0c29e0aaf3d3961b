"""A lexical prior for the intent stage: does a question carry any sign of finance?

A 135M model scoring "finance / small talk / out of scope" confuses general questions with
finance ones in both directions, while questions about financial reports nearly always
name a figure, a year, a currency or percent sign, or a word of accounting and reporting
vocabulary. The list below is general finance vocabulary written from the domain (word
beginnings, so "revenue" covers "revenues"; an "un" prefix is allowed); its last line, words
of a report's structure, was added after reading the questions of half a of TAT-QA dev that
had no cue ("What does the table show?", then "What was the objective of the instruments?",
"What are Original Equipment Manufacturers?"); half b, which reports the figures, was not
read for it. The line after it names what a 10-K reports besides its statements (legal
proceedings, emissions, order books, risk concentrations, executive pay), written from the
form's sections after half a's remaining no-cue questions ("What do concentrations
indicate?", "What are the scopes of emissions?").
A few finance words have a common sense too ("What is the capital of Spain?", the settings'
own out-of-scope example): those are a cue only beside a word that gives them their finance
sense, a finance word ("capital leases", "invested capital") or one of their own collocates
("working capital", "capital requirements"). The routing policy (routing.py) uses the cue
as a prior: with a cue a question
retrieves unless the model is confident it is not finance; without one it is answered
with a reply unless the model is confident it is finance.
"""

from __future__ import annotations

import re

_STEMS = """
account accru acquisit allowanc amortiz annual asset audit balanc bank benefit billion bond
budget capex capitaliz capitalis cash charg compan compensat consolidat contract cost credit currenc
customer debt declin deferr deficit depreci deriv dividend earn ebit ebitda employ equity
estimat exchang expens expenditur fair financ fiscal fund gain goodwill grant growth guarant
hedg impair incom increas decreas inflat insur intang interest inventor invest issu lease
lend liabilit liquid loan loss margin market million net obligat operat outstand payable
payment payroll pension percent portfolio premium price pricing profit provision purchas
quarter ratio receivabl reserv restat restructur retain return revenu risk royalt salar sale
securit segment share stock subsidiar surplus tax total trad turnover unearn valuat value
vest wage warrant yield rate fee bonus option spend spent thousand proportion average
change difference sum amount
table year report statement note period group
award instrument equipment
litigat lawsuit plaintiff defendant court settlement emission greenhouse carbon sustainab
order backlog shipment concentrat collateral covenant exposure retention perform
""".split()

# Word -> the beginnings of the words beside it that give it its finance sense (besides the
# finance stems above).
_SENSES = {
    "capital": """working paid venture human regulatory requirement structur adequa employ
                  redemption allocat resourc base intensive spend project""".split(),
}

_WORD = re.compile(r"\b(?:un)?(?:" + "|".join(_STEMS) + ")", re.IGNORECASE)
_FIGURE = re.compile(r"[\d$€£¥%]")
_TOKEN = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
_COLLOCATE = {word: re.compile("|".join(stems), re.IGNORECASE) for word, stems in _SENSES.items()}


def has_finance_cue(question: str) -> bool:
    """A digit, a currency or percent sign, a word of finance or reporting vocabulary, or a
    word of two senses in its finance one."""
    return bool(_FIGURE.search(question) or _WORD.search(question) or _in_finance_sense(question))


def _in_finance_sense(question: str) -> bool:
    """Whether a word of `_SENSES` stands beside a finance word or one of its collocates."""
    words = _TOKEN.findall(question)
    for i, word in enumerate(words):
        collocate = _COLLOCATE.get(_singular(word))
        if collocate is None:
            continue
        neighbours = words[max(i - 1, 0) : i] + words[i + 1 : i + 2]
        if any(_WORD.match(n) or collocate.match(n) for n in neighbours):
            return True
    return False


def _singular(word: str) -> str:
    """"Capitals", "capital's" -> "capital"."""
    word = word.lower().removesuffix("'s").removesuffix("’s")
    return word.removesuffix("s") if word.removesuffix("s") in _SENSES else word
