"""Questions about several companies: "Which had higher revenue in fiscal 2024, Apple or
Meta?", "How much more net income did Apple have than Meta?", "the combined capex of Tesla
and NVIDIA". The question is split into one lookup per company, each answered from that
company's own filing and cited; then the figures are compared or combined. The prose gives
every company's figure; with one of them missing there is no comparison, and no number.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from enum import Enum

from pipeline.rag.answers.arithmetic import plain, rounded
from pipeline.rag.answers.operand_clauses import AS_FRACTION_OF, AS_PERCENT_OF
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.periods import Period, parse_periods
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.short_answer import ShortAnswer, with_unit

SCALE_POWERS = {"": 0, "thousand": 3, "million": 6, "billion": 9}


class Combine(Enum):
    """What a question about several companies asks of their figures."""

    HIGHER = "higher"           # which company's figure is the larger
    LOWER = "lower"             # which company's figure is the smaller
    DIFFERENCE = "difference"   # the first named less the second
    RATIO = "ratio"             # the first named divided by the second
    PERCENT_OF = "percent of"   # the first named as a percentage of the second
    SUM = "sum"                 # all of them together
    EACH = "each"               # each one's figure, nothing computed


_WHICH = re.compile(r"\b(?:which|who|whose|what company)\b", re.I)
_HIGHER = re.compile(r"\b(?:higher|highest|larger|largest|more|most|greater|greatest|bigger|"
                     r"faster|fastest)\b", re.I)
_LOWER = re.compile(r"\b(?:lower|lowest|smaller|smallest|less|least|fewer|slower|slowest|slowly)\b",
                    re.I)
# "how much more", "how many more employees", "how many percentage points faster"
_DIFFERENCE = re.compile(r"\bhow (?:much|many(?: [a-z]+){0,2}?) (?:more|less|higher|lower|bigger|"
                         r"smaller|larger|greater|faster|slower|fewer)\b|"
                         r"\bdifference\b|\bexceed\w*\b|\bgap\b|\bminus\b|\bsubtract\w*\b", re.I)
_RATIO = re.compile(rf"\bdivided by\b|÷|\bratio of\b[^?]*?\bto\b|{AS_FRACTION_OF}", re.I)
_PERCENT_OF = re.compile(AS_PERCENT_OF, re.I)
_OR = re.compile(r"\bor\b", re.I)
_HOW_MUCH = re.compile(r"\bhow (?:much|many)\b", re.I)
_SUM = re.compile(r"\bcombined\b|\btogether\b|\bsum\b|\btotal of\b|\baltogether\b|\bin total\b|"
                  r"\badd(?:ed)? up\b|\bplus\b|^\s*add\b", re.I)


def combination(text: str) -> Combine:
    # "Did Home Depot or UnitedHealth spend more?" asks which, as "which" does
    chooses = _WHICH.search(text) or (_OR.search(text) and not _HOW_MUCH.search(text))
    if chooses:
        if _LOWER.search(text):
            return Combine.LOWER
        if _HIGHER.search(text):
            return Combine.HIGHER
    if _RATIO.search(text):
        return Combine.RATIO
    if _PERCENT_OF.search(text):
        return Combine.PERCENT_OF
    if _DIFFERENCE.search(text):
        return Combine.DIFFERENCE
    if _SUM.search(text):
        return Combine.SUM
    return Combine.EACH


def chooses(text: str) -> bool:
    """Whether the question asks which of what it names is the higher or the lower."""
    return combination(text) in (Combine.HIGHER, Combine.LOWER)


# Two companies' growth set against each other: "grew faster", "how much slower ... grow".
_PACE = r"\b(?:faster|fastest|slower|slowest|(?:more|less) (?:slowly|quickly|rapidly))\b"
_GROWTH_SET_AGAINST = re.compile(rf"{_PACE}[^?]*\bgr[eo]wt?h?\b|\bgr[eo]wt?h?\b[^?]*{_PACE}",
                                 re.I)
# What is computed of the companies' figures, not chosen among them.
_COMPUTED = (Combine.SUM, Combine.DIFFERENCE, Combine.RATIO, Combine.PERCENT_OF)
_QUOTIENTS = (Combine.RATIO, Combine.PERCENT_OF)


def per_company(query: Query, company: str) -> Query:
    """The question asked of one company: a lookup of its figure for the periods named;
    with as many periods as companies, each company's own ("Nvidia in fiscal 2025 than Meta
    in 2024"), in the order both are named."""
    periods = _own_periods(query, company) or query.periods
    if len(query.companies) > 1 and len(periods) == len(query.companies):
        periods = (periods[query.companies.index(company)],)
    # a sum, difference or ratio is rounded as asked once, not each of its operands before it
    decimals = None if combination(query.text) in _COMPUTED else query.decimals
    # "how much faster did A's revenue grow than B's": each one's growth, then the gap
    lookup = Operation.PERCENT_CHANGE if _GROWTH_SET_AGAINST.search(query.text) else \
        Operation.LOOKUP
    own = next((o for o in query.operands if o.company == company), None)
    if own is not None and own.measure_words:
        # its own side of the operator: its measure, definition and part; the question's
        # period where its side names none
        return replace(own, periods=own.periods or periods, decimals=None)
    # the other companies' names ("Wholesale" of "Costco Wholesale") name no part of this one
    others = {w for c in query.companies if c != company for w in tokens(c)}
    return replace(query, text=query.unnamed_text(keep=company), company=company,
                   companies=(company,), periods=periods, decimals=decimals,
                   words=query.words - others, measure_words=query.measure_words - others,
                   question=replace(query.question, operation=lookup))


