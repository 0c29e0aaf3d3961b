"""What a finance question asks: the operation, the periods, and the phrases naming operands.

Rules follow the general language of financial questions ("percentage change in X from 2018
to 2019", "average X for 2018 and 2019", "X as a percentage of Y", "ratio of X to Y",
"difference between X and Y", "in which year was X larger"), not particular questions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.vocabulary.metrics import ALL_METRICS, Scale
from retriever_trt.documents.years import YEAR_DIGITS, years_in

# Words that say what to compute, not which row: left out when rows are matched.
OPERATION_WORDS = set("""change difference increase decrease percentage percent average ratio
proportion sum growth variance movement combined mean rise rose risen grow grew grown fall
fell fallen drop dropped""".split())

_PCT_CHANGE = re.compile(
    r"percent(?:age)?\s*(?:of\s+)?(?:change|increase|decrease|growth|decline|rise|drop|"
    r"increase\s*/\s*\(?decrease\)?)|%\s*(?:change|increase|decrease)|growth rate|"
    r"\b(?:change|increase|decrease|growth)\s*\(\s*%\s*\)|"
    r"rate of (?:change|increase|growth)", re.I)
_AVERAGE = re.compile(r"\baverage\b|\bmean\b", re.I)
# "What did Brent crude average per barrel": the verb, a figure the text states for one period,
# not the mean of several ("what did the average price ..." keeps its noun).
_AVERAGE_VERB = re.compile(r"\b(?:did|does|do)\s+(?!the\b|an?\b|its\b|their\b)(?:[\w&'’.-]+\s+)"
                           r"{1,5}?average\b(?!\s+(?:of|for)\b)", re.I)
_RATIO = re.compile(r"\bratio\b", re.I)
_PROPORTION = re.compile(
    r"\bproportion\b|\bas a (?:percentage|percent|%)\b|\bwhat percent(?:age)? of\b|"
    r"\bwhat (?:share|portion|fraction) of\b|['’]s (?:share|portion|fraction) of\b|"
    r"\bas a fraction of\b|"
    r"\bpercentage (?:of )?constitution\b|"
    r"\bpercentage (?:of|did|does|is|was|were)\b|\b(?:%|percent) of\b", re.I)
# "By how much did sales rise", "how much did operating income grow from 2024 to 2025": a
# change told by its verb.
# ("the deal fell through", "the bid fell apart": it failed, no figure changed)
_CHANGE_VERBS = (r"\b(?:rise|rose|risen|grow|grew|grown|(?:fall|fell|fallen)(?! through\b| apart\b)|"
                 r"drop|dropped)\b")
_CHANGE = re.compile(
    r"\bchange[sd]?\b|\bdifference\b|\bincrease[sd]?\b|\bdecrease[sd]?\b|\bvariance\b|"
    r"\bgrowth\b|\bdecline[sd]?\b|\bhow much (?:more|less|higher|lower|bigger|smaller)\b|"
    r"\bmovement\b|" + _CHANGE_VERBS, re.I)
_SUM = re.compile(r"\bsum\b|\bcombined\b|\baltogether\b|\btotal\b|\bin total\b", re.I)
# "In which years was X less than 600,000?" is the same question with a threshold: the
# plain list of years ("Which years does the table cover?") is _YEARS_LIST's, read first.
_WHICH_YEAR = re.compile(r"\b(?:which|what) (?:fiscal )?(?:years?|periods?)\b|"
                         r"\bin which\b.*\byears?\b", re.I)
# "Which years does the table cover?", "What are the years included ...?", "For which
# year(s) is X recorded?".
_YEARS_LIST = re.compile(r"\b(?:which|what) (?:(?:are|were) the )?(?:fiscal |financial )?"
                         r"(?:years|periods|year\(s\))(?!\w)", re.I)
# "above", "over", "below" and "under" compare only before a figure ("under $5 million"),
# not in "included under the statement of cash flows" or "over the period".
_BEFORE_FIGURE = r"(?=\s*[$€£]?\s*-?\d)"
_HIGHER = re.compile(r"\b(?:larger|largest|higher|highest|greater|greatest|more|most|bigger|"
                     rf"biggest|exceed\w*|(?:above|over){_BEFORE_FIGURE})\b", re.I)
_LOWER = re.compile(r"\b(?:smaller|smallest|lower|lowest|less|least|fewer|"
                    rf"(?:below|under){_BEFORE_FIGURE})\b", re.I)
# "less than -3,000 thousands", "less than15,000" (the space lost in typing).
_THRESHOLD = re.compile(r"(?:than|above|below|under|over|exceed\w*)\s*\$?\s*(-?[\d,]+(?:\.\d+)?)"
                        r"\s*(thousand|million|billion|%)?", re.I)
# "How many years did revenue exceed $1 billion?": a count of the years, not of employees
# "at the end of fiscal year 2025".
_COUNTS_YEARS = re.compile(r"\bhow many (?:of the )?(?:\w+ )?years?\b", re.I)
# A count of the years past a threshold asked after a leading period: "From 2017 to 2019,
# how many of the years was R&D more than 5 million?".
_LED_COUNT = re.compile(r"(?:from|between|in|for|during|over) [^,?]*, how many\b(?! percent| %)")
# A year the question names in words a table would not parse as one ("in 1850"): no
# table's column can hold it, so nothing may be looked up for it.
_NAMED_YEAR = re.compile(r"\b(?:in|between|from|since|fy|year)\s+([12]\d{3})\b(?![,.]\d)", re.I)
# What follows a threshold word with a currency sign: the whole token, to see it is a number.
_THRESHOLD_TOKEN = re.compile(r"(?:than|above|below|under|over|exceed\w*)\s+\$\s*([^\s?]+)", re.I)
_PLAIN_NUMBER = re.compile(r"[\d,]+(?:\.\d+)?")
# Digits past which a threshold is no amount any table holds (and past float precision).
MAX_THRESHOLD_DIGITS = 15
_RANGE = re.compile(rf"(?:from|between|over)?\s*(?:fy|fiscal )?({YEAR_DIGITS})\s*(?:to|and|-|–|through)\s*"
                    rf"(?:fy|fiscal )?({YEAR_DIGITS})", re.I)
# "What are the components of X?", "What financial items are listed in the table?": the row
# labels (of X's section when the table has one).
_ROW_LIST = re.compile(
    r"^(?:what|which) (?:are|were)(?: the)?(?: \w+){0,2} (?:components|items|types|segments|"
    r"regions|categories|elements|scopes|line items)\b|\bitems (?:are )?listed\b|"
    r"^what (?:financial )?items does .+ consist of|^what were the components making up\b|"
    # "What types of accounts receivable are there?", "Which countries are shown in the table?"
    r"^(?:what|which) (?:types|kinds|categories|components) of .+ (?:are|were) there\b|"
    r"^which \w+ (?:are|were) (?:shown|listed|included|presented) in the table\b",
    re.I)
# "How many types of finite-lived intangible assets are there?": the rows a row list gives,
# counted.
_ROW_COUNT = re.compile(
    r"^how many (?:[\w-]+ ){0,3}?(?:components|items|types|segments|regions|categories|"
    r"elements|kinds|classes|countries|sources|line items)\b", re.I)
# "Which segment had the highest revenue in 2019?": a superlative over rows, not years
# (comparatives are the years': "In which year was X larger?"). "What was the highest X?"
# asks a figure, not a row; so does "What percentage of sales went to its largest customer?".
_WHICH_ROW = re.compile(r"^(?:(?:in|for|from) )?(?:which|what (?!(?:is|was|were|are|did|does|do|"
                        r"percent|percentage|share|portion|proportion|amount)\b))"
                        r".*\b(?:largest|highest|"
                        r"greatest|biggest|most|lowest|smallest|least)\b", re.I)
# Questions about reasons, definitions and contents: answered from the text, not a cell.
_DESCRIPTIVE = re.compile(
    r"^\s*(?:why|how (?:is|are|was|were|does|do|did|often|will|would|can|should|has|have)\b)|"
    r"\b(?:reasons?|caused?|causing|(?:is|was|were) due to|includ\w*|consists?|comprised?|relates?|"
    r"represents?|defined?(?! (?:contribution|benefit))|means?|allows?|results? in|led to|lead to|"
    r"driven|drivers?|"
    r"purpose|describe|explain|primarily|mainly)\b", re.I)
_ASIDES = re.compile(r"\([^()]*\)")
# "Difference" names a gap's size; "change", "increase", "decrease" name a direction too.
_MAGNITUDE = re.compile(r"\bdifference\b", re.I)
_DIRECTION = re.compile(r"\bchange[sd]?\b|\bincrease[sd]?\b|\bdecrease[sd]?\b|\bgrowth\b|"
                        r"\bdecline[sd]?\b|\bmovement\b|\(decrease\)|\(increase\)|" +
                        _CHANGE_VERBS, re.I)
# "the difference between the net cash from 2018 to 2019": one row between two periods, read
# as the change from the first to the second, not a gap's size.
_PERIOD_DIFFERENCE = re.compile(r"\bdifference between (?:the )?[^?]+? (?:from|in|for) "
                                r"(?:fy ?)?\d{4} (?:to|and) (?:fy ?)?\d{4}\b", re.I)
_PERCENT_WORD = re.compile(r"%|\bpercent", re.I)
_AS_PERCENT = re.compile(r"\bas a (?:percentage|percent|%)", re.I)
_RESPECTIVELY = re.compile(r"\brespective(?:ly)?\b", re.I)


@dataclass
class Question:
    text: str
    operation: Operation
    years: list[int]
    operands: list[str] = field(default_factory=list)   # phrases naming rows, in order
    sum_words: bool = False
    higher: bool = True
    threshold: tuple[str, str] | None = None
    magnitude: bool = False              # "the difference between": a size, not a direction
    of_all: bool = False                 # "the sum of all X": X's rows added up, not its years
    missing: str | None = None           # an operand it names that no table can have

    def __post_init__(self) -> None:
        self.operation = Operation(self.operation)  # a name given as a string is checked

    # The text is not changed after parsing (`dataclasses.replace` makes a new Question), so
    # what is read off it is computed once: the table rules ask for it per table and row.
    @cached_property
    def words(self) -> tuple[str, ...]:
        return tuple(tokens(self.text))

    @cached_property
    def percent_operand(self) -> bool:
        """Whether the figures asked are percentages ("the percentage of sales from APAC",
        "the change in gross margin %"), not amounts a percent is computed from ("the
        percentage change in net sales", "X as a percentage of Y")."""
        return _PERCENT_WORD.search(_AS_PERCENT.sub(" ", _PCT_CHANGE.sub(" ", self.text))) \
            is not None

    @property
    def year_range(self) -> tuple[int, int] | None:
        """(first, last) of "from 2017 to 2019", "between 2015 and 2019", "2020-2024"."""
        m = _RANGE.search(self.text)
        if not m:
            return None
        a, b = sorted((int(m.group(1)), int(m.group(2))))
        return (a, b) if b - a >= 2 else None

    @property
    def years_in_order(self) -> list[int]:
        return list(dict.fromkeys(years_in(self.text)))


def _split_two(text: str, separators: tuple[str, ...]) -> list[str]:
    low = text.lower()
    for sep in separators:
        at = low.find(sep)
        if at >= 0:
            kept = len(sep) - len("total ") if sep.endswith(" total ") else len(sep)
            return [text[:at], text[at + kept:]]
    return [text]


def _strip_lead(text: str) -> str:
    return re.sub(r"^\s*(?:what|how much|how)\s+(?:is|was|were|are|did|does)?\s*(?:the\s+)?",
                  "", text, flags=re.I)


# "the sum of all X", "the total of all the X": X's rows, not its years.
_ALL_OF = re.compile(r"\b(?:sum|total)\b.*\bof all\b", re.I)
_DIVISION_LEAD = re.compile(
    r"^(?:(?:in|for) (?:fy)?\d{4},?\s*)?(?:what|how much)\s+(?:is|was|were|are)?\s*(?:the\s+)?"
    r"(?:value of\s+)?(?:ratio|proportion|percentage (?:of )?constitution|percentage|percent|%)"
    r"(?:\s*\([^)]*\))?,?"
    r"(?:\s*in percentage,?)?\s+(?:of|between)?\s*", re.I)
# A separator ending in "total " leaves "total" to the denominator: "audit fees in total
# fees" divides by the row "Total fees", not by a row "Fees".
_DIVISION_SEPARATORS = (
    " out of ", " as a percentage of ", " as a percent of ", " as a % of ", " as a proportion of ",
    " as a fraction of ",
    " as a ratio of ", " in relation to ", " among ", " in the total ", " of the total ",
    " in total ", " of total ", " compared to ", " to ", " over ", " against ", " versus ",
    " vs ", " divided by ")
# "percentage of total X was generated from Y", "proportion of X is made up of Y", "percentage
# of total X were accounted for using Y": the part, Y, over the whole, X. Without "total" the
# verb must say the whole is made of the part ("revenue was from services" may be a flow).
_PART_OF_TOTAL = re.compile(r"^(?:the )?(total .+?) (?:is|was|are|were) (?:generated |made up |"
                            r"comprised |accounted for |contributed |derived )?"
                            r"(?:from|of|by|using|under) (.+)$", re.I)
_PART_OF_WHOLE = re.compile(r"^(?:the )?(.+?) (?:is|was|are|were) (?:made up|comprised|"
                            r"accounted for|derived) (?:from|of|by|using|under) (.+)$", re.I)


# "the debt-to-asset ratio", "the liability to asset ratio": its two terms, in order.
_TO_RATIO = re.compile(r"\b(?:the )?([\w'’ ]{2,40}?)[- ]to[- ]([\w'’ ]{2,40}?) ratio\b", re.I)
# Ratios of the vocabulary with one line item over another ("current ratio"): their items'
# names are the rows' words.
_NAMED_RATIOS = {phrase: (m.numerator[0][0], m.denominator) for m in ALL_METRICS
                 if m.scale is Scale.RATIO and len(m.numerator) == 1 and m.denominator
                 and not m.average for phrase in m.phrases if " to " not in phrase}


def _ratio_terms(q: str) -> list[str]:
    """The two terms of a ratio named, not spelled out: "X-to-Y ratio", "current ratio"."""
    low = q.lower()
    for phrase, terms in _NAMED_RATIOS.items():
        if re.search(rf"\b{re.escape(phrase)}\b", low):
            return list(terms)
    m = _TO_RATIO.search(_strip_lead(_DIVISION_LEAD.sub("", q)))
    return [m.group(1), m.group(2)] if m else []


def _division(q: str, years: list[int]) -> Question:
    """A ratio ("ratio of A to B") or a share ("A as a percentage of B", "percentage of
    the total B made up of A"): the operand phrases, numerator first."""
    low = q.lower()
    # "proportion" and "ratio" alone are decimals in financial writing (0.95); a share
    # "as a percentage", or a part's "share of" a whole, is in percent.
    as_percent = bool(re.search(r"percent|%|\b(?:share|portion) of\b", low))
    op = Operation.PROPORTION if as_percent else Operation.RATIO
    # "the change in current ratio" is a change of two ratios: not computed here.
    named = [] if _CHANGE.search(q) else _ratio_terms(q)
    if named:
        return Question(q, op, years, named)
    body = _DIVISION_LEAD.sub("", q)
    m = _PART_OF_TOTAL.match(body) or _PART_OF_WHOLE.match(body)
    if m:
        return Question(q, op, years, [m.group(2), m.group(1)])
    separators = _DIVISION_SEPARATORS + ((" and ",) if op == Operation.RATIO else (" of ", " in "))
    parts = _split_two(body, separators)
    return Question(q, op, years, parts if len(parts) == 2 else [])


def unusable_operand(q: str) -> str | None:
    """Why the question's own operands rule out an answer: a year no table can hold, one
    period named as both ends of a change, or a threshold that is not a usable number."""
    known = set(years_in(q))
    for m in _NAMED_YEAR.finditer(q):
        if int(m.group(1)) not in known:
            return f"the question names the year {m.group(1)}, which no table covers"
    both = re.search(r"\b(?:between|from)\s+(?:fy\s*|fiscal\s+)?(\d{4})\s+(?:and|to)\s+"
                     r"(?:fy\s*|fiscal\s+)?(\d{4})\b", q, re.I)
    if both and both.group(1) == both.group(2):
        return f"the question names {both.group(1)} as both periods; a change needs two"
    token = _THRESHOLD_TOKEN.search(q)
    if token:
        amount = token.group(1).rstrip(".,;:!")
        if not _PLAIN_NUMBER.fullmatch(amount):
            return f"the threshold ${amount} is not a number"
        if len(amount.replace(",", "").split(".")[0]) > MAX_THRESHOLD_DIGITS:
            return f"the threshold ${amount[:20]}... is too large to compare with a table amount"
    return None


def operation(text: str) -> Question:
    """Classify a question; the operand phrases are filled for two-operand operations."""
    parsed = _operation(text)
    parsed.missing = unusable_operand(parsed.text)
    return parsed


def _operation(text: str) -> Question:
    q = " ".join(text.replace("’", "'").split())
    years = sorted(set(years_in(q)))
    low = q.lower()
    threshold = _THRESHOLD.search(q)
    thr = (threshold.group(1), threshold.group(2) or "") if threshold else None
    if _ROW_LIST.search(q) and not _YEARS_LIST.search(q):
        return Question(q, Operation.ROW_LIST, years)
    if _ROW_COUNT.search(q):
        return Question(q, Operation.ROW_COUNT, years, higher=not _LOWER.search(q), threshold=thr)
    # An aside in parentheses ("capex (including capitalized software) as a percent of
    # revenue") says what a figure holds; it does not make the question a descriptive one.
    if _DESCRIPTIVE.search(_ASIDES.sub(" ", q)) and not _YEARS_LIST.search(q):
        return Question(q, Operation.TEXT, years)
    per_year = thr or _YEARS_LIST.search(q) or _COUNTS_YEARS.search(q)
    counted = (low.startswith("how many") and not re.match(r"how many (?:percent|%)", low)
               and per_year) or (thr and _LED_COUNT.match(low))
    if counted:
        return Question(q, Operation.COUNT, years, higher=not _LOWER.search(q), threshold=thr)
    if _YEARS_LIST.search(q) and not _HIGHER.search(q) and not _LOWER.search(q):
        return Question(q, Operation.YEARS_LIST, years)
    if _WHICH_YEAR.search(q) and (_HIGHER.search(q) or _LOWER.search(q)):
        lower = bool(_LOWER.search(q)) and not _HIGHER.search(q.split("than")[0] if thr else q)
        return Question(q, Operation.WHICH_YEAR, years, higher=not lower, threshold=thr)
    if _WHICH_ROW.search(q) and not thr and not _WHICH_YEAR.search(q):
        return Question(q, Operation.WHICH_ROW, years, higher=not _LOWER.search(q))
    if _PCT_CHANGE.search(q):
        return Question(q, Operation.PERCENT_CHANGE, years)
    if re.search(r"\b(?:change|difference|increase|decrease) (?:in|of) (?:the )?(?:average|"
                 r"percentage|proportion|ratio|percent)\b", low) or \
            re.match(r"how many (?:percent|%)", low):
        return Question(q, Operation.CHANGE, years)  # of a row that is itself an average or a ratio
    if _AVERAGE.search(q) and not re.search(r"weighted.average", low) \
            and not _AVERAGE_VERB.search(q):
        return Question(q, Operation.AVERAGE, years)
    if _RATIO.search(q) or _PROPORTION.search(q):
        return _division(q, years)
    if _CHANGE.search(q):
        magnitude = bool(_MAGNITUDE.search(q)) and not _DIRECTION.search(q) \
            and not _PERIOD_DIFFERENCE.search(q)
        m = re.search(r"\bdifference (?:in \w+ )?between (.+?) and (.+?)(?:\?|$| in (?:fy)?\d{4})",
                      q, re.I)
        # "between X in 2018 and 2019" is one row in two periods: a side that is only a
        # period names no row.
        if m and tokens(m.group(1)) and tokens(m.group(2)):
            return Question(q, Operation.DIFFERENCE, years, [m.group(1), m.group(2)], magnitude=magnitude)
        return Question(q, Operation.CHANGE, years, magnitude=magnitude)
    if _RESPECTIVELY.search(q) and len(years) >= 2:
        return Question(q, Operation.MULTI_LOOKUP, years_in(q))
    # "the total fair value of all the liabilities assumed" adds a section's rows up
    if _SUM.search(q) and (len(years) >= 2 or re.search(r"\bsum\b|\bcombined\b", low)
                           or not years and re.search(r"\bof all\b", low)):
        m = re.search(r"\b(?:sum|total|combined)\b(?: of| value of| amount of)? (.+?) and (.+?)"
                      r"(?:\?|$| in (?:fy)?\d{4})", q, re.I)
        parts = [m.group(1), m.group(2)] if m and len(years) < 2 else []
        return Question(q, Operation.SUM, years, parts, sum_words=True,
                        of_all=not years and _ALL_OF.search(q) is not None)
    return Question(q, Operation.LOOKUP, years)
