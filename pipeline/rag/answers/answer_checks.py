"""Checks that a computed figure is the kind of number the question asks for. A question
asking for a ratio, a rate or a margin is not answered by an amount in dollars ("interest
coverage = operating income / interest expense" read as operating income when the
definition's form was not understood), nor a head count by a dollar figure ("how many
employees" is not "employee compensation"), nor a formula whose operands all read one figure. Each
check names why the figure is withheld; the answer then gives no number.
"""

from __future__ import annotations

import re

from pipeline.rag.answers.filings.fact_labels import split_name
from pipeline.rag.answers.text.asked_acts import states_act
from pipeline.rag.answers.vocabulary.phrasing import DOLLAR_SCALE
from retriever_trt.documents.model import Fact

# A question asking for a ratio or rate, whatever its words define it by.
_ASKS_RATIO = re.compile(r"\bratio\b|\bcagr\b|\bcompound(?:ed)? annual\b|\bcoverage\b|"
                         r"\bdivided by\b|\bas a percent(?:age)?\b|\bin percent\b|"
                         r"\bpercentage\b|\bpercent\b|\brate\b|(?<![\d.])%|\bmarket share\b|"
                         r"(?<!\bper )\b(?:share|portion|fraction) of\b(?!\s+(?:\w+\s+)?stock\b)",
                         re.I)
# A question asking for a date. Narrower than the text rules' own (text_answer._ASKS_DATE):
# "in which year was revenue higher" compares figures the facts hold.
_ASKS_DATE = re.compile(r"\b(?:on|by|through|until|till) what (?:date|day)\b|"
                        r"^\s*(?:(?:until |till |since |by |to |through )?when\b|"
                        r"what (?:is|was) the (?:\w+ )?date\b|"
                        r"(?:in|on|by) (?:which|what) (?:month|date|day)\b|"
                        r"in (?:what|which) year (?:was|were|did)\b[^?]*\b(?:formed|founded|"
                        r"incorporated|established|organized|created|began|started)\b)", re.I)
# A margin is a ratio, unless asked as an amount ("gross margin in dollars").
_MARGIN = re.compile(r"\bmargin\b", re.I)
# A question asking for a count of people, stores or other things, not of shares.
# "How many millions of dollars", "how many times": an amount or a ratio, not a count.
_ASKS_COUNT = re.compile(r"\bhow many\b(?!\s+(?:(?:thousands|millions|billions|trillions|dollars|"
                         r"us dollars|percent|percentage points|basis points|times)\b)|"
                         r"\s*(?:\$|us\$|usd\b))|"
                         r"\bnumber of\b|\bhead ?count\b|\bworkforce\b", re.I)
_SHARES = re.compile(r"\bshares?\b|\bstock\b", re.I)
# The word "how many" counts.
_COUNTED = re.compile(r"\bhow many\s+([a-z]+)", re.I)
# "How many shares of Class A stock were outstanding", "how many millions of shares did it
# buy back", "the number of diluted shares": a count of shares.
_ASKS_SHARE_COUNT = re.compile(r"\bhow many (?:(?:thousands|millions|billions) of )?"
                               r"(?:[\w&'’-]+ ){0,5}?shares\b|\bnumber of (?:[\w-]+ ){0,3}?shares\b|"
                               r"\bshare count\b", re.I)
# A question asking for an amount of money ("gross margin in dollars", "in millions"), not
# a percent.
_ASKS_AMOUNT = re.compile(r"^(?!.*(?:percent|%)).*(?:\bin (?:us )?dollars\b|\bin (?:usd|\$)|"
                          r"\bdollar (?:amount|value|terms|figure)\b|"
                          rf"\bin (?:usd |us\$ ?|\$ ?)?(?:thousands|millions|billions)\b|{DOLLAR_SCALE})",
                          re.I)
MONETARY = "USD"
# Cash burned, generated, earned or flowing over a period: no balance at a date answers it
# ("How much did J&J earn from income from equity affiliates": not its equity).
_ASKS_FLOW = re.compile(r"\b(?:burn(?:ed|t|s)?|outflows?|inflows?|generated?|generates|flows?|"
                        r"earn(?:ed|s)?)\b", re.I)
# What a company took in ("How much did it generate from operations"): no cost or expense
# answers it, unless the question names one.
_ASKS_TAKEN_IN = re.compile(r"\b(?:earn(?:ed|s)?|generated?|generates|make|made|bring in|"
                            r"brought in|take in|took in)\b", re.I)
_NAMES_COST = re.compile(r"\b(?:costs?|expenses?|expenditures?|spend\w*|charges?)\b", re.I)
_COST_CONCEPT = re.compile(r"Cost|Expense")
# The statement's name is no flow asked: "cash at year end, from the cash flow statement".
_CASH_FLOW_STATEMENT = re.compile(r"\b(?:cash flows? statements?|statements? of (?:consolidated )?"
                                  r"cash flows?)\b", re.I)


def asks_amount(text: str) -> bool:
    """An amount of money, in dollars or a scale of them, and no percent."""
    return _ASKS_AMOUNT.search(text) is not None


def asks_ratio(text: str) -> bool:
    """A ratio, rate, percentage or margin (not a margin asked as an amount)."""
    return _ASKS_RATIO.search(text) is not None or \
        (_MARGIN.search(text) is not None and not asks_amount(text))


