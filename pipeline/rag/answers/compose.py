"""The short answer of one question, in the order the answer rules run (see this package's
docstring): the filing's facts; else the retrieved tables or text, chosen between. A figure
the filing lacks is said so, and no table or sentence stands in for it. In a tagged filing
every table number is a fact, so a number the facts did not give (the measure or a
qualifier unmatched) is withheld too; a sentence's answer stays when it is about the
measure and year asked.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.rag.answers.answer_checks import PROSE_MAY_STATE, asks_forecast, asks_ratio
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer, Scope
from pipeline.rag.answers.measure_modifiers import NOT_NARROWING
from pipeline.rag.answers.named_filing import named_filing
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.periods import stated_months
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.short_answer import (
    ShortAnswer,
    choose,
    short_answer_for,
    text_short_answer,
)
from pipeline.rag.answers.text.asked_places import asks_where
from pipeline.rag.answers.text.asked_spans import STAFF_TERMS, asks_staff
from pipeline.rag.answers.text.text_amounts import IS_MONTH, MONTH
from pipeline.rag.answers.text.text_answer import TextAnswer
from pipeline.rag.answers.text.text_kind import TextKind, asks_duration

UNMATCHED = ("no tagged figure of the filing matches every qualifier the question states "
             "(its measure, period and part of the company)")


def compose(query: Query, scope: Scope, filings: FilingAnswerer, tables: Any,
            retrieved: list[Any], passages: list[Any], table_top_k: int) -> ShortAnswer:
    """The short answer from the filing's facts, else from the top `table_top_k` retrieved
    passages' tables or the passages' text (`tables`: the table source; None: no tables)."""
    short = filings.answer(query, scope)
    # a figure expected or planned is no reported period's, nor is a length of time ("over
    # how many years ... expects to recognize the costs"), nor what the company's people are
    # ("what portion of its employees are in Asia"): the facts lacking it is no answer; nor
    # is a rate or a count the facts hold only an amount of money for ("market share of
    # 16.2%" beside the vehicles sold they tag), though their reason stands if none is read
    deferred = short.missing in PROSE_MAY_STATE
    if short.short_answer is not None or (short.missing and not deferred and
                                          not _the_proses(query.text)) or \
            tables is None or not table_top_k:
        return short
    got = _from_retrieved(query, scope, filings, tables, retrieved, passages, table_top_k)
    return short if deferred and got.short_answer is None else got


def _from_retrieved(query: Query, scope: Scope, filings: FilingAnswerer, tables: Any,
                    retrieved: list[Any], passages: list[Any], table_top_k: int) -> ShortAnswer:
    """The answer from the retrieved tables or text, where the facts gave none."""
    table = short_answer_for(query.question, retrieved[:table_top_k], tables)
    store = tables.store
    text = text_short_answer(query, passages, store)
    table = choose(query.question, table, text, retrieved, store)
    if coarser_than_asked(table, query):
        return ShortAnswer(missing=f"the table prints it as {table.short_answer}%, rounded to "
                                   f"fewer decimals than the {query.decimals} asked")
    if table.short_answer is None or not filings.tagged(scope.doc_ids):
        return table
    own = _own_years(table, filings)
    if table.quote is not None and is_about(table, query, own) and \
            of_the_kind_asked(table, query, text):
        return table
    # a table's share no fact gave is withheld; a sentence about the measure asked may still
    # state the share ("our top 10 customers ... accounted for approximately 60 percent").
    # Only a share: letting a sentence stand in for any table figure no fact gave had shown
    # more wrong numbers (docs/answer_rules_by_set.md, "Tried and removed").
    # So may a count, which filings tag seldom ("647 in Europe" of a list of stores).
    # So may a sentence's percentage where a rate or share was asked and the table's figure
    # is none ("market share of 8.8%" beside a table of vehicles sold).
    share = query.question.operation is Operation.PROPORTION or \
        asks_ratio(query.text) and not of_the_kind_asked(table, query)
    # So may a sentence restating the table's figure (Rocket's "net client retention rate
    # of 97%" beside its untagged table of it).
    restated = text is not None and text.short_answer == table.short_answer
    prose = choose(query.question, ShortAnswer(), text, retrieved, store) \
        if text and (share or restated or text.kind is TextKind.COUNT) else None
    if prose is not None and prose.quote is not None and \
            is_about(prose, query, _own_years(prose, filings)) and \
            (restated or (prose.scale == "percent" if share else text.kind is TextKind.COUNT)) \
            and not coarser_than_asked(prose, query):
        return prose
    return ShortAnswer(wanted_arithmetic=table.wanted_arithmetic, missing=UNMATCHED)


def _own_years(answer: ShortAnswer, filings: FilingAnswerer) -> frozenset[int]:
    """The years of the period of the filing the answer's sentence is from."""
    info = filings.info.get(answer.cited.doc_id) if answer.cited is not None else None
    m = info.metadata if info is not None else None
    if m is None:
        return frozenset()
    return frozenset(y for y in (m.fiscal_year, m.period_end and m.period_end.year) if y)


def _the_proses(question: str) -> bool:
    """Whether the question asks what prose states and facts seldom tag: a forecast, a
    length of time, the company's people, a place ("Which countries led its organic sales
    growth in Latin America?")."""
    return asks_forecast(question) or asks_duration(question) or asks_where(question) or \
        bool(STAFF_TERMS & set(tokens(question)))