def _own_periods(query: Query, company: str) -> tuple[Period, ...]:
    """The periods written after the company's name and before the next company's: "Intel
    (2024) or NVIDIA (fiscal 2023, ended January 29, 2023)", "Apple in the first six months
    of fiscal 2025, or Intel in all of 2024"; () when none is."""
    spans = sorted(query.names, key=lambda n: n.start)
    own = next((n for n in spans if n.key == company), None)
    if own is None or len({n.key for n in spans}) < 2:
        return ()
    after = next((n.start for n in spans if n.start > own.start and n.key != company),
                 len(query.text))
    return parse_periods(query.text[own.end:after])


@dataclass(frozen=True)
class CompanyFigure:
    name: str                  # as the prose names it: the filing's registrant
    answer: ShortAnswer


def _base(answer: ShortAnswer) -> Decimal | None:
    """The figure in units (dollars, shares), or None when it is no plain amount."""
    if not isinstance(answer.short_answer, str) or answer.scale not in SCALE_POWERS:
        return None
    try:
        return Decimal(answer.short_answer).scaleb(SCALE_POWERS[answer.scale])
    except InvalidOperation:
        return None


def combine(query: Query, figures: list[CompanyFigure],
            describe: Callable[[CompanyFigure], str], whole: str = "company") -> ShortAnswer:
    """The comparison or combination the question asks of the companies' figures (or of
    one company's parts': `whole` "part")."""
    how = combination(query.text)
    if how in _QUOTIENTS and not query.operands:
        how = Combine.EACH  # "the ratio of debt to equity of A and B" is each one's ratio
    each = "; ".join(describe(f) for f in figures)
    citations = [c for f in figures for c in f.answer.citations]
    lacking = [f for f in figures if f.answer.short_answer is None]
    if lacking:
        why = "; ".join(f"{f.name}: {f.answer.missing or 'no figure found'}" for f in lacking)
        return ShortAnswer(missing=f"not every {whole}'s figure is in the filings ({why})",
                           citations=citations, wanted_arithmetic=how is not Combine.EACH)
    values = [_base(f.answer) for f in figures]
    if None in values:
        values = _alike(figures)  # percentages and ratios compare as they are
    if how in (Combine.HIGHER, Combine.LOWER):
        if any(v is None for v in values):
            return ShortAnswer(missing=f"the figures cannot be compared: {each}")
        pick = max if how is Combine.HIGHER else min
        best = pick(range(len(figures)), key=lambda i: values[i])
        return ShortAnswer(figures[best].name, "", "arithmetic", f"the {how.value} of {each}",
                           citations, figures[best].answer.cited)
    if how in _QUOTIENTS and len(values) == 2 and None not in values and values[1]:
        percent = how is Combine.PERCENT_OF
        ratio = values[0] / values[1] * (100 if percent else 1)
        shown = plain(ratio if query.decimals is None else rounded(ratio, query.decimals))
        said = "the first as a percentage of the second" if percent else \
            "ratio, the first over the second"
        return ShortAnswer(shown, "percent" if percent else "", "arithmetic", f"{said}: {each}",
                           citations, figures[0].answer.cited, wanted_arithmetic=True)
    if how in (Combine.DIFFERENCE, Combine.SUM) and None not in values:
        scale = figures[0].answer.scale
        total = values[0] - sum(values[1:]) if how is Combine.DIFFERENCE else sum(values)
        total = total.scaleb(-SCALE_POWERS.get(scale, 0))
        shown = plain(total if query.decimals is None else rounded(total, query.decimals))
        return ShortAnswer(shown, scale, "arithmetic", f"{how.value}: {each}", citations,
                           figures[0].answer.cited, wanted_arithmetic=True)
    wholes = "companies" if whole == "company" else f"{whole}s"
    return ShortAnswer(missing=f"the question asks for several {wholes}' figures, not one: "
                               f"{each}", citations=citations)


def _alike(figures: list[CompanyFigure]) -> list[Decimal | None]:
    """The figures as numbers when all are of one scale ("percent", a ratio's ""), else
    None for each: a percentage and an amount do not compare."""
    if len({f.answer.scale for f in figures}) != 1:
        return [None] * len(figures)
    try:
        return [Decimal(str(f.answer.short_answer)) for f in figures]
    except InvalidOperation:
        return [None] * len(figures)


def stated(figure: CompanyFigure) -> str:
    """"Apple Inc.: 391035 million (Apple Inc. 10-K FY2024)"."""
    value = figure.answer.short_answer
    return f"{figure.name}: {with_unit(value, figure.answer.scale)}" if value is not None \
        else f"{figure.name}: none"