# What a company expects, plans or budgets ("expected capital expenditures for 2025", "How
# much does PepsiCo expect to spend on share repurchases in 2025?"): no reported period's fact,
# the prose's to state.
_ASKS_FORECAST = re.compile(r"\b(?:expect(?:s|ed|ing)?|anticipat(?:es?|ed|ing)|plan(?:s|ned)?|"
                            r"projected|forecast(?:s|ed)?|guidance|outlook|intend(?:s|ed)?|"
                            r"earmarked|budget(?:s|ed)?)\b", re.I)


def asks_forecast(text: str) -> bool:
    """A figure the company expects or plans, not one it reported."""
    return _ASKS_FORECAST.search(text) is not None


# What asks for a name: who, whom, or which company, partner, union ... (`WHAT_NAMED`: the
# kind of name asked; not "which segment had higher revenue": a comparison of figures, which
# the facts answer; not "what impacted the company's tax rate": the noun is no name asked).
WHAT_NAMED = re.compile(
    r"\b(?:which|what) (?:(?!(?:is|was|are|were|do|does|did|has|have|had|the|a|an|its|their|"
    r"our)\b)[\w.-]+ ){0,4}?(?:company|companies|firm|partner|provider|bank|lender|customer|"
    r"supplier|unions?|acquirer|buyer|subsidiary|organization|agency|counterparty|"
    r"manufacturer|operator|retailer|distributor|insurer|business|"
    r"officer|executive|director|chair(?:man|woman|person)?|president|founder)\b(?!['’]s)", re.I)
_ASKS_NAME = re.compile(rf"^\s*(?:who|whom)\b|\b(?:from|to|by|with) whom\b|{WHAT_NAMED.pattern}",
                        re.I)
_COMPARES = re.compile(r"\b(?:higher|highest|lower|lowest|larger|largest|smaller|smallest|"
                       r"bigger|biggest|greater|greatest|more|most|less|least|fewer|fewest|"
                       r"better|best|worse|worst|faster|fastest|slower|slowest)\b", re.I)


def asks_name(text: str) -> bool:
    """A name ("Who is its new joint venture partner?", "the acquisition of which
    company?"): the prose's to give, never a figure's."""
    return _ASKS_NAME.search(text) is not None and not _COMPARES.search(text)


def asks_date(text: str) -> bool:
    """A date ("When did Walgreens acquire the remaining 45% of CareCentrix?"): the prose's
    or the cover's to give, never a figure's."""
    return _ASKS_DATE.search(text) is not None


def asks_count(text: str) -> bool:
    """A count of people, stores or other things (not of shares): prose states those more
    often than a fact does, so the text may answer where no fact does. What "how many"
    counts is the word after it ("how many stockholders held its Class A shares" counts
    stockholders)."""
    if _ASKS_COUNT.search(text) is None:
        return False
    counted = _COUNTED.search(text)
    return not _SHARES.match(counted.group(1)) if counted else not _SHARES.search(text)


def asks_share_count(text: str) -> bool:
    """A count of shares ("how many shares were outstanding")."""
    return _ASKS_SHARE_COUNT.search(text) is not None


# Why an amount found does not answer a rate asked: the prose may state the rate.
RATE_UNREAD = "the question asks for a ratio or rate, and its definition was not read as one"
# Why an amount of money does not answer "how many": the prose may state the count
# ("how many stockholders held its Class A shares" is no balance of that stock).
COUNT_UNREAD = "the question asks for a count, and the figure found is an amount of money"
# Why a count found does not answer the count of an act asked: "how many bitcoin did it sell"
# is no tagged count of bitcoin acquired or held (text/asked_acts.py).
ACT_UNREAD = "the question counts what an act (sold, bought, opened...) moved, and the figure " \
    "found is named by no such act"
# The facts' reasons the prose may state what they lack.
PROSE_MAY_STATE = (RATE_UNREAD, COUNT_UNREAD, ACT_UNREAD)


def withheld(text: str, scale: str, facts: list[Fact], ratio: bool) -> str | None:
    """Why a figure of `scale` ("percent", "" for a ratio or plain number, or an amount's
    "million"...) computed from `facts` does not answer the question `text`; None if it
    may. `ratio`: the figure was computed as a ratio or percentage."""
    monetary = bool(facts) and all(f.unit.startswith(MONETARY) and "/" not in f.unit
                                   for f in facts)
    if asks_ratio(text) and not ratio and monetary:
        return RATE_UNREAD
    if _ASKS_FLOW.search(_CASH_FLOW_STATEMENT.sub(" ", text)) and facts and \
            all(f.start is None for f in facts):
        return "the question asks for what flowed or was earned over a period, and the figure found is " \
            "a balance at a date"
    if _ASKS_TAKEN_IN.search(text) and not _NAMES_COST.search(text) and facts and \
            all(_COST_CONCEPT.search(f.concept.split(":")[-1]) for f in facts):
        return "the question asks for what the company took in, and the figure found is a " \
            "cost or expense"
    if asks_count(text) and monetary:
        return COUNT_UNREAD
    if asks_count(text) and not all(states_act(text, split_name(f.concept)) for f in facts):
        return ACT_UNREAD
    if ratio and asks_amount(text):
        return "the question asks for an amount of money, and the figure found is a ratio"
    if not ratio and monetary and len({f.start is None for f in facts}) > 1:
        # "depreciation plus amortization of intangible assets" read the intangible assets'
        # balance: a sum of a flow over a period and a balance at a date is no figure
        return "the definition's operands mix a balance at a date with a flow over a period"
    # "depreciation plus amortization", both read as "Depreciation and amortization": one
    # figure is no answer to a formula of several
    if len(facts) > 1 and len({f.fact_id for f in facts}) == 1:
        return "the definition's operands all read the same figure"
    return None