def of_the_kind_asked(answer: ShortAnswer, query: Query, text: TextAnswer | None = None) -> bool:
    """Whether a sentence's answer is of the kind the question asks: a share of a whole or a
    rate is a percentage, never an amount (JCI's "net sales of $22,952 million" is no answer to what
    share of its net sales came from services); a date asked is a date, never the sentence
    `text` found without one ("When does the pilots' agreement become amendable?" is no "We
    have approximately 3,500 pilots ...")."""
    if text is not None and answer.quote == text.sentence and text.asked is TextKind.DATE and \
            text.kind is not TextKind.DATE:
        return False
    share = (query.question.operation is Operation.PROPORTION or asks_ratio(query.text)) and \
        not _OTHER_UNIT.search(query.text)
    return not share or answer.scale == "percent" or not answer.is_number()


def coarser_than_asked(answer: ShortAnswer, query: Query) -> bool:
    """Whether a percentage read off a table is printed with fewer decimals than the question
    asks: Broadcom's printed 58% operating margin is no answer to "one decimal" (57.6)."""
    shown = answer.short_answer
    if query.decimals is None or answer.scale != "percent" or answer.answer_type != "span" or \
            not answer.is_number():
        return False
    return len(str(shown).partition(".")[2]) < query.decimals


def is_about(answer: ShortAnswer, query: Query, own: frozenset[int] = frozenset()) -> bool:
    """Whether a sentence's answer is about what the question asks: its sentence names every
    year the question does (or, naming no year, is of its filing's own period, `own`, when
    that is the year asked: a 10-Q's "share of the global toothpaste market was 40.5% on a
    year-to-date basis"), and a number comes from one that names a word of the question's
    measure too ("headcount" is not answered from a sentence about depreciation in the same
    fiscal year; a place or a name needs no such word)."""
    sentence = answer.quote or ""
    # the year of the filing asked of ("as of its 2024 10-K") dates no sentence
    asked = named_filing(query.text).rest
    number = answer.is_number()
    if not number:  # "To when did its January 2025 amendment extend ...": a date naming
        asked = _DATED.sub(" ", asked)  # the event asked of dates no sentence
    yearless = _YEAR.search(sentence) is None
    if not all(str(p.year) in sentence or yearless and p.year in own for p in query.periods
               if p.year is not None and str(p.year) in asked):
        return False
    # a number's sentence stating its period's length states the one asked: "the six months"
    # is no answer to the quarter, nor "the fourth quarter" to the year (a place or a name is
    # of no length of time)
    stated, lengths = stated_months(sentence), {p.months for p in query.periods if p.months}
    if number and stated and lengths and not stated & lengths:
        return False
    # a date, a name or a number comes only from a sentence naming what the question names
    # ("What share of its revenue came from Mars?" is no "market share of 8.8% in China")
    if not _names_what_is_named(sentence, query, every=not number):
        return False
    if not number:
        return True
    # a head count is told by the words a filing counts its people by ("36,000 employees");
    # a word any figure may have ("net", "amount") tells nothing: Mullen's "net working
    # capital" is no net carrying amount of its patents
    own = query.measure_words - NOT_NARROWING - _ANY_FIGURES or query.measure_words
    words = own | (STAFF_TERMS if asks_staff(query.text) else frozenset())
    return not query.measure_words or bool(words & set(tokens(sentence)))


# A year a sentence names.
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# A unit of a rate that is no percentage ("in EH/s" of a hash rate).
_OTHER_UNIT = re.compile(r"\bin\s+(?!percent|%)[A-Za-z$]+/[A-Za-z]+\b")
# Words of a measure that any figure may have.
_ANY_FIGURES = frozenset({"amount", "value", "carrying", "balance", "figure", "number"})
# A month and year the question writes: the date of an event it names.
_DATED = re.compile(rf"\b{MONTH}\s+(?:\d{{1,2}},\s+)?\d{{4}}", re.I)
# A word the question writes in capitals past its first: a name ("Whinstone", "China"); a
# hyphen ends it ("McGriff-related" names McGriff).
_CAPITALIZED = re.compile(r"(?<=\s)[A-Z][a-z][\w'’]*")
_BRACKETED = re.compile(r"\([^()]*\)")
# A name's plural "s" is dropped past this many letters ("Oreos"; not "Ads").
_SHORTEST_PLURAL = 3
# A possessive ending ("Riot's"); a name's own last "s" stays ("Mars").
_POSSESSIVE = re.compile(r"['’]s?$")


def _names_what_is_named(sentence: str, query: Query, every: bool = True) -> bool:
    """Whether a date or a name comes from a sentence naming what the question names besides
    its company: "In what month and year did Riot acquire Whinstone?" is not answered from a
    sentence on the acquisition of ESS Metron. `every`: all of its names, else one at least
    (a number's sentence may call the "Tax Act" its "transition tax")."""
    # an aside in brackets restates ("its pilots (Independent Pilots Association)")
    text = _BRACKETED.sub(" ", query.unnamed_text())
    names = {_POSSESSIVE.sub("", w) for w in _CAPITALIZED.findall(text) if not IS_MONTH.match(w)}
    if not names:
        return True
    # a name in the plural is said in the singular too ("zero-sugar Oreos", "Oreo Zero")
    said = [re.search(rf"\b{re.escape(_singular(w))}s?\b", sentence, re.I) is not None
            for w in names]
    return all(said) if every else any(said)


def _singular(name: str) -> str:
    return name[:-1] if len(name) > _SHORTEST_PLURAL and name.endswith("s") else name
