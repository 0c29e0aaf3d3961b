"""A question parsed once into what it asks: the company, the period, the measure, the
operation, the unit and the rounding. Retrieval (its metadata filter), the choice of filing
and the answer rules all read this `Query`; none parses the question again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pipeline.rag.answers.answer_checks import asks_amount
from pipeline.rag.answers.company_names import NameSpan, find_companies, find_company, name_spans
from pipeline.rag.answers.instructions import asked_part
from pipeline.rag.answers.measure_modifiers import measure_modifiers
from pipeline.rag.answers.named_filing import NamedFiling, named_filing
from pipeline.rag.answers.operand_clauses import operand_clauses
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.periods import Period, PeriodKind, parse_periods
from pipeline.rag.answers.question import OPERATION_WORDS, Question, operation
from pipeline.rag.answers.question_words import (
    STATEMENT_NAMES,
    joined_initials,
    named_years,
    spelled_out,
    tokens,
    without_dates,
)
from pipeline.rag.answers.text.asked_spans import STAFF_TERMS, asks_staff
from pipeline.rag.answers.vocabulary.definitions import (
    Definition,
    defined_metric,
    definition_span,
    longest_named,
    named_metric,
    stated_definitions,
    stated_formula,
)
from pipeline.rag.answers.vocabulary.growth import asks_compound_growth, compound_growth
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, LINE_ITEMS, Kind, LineItem
from pipeline.rag.answers.vocabulary.metrics import ALL_METRICS, Metric, Scale
from pipeline.rag.answers.vocabulary.phrasing import mentions, normalized
from retriever_trt.documents.model import Form

# "The same quarter a year earlier than the quarter ended June 30, 2025", "the year-ago
# quarter", "the prior-year period": the period named, a year back.
_YEAR_EARLIER = re.compile(r"\b(?:a|one) year (?:earlier|before|prior)\b|\byear[- ]ago\b|"
                           r"\bsame (?:quarter|period|months) (?:of |in )?(?:the )?"
                           r"(?:prior|previous|preceding|last) year\b|"
                           r"\bprior[- ]year (?:quarter|period)\b", re.I)
# "By what percentage did X change", "X growth ... in percent", "X growth in 2022 versus
# 2021? Percent, one decimal.": a percent change.
_PERCENT_CHANGE = re.compile(
    r"\bwhat percent(?:age)?\b.*\b(?:chang|increas|decreas|gr[eo]w|declin|ris|f[ae]ll)|"
    r"\b(?:growth|change|increase|decrease|gr[eo]w|rise|rose|declined?|f[ae]ll)\b.*"
    r"(?:\b(?:in|as a)\s+(?:units?\s+of\s+)?|[?.;,]\s*|\(\s*)(?:percent|%)",
    re.I)
# "in millions", "in $ billions", "USD billions", "$ millions", "(US$ thousands)".
# "to the nearest million" asks whole millions: the unit and its rounding at once
_UNIT = re.compile(r"\bin (thousands|millions|billions)\b|"
                   r"(?:\busd|\bus\$|\$) ?(thousands|millions|billions)\b|"
                   r"\bnearest (?:whole )?(?:(?:usd|us\$|\$) ?)?(thousand|million|billion)\b", re.I)
_DECIMALS = re.compile(r"\b(one|two|three|zero|no|\d) decimals?(?: places?)?\b|"
                       r"\bnearest (?:whole )?(?:(?:usd|us\$|\$) ?)?(whole number|tenth|hundredth|"
                       r"thousand|million|billion)\b|\bround(?:ed)? to (?:a )?"
                       r"(whole number|integer)\b", re.I)
_DECIMAL_WORDS = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3, "whole number": 0,
                  "integer": 0, "tenth": 1, "hundredth": 2, "thousand": 0, "million": 0,
                  "billion": 0}


@dataclass(frozen=True)
class Query:
    text: str
    question: Question                 # the operation and its operand phrases
    company: str | None = None         # the company key (filters.company_key) named
    periods: tuple[Period, ...] = ()   # in the question's order
    measure: LineItem | Metric | None = None
    unit: str | None = None            # "thousand", "million", "billion" when asked
    decimals: int | None = None        # the rounding asked
    companies: tuple[str, ...] = ()    # every company named, in the question's order
    form: Form | None = None           # the kind of filing named ("its 10-K", "quarterly report")
    # The question's content words (question.tokens), and those of them that may name its
    # measure or the part of the company it is about: not its companies, periods or units.
    words: frozenset[str] = frozenset()
    measure_words: frozenset[str] = frozenset()
    filing_year: int | None = None     # the fiscal year of the filing named ("its 2020 10-K")
    # Words written right before the measure's name that narrow it ("deferred" of "deferred
    # revenue"): the filing must match them, or no number (measure_modifiers.py).
    modifiers: frozenset[str] = frozenset()
    names: tuple[NameSpan, ...] = ()   # where the text names each company
    filing_quarter: int | None = None  # the fiscal quarter of the 10-Q named ("its Q3 FY24 10-Q")
    # each company's own side of "A's X minus B's Y" (`operand_clauses`), parsed as a question
    operands: tuple[Query, ...] = ()
    # "the year-ago quarter" with no period named: the filing's own period, a year back
    year_earlier: bool = False

    @property
    def operation(self) -> str:
        return self.question.operation

    def unnamed_text(self, keep: str | None = None) -> str:
        """The text with the companies' names blanked (but `keep`'s): a word of a name says
        nothing of what is asked ("Incorporated" of "UnitedHealth Group Incorporated")."""
        return _blanked(self.text, self.names, keep)


def _blanked(text: str, names: tuple[NameSpan, ...], keep: str | None = None) -> str:
    for n in names:
        if n.key != keep:
            text = text[:n.start] + " " * (n.end - n.start) + text[n.end:]
    return text


def _years_beside_a_date(periods: tuple[Period, ...], text: str,
                         question: Question) -> tuple[Period, ...]:
    """"The change in FY24 compared with the fiscal year ended September 30, 2023": a year
    named as such beside a year ended on a date, both compared (`parse_periods` reads the
    date alone, which had compared fiscal 2023 with 2022)."""
    if question.operation not in (Operation.CHANGE, Operation.PERCENT_CHANGE) or \
            len(periods) != 1 or periods[0].kind is not PeriodKind.YEAR or periods[0].end is None:
        return periods
    others = [y for y in named_years(without_dates(text)) if y != periods[0].year]
    if len(others) != 1:
        return periods
    return tuple(sorted((periods[0], Period(PeriodKind.YEAR, others[0], months=12)),
                        key=lambda p: p.year))


def _year_back(period: Period) -> Period:
    """The same period of the year before ("a year earlier than the quarter ended ...")."""
    end = period.end
    if end is not None:  # February 29 goes back to February 28
        end = end.replace(year=end.year - 1, day=min(end.day, 28 if end.month == 2 else end.day))
    return replace(period, year=period.year - 1 if period.year is not None else None, end=end)


# "Answer in percent", "as a percentage", "expressed in %": the unit a ratio is asked in.
_IN_PERCENT = re.compile(r"\b(?:in|as an?|expressed (?:in|as an?))\s+(?:percent(?:age)?s?\b|%)",
                         re.I)


def _in_percent(text: str, measure: LineItem | Metric | None,
                question: Question) -> LineItem | Metric | None:
    """A ratio of the vocabulary asked in percent is that percent ("debt-to-equity ratio?
    Answer in percent": 540.88, not 5.41 shown as a percent)."""
    if isinstance(measure, Metric) and measure.scale is Scale.RATIO and \
            question.operation in (Operation.LOOKUP, Operation.PROPORTION) and \
            _IN_PERCENT.search(text):
        return replace(measure, scale=Scale.PERCENT)
    return measure


def _margin_in_dollars(text: str, measure: LineItem | Metric | None) -> LineItem | Metric | None:
    """"Gross margin in dollars" (or "in millions") is the gross profit, as Apple prints it:
    a margin of one line item over revenue, asked as an amount of money, is that line item."""
    if isinstance(measure, Metric) and measure.formula is None and len(measure.numerator) == 1 \
            and measure.numerator[0][1] > 0 and measure.denominator == "revenue" \
            and asks_amount(text):
        return BY_NAME.get(measure.numerator[0][0], measure)
    return measure


def parse_measure(text: str, latest_year: int | None = None,
                  definitions: list[Definition] | None = None) -> LineItem | Metric | None:
    """The metric or line item named, the longest name first ("operating margin" is a
    metric, not "operating income"); a definition in the question wins (a year it names
    read against `latest_year`; `definitions`: its `stated_definitions`, when already
    read), and "COGS % margin" or "capex to revenue ratio" is a metric of its line items."""
    found = stated_definitions(text) if definitions is None else definitions
    # A metric named wins over the line items its definition names ("current ratio
    # (current assets / current liabilities)" was handled first, as a definition).
    # A statement's name names no measure: "per the cash flow statement" is not cash.
    named = STATEMENT_NAMES.sub(" ", text)
    defined = defined_metric(text, found, latest_year)
    if defined is None and stated_formula(found):
        # a formula the question states but that could not be read: never the vocabulary's
        # own for the name it defines (Apple's "debt-to-equity ratio, defined as long-term
        # debt (noncurrent) divided by ..." had been total liabilities over equity)
        return None
    return (defined or longest_named(named, ALL_METRICS)
            or named_metric(named) or _diluted(named, _paid_for(named, longest_named(named, LINE_ITEMS)))
            or (BY_NAME["net income"] if _MONEY_MADE.search(named) else None))


# "Which company lost less money", "made more money", "was more profitable": the bottom line,
# when the question names no measure.
_MONEY_MADE = re.compile(r"\b(?:lost|lose|loses|made|make|makes|earned|earn|earns)\s+(?:(?:more|less|"
                         r"the most|the least)\s+)?money\b|\b(?:more|less|most|least) profitable\b",
                         re.I)


# "Diluted", "assuming dilution": the diluted figure per share, unless "basic" is said too.
_DILUTION = re.compile(r"\bdilut(?:ed|ion)\b", re.I)
_BASIC = re.compile(r"\bbasic\b", re.I)


def _diluted(text: str, item: LineItem | None) -> LineItem | None:
    """Basic EPS named with its dilution ("net income per share - assuming dilution") is
    diluted EPS."""
    if item is BY_NAME["basic eps"] and _DILUTION.search(text) and not _BASIC.search(text):
        return BY_NAME["diluted eps"]
    return item


# Words saying the money went into what follows ("capital spending on", "additions of"):
# the payment for a balance item, a flow, not the balance.
_PAYMENT_FOR = re.compile(r"\b(?:spen(?:t|ding|d)|purchases?|additions?|acquisitions?|payments?|"
                          r"paid|capex|invest(?:ed|ments?)?)\b(?:\s+[\w-]+){0,3}?\s+"
                          r"(?:on|of|to|for|in|into)\s+$")


def _paid_for(text: str, item: LineItem | None) -> LineItem | None:
    """The flow that pays for a balance item the text names after a word of paying ("capex
    (purchase and other additions of property and equipment)", "capital spending on
    property and equipment"): the one line item whose own names hold the balance's name
    (capital expenditures', "purchases of property and equipment"), never the balance,
    which is no amount of a period."""
    if item is None or item.kind is not Kind.BALANCE:
        return item
    low = normalized(text)
    if not any(_PAYMENT_FOR.search(low[:m.start()]) for p in item.phrases
               for m in mentions(low, p)):
        return item
    flows = [i for i in LINE_ITEMS if i.kind is Kind.FLOW and
             any(p in q for p in item.phrases for q in i.phrases)]
    return flows[0] if len(flows) == 1 else item


def _measure_words(text: str, words: frozenset[str], companies: dict[str, list[str]],
                   names: tuple[NameSpan, ...]) -> frozenset[str]:
    # The companies' names as written and in full ("Properties" of "Boston Properties'",
    # named by its first word alone); a word of a name said outside it too is the
    # question's ("general" of "General Dynamics G&A expense").
    named = {w for key, aliases in companies.items() for a in (key, *aliases) for w in tokens(a)}
    named |= {w for n in names for w in tokens(text[n.start:n.end])}  # "jm" of "J.M. Smucker"
    named -= set(tokens(_blanked(text, names)))
    rest = spelled_out(joined_initials(STATEMENT_NAMES.sub(" ", asked_part(text)))).lower()
    rest = _EARLIER_PERIOD.sub(" ", rest)
    measure = frozenset(w for w in words if not w.isdigit() and not _FISCAL_YEAR.match(w)
                        and w in rest and w not in named and w not in _NOT_MEASURE
                        and w not in OPERATION_WORDS)
    measure -= _spelled_out_beside(text, measure)
    if asks_staff(text):
        # "how many people did AT&T employ", "workforce": the count a filing tags and prints
        # as its number of employees
        return measure - STAFF_TERMS - _STAFF_VERBS | {STAFF_NOUN}
    return measure


# "the prior-year column", "the preceding quarter": which period, no word of the measure.
_EARLIER_PERIOD = re.compile(r"\b(?:prior|previous|preceding)[- ](?:fiscal[- ])?(?:year|quarter|"
                             r"period|month)s?\b")


# Initials written in capitals, maybe around an ampersand: "SD&A", "EBITA".
_INITIALISM = re.compile(r"\b[A-Z]{1,5}(?:&[A-Z]{1,3})?\b")


def _spelled_out_beside(text: str, measure: frozenset[str]) -> set[str]:
    """The words of initials the question also writes out ("sd" of "SD&A — selling,
    distribution, and administrative expenses"): said twice, they are no word of the
    measure's own, and no label holds them."""
    low = text.lower()  # the words in the order written (the question is tokenized once)
    initials = "".join(w[0] for w in sorted(measure, key=low.find))
    out = set()
    for m in _INITIALISM.finditer(text):
        letters = m.group(0).replace("&", "").lower()
        said = set(tokens(m.group(0)))
        if len(letters) >= MIN_SPELLED_INITIALS and letters in initials and said & measure:
            out |= said
    return out


def _modifiers(text: str, measure: LineItem | Metric | None,
               companies: dict[str, list[str]], names: tuple[NameSpan, ...]) -> frozenset[str]:
    if not isinstance(measure, LineItem):
        return frozenset()
    named = frozenset(w for key, aliases in companies.items() for a in (key, *aliases)
                      for w in tokens(a)) | {w for n in names for w in tokens(text[n.start:n.end])}
    return measure_modifiers(asked_part(text), measure, named | _NOT_MEASURE | OPERATION_WORDS)


def _over_years(periods: tuple[Period, ...], question: Question) -> tuple[Period, ...]:
    """"The three-year average from FY2022 to FY2024": every fiscal year of the range."""
    span = question.year_range
    if not (question.operation.over_years and span and periods
            and all(p.kind is PeriodKind.YEAR and p.end is None for p in periods)):
        return periods
    return tuple(Period(PeriodKind.YEAR, y, months=12) for y in range(span[0], span[1] + 1))


def parse_query(text: str, aliases: dict[str, str] | None = None) -> Query:
    unit = _UNIT.search(text)
    dec = _DECIMALS.search(text)
    decimals = None
    if dec:
        word = (dec.group(1) or dec.group(2) or dec.group(3) or "").lower()
        decimals = int(word) if word.isdigit() else _DECIMAL_WORDS.get(word)
    companies = find_companies(text, aliases or {})
    names = tuple(name_spans(text, companies))
    # A definition's words ("average", "change in", its years) are the metric's, not the ask;
    # a company it names is the question's ("net income attributable to Johnson Controls").
    definitions = stated_definitions(_blanked(text, names))
    span = definition_span(definitions)
    asked = f"{text[:span[0]]} {text[span[1]:]}" if span else text
    question = operation(asked)
    if _PERCENT_CHANGE.search(asked) and question.operation != Operation.PERCENT_CHANGE:
        question = replace(question, operation=Operation.PERCENT_CHANGE)
    filing = named_filing(text)
    text_dated = _periods_text(text, filing)
    periods = parse_periods(text_dated)
    latest = max((p.year for p in periods if p.year is not None), default=None)
    asked_periods = parse_periods(_periods_text(asked, named_filing(asked))) if span else periods
    company = find_company(text, aliases or {})
    # The question's one tokenization: the Question's own words when it is the whole
    # question (the table rules read them), else the whole question's.
    words = frozenset(question.words if span is None else tokens(text))
    # the rest of a name written after its alias ("Companies" of "Marsh & McLennan Companies")
    words -= {w for n in names for w in tokens(text[n.said:n.end])}
    measure = _in_percent(text, _margin_in_dollars(text, parse_measure(text, latest, definitions)),
                          question)
    asked_periods = _years_beside_a_date(_over_years(asked_periods or periods, question),
                                         asked, question)
    year_earlier = _shifts_a_year(asked) and len(asked_periods) <= 1 and \
        question.operation == Operation.LOOKUP
    if year_earlier and asked_periods:
        asked_periods, year_earlier = (_year_back(asked_periods[0]),), False
    years = [p.year for p in asked_periods if p.year is not None]
    growth = compound_growth(measure, years) \
        if isinstance(measure, LineItem) and asks_compound_growth(asked) else None
    if growth is not None:  # one rate, read at the last year, its base years back
        measure, question = growth, replace(question, operation=Operation.LOOKUP)
        last = max(years)
        asked_periods = tuple(p for p in asked_periods if p.year == last)[:1]
    return Query(text, question, company, asked_periods, measure,
                 next(g for g in unit.groups() if g).lower().rstrip("s") if unit else None, decimals,
                 tuple(companies), filing.form, words,
                 _measure_words(text, words, companies, names), filing.year,
                 _modifiers(text, measure, companies, names), names, filing.quarter,
                 tuple(replace(parse_query(side, aliases), company=key, companies=(key,))
                       for key, side in operand_clauses(text, names)), year_earlier)


# The noun "a year earlier" may qualify before what sets it off ("the year-ago quarter, the
# three months ended July 30, 2022").
_PERIOD_NOUN = re.compile(r"\s*(?:quarter|period|(?:six |nine )?months|year)\b", re.I)
# What sets "a year earlier" off from the question's period.
_SET_OFF = re.compile(r"\s*[,):;—–]|\s+-\s")


def _shifts_a_year(text: str) -> bool:
    """Whether "a year earlier" moves the period named a year back ("the year-ago quarter of
    Q2 2025"); set off by a comma, a bracket, a colon or a dash it only describes the period
    the question names ("in Q2 2022 (the prior-year quarter, three months ended June 30,
    2022)", "And a year earlier: ... the three months ended July 31, 2022"); so does a
    bracket after it that states a period ("in the prior-year quarter (three months ended June
    30, 2022)"), or a clause after its noun that does ("the year-ago quarter, the three months
    ended July 30, 2022")."""
    m = _YEAR_EARLIER.search(text)
    if m is None or _SET_OFF.match(text, m.end()):
        return False
    noun = _PERIOD_NOUN.match(text, m.end())
    after = text[noun.end() if noun else m.end():]
    stated = re.match(r"\s*\(([^()]*)\)", after) or (
        re.match(r"(?:\s*[,:;—–]|\s+-\s)([^?]*)", after) if noun else None)
    return stated is None or not parse_periods(stated.group(1))


def _periods_text(text: str, filing: NamedFiling) -> str:
    """The question's text for the periods asked: without the named filing's period where it
    names another ("fiscal 2016, per its FY2018 10-K"), else whole (the filing's own period
    is the one asked: "Apple's net income in its 2024 10-K")."""
    return filing.rest if filing.rest != text and parse_periods(filing.rest) else text


# The fewest letters of initials a question's own words may spell out ("SD&A").
MIN_SPELLED_INITIALS = 3
# A fiscal year written as one word ("FY2021", "FY21"): a period, no measure word.
_FISCAL_YEAR = re.compile(r"^(?:fy|cy)'?\d{2,4}$")
# Words of a question that name no measure or part of a company: periods, units, rounding,
# the filing asked of ("the cover of its 10-K"), the verbs of asking for a figure ("did it
# spend", "carry on its balance sheet"), the words of asking for a size ("how large was the
# goodwill balance"), how to write its sign ("negative if cash was used"), where a balance
# sits ("goodwill allocated to the Infrastructure Software segment") (question.tokens
# has already dropped the stop words and years).
_NOT_MEASURE = frozenset("""january february march april may june july august september
october november december jan feb mar apr jun jul aug sep sept oct nov dec quarter month
three six nine twelve first second third fourth half full q1 q2 q3 q4 alone ytd date thousand million
billion m mm bn dollar usd answer round rounded decimal place nearest whole number report reported
show shown showed shows state stated states give tell much many total latest most recent percent percentage
us$ per cent cover filing form k q annual quarterly carry carried carrie spend spent pay generate generated
earn earned post posted record recorded book booked have hold held list zero one two three
four according disclosed more less higher lower larger smaller greater bigger fewer balance
amount size large big figure roughly approximately about around nearly who whom whose where
when why out inc incorporated corp corporation co ltd plc llc negative positive sign minus ie eg
decline allocated assigned deliver delivered delivers produce produced achieve achieved sell sold
sells through column columns row rows take takes took taken""".split())
# A staff count's verbs ("how many people worked at", "employ", "head count", "the size
# of its workforce"): with its nouns, all ask the number of employees, the word a filing
# labels it by.
_STAFF_VERBS = frozenset({"employ", "employed", "employs", "work", "worked", "works", "count",
                          "size"})
STAFF_NOUN = "employee"
