"""The metric a question defines for itself, so the answer follows its definition.

Analysts write definitions as "ROA is defined as: net income / (average total assets
between FY2023 and FY2024)", "Define working capital ratio as total current assets divided
by total current liabilities", "(current assets / current liabilities)" or "R&D as a
percentage of revenue". One question may define several terms ("CCC is defined as: DIO +
DSO - DPO. DIO is defined as: 365 * ..."): a term is its definition here, else a line item
(line_items.py), else a metric of the vocabulary (metrics.py). "X % margin" and "X to Y
ratio" are metrics of their line items too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.rag.answers.measure_modifiers import NOT_NARROWING, measure_modifiers
from pipeline.rag.answers.question import OPERATION_WORDS
from pipeline.rag.answers.question_words import STATEMENT_NAMES, tokens
from pipeline.rag.answers.vocabulary.formula import (
    PHRASE,
    BinOp,
    ItemTerm,
    Node,
    Op,
    Resolver,
    divides,
    parse_formula,
)
from pipeline.rag.answers.vocabulary.line_items import LINE_ITEMS, Kind, LineItem
from pipeline.rag.answers.vocabulary.metrics import ALL_METRICS, Metric, Scale
from pipeline.rag.answers.vocabulary.phrasing import (
    ASIDE,
    DOLLAR_SCALE,
    SEGMENT_MEASURE,
    mentions,
    normalized,
)

# Definitions may refer to each other; deeper than this is a loop, not a definition.
MAX_DEPTH = 4
_NAME = r"[A-Za-z][\w&'’%(),. -]{0,60}?"
# A period that ends a company's abbreviation ("Foot Locker, Inc."), not the definition.
_NOT_ABBREVIATION = r"(?<!\binc\.)(?<!\bcorp\.)(?<!\bltd\.)(?<!\bco\.)(?<!\bplc\.)"
# A colon or a dash before a quotient written with its sign introduces its definition:
# "segment margin, Q2 2023: segment profit / total sales", "effective tax rate — income taxes
# / pre-tax income" ("... Q2 2025: A divided by B" is the ask itself, `_DIVIDED`).
_INTRODUCED = r"\s*[:—–](?=[^?.;:—–]*[/÷])"
# Where a stated formula ends before its sentence does: the bracket it sits in closing ("(each
# = A / B), in percentage points"), the unit and rounding asked after it (", %, one
# decimal", "(x, two decimals)", " — x", " -- percent", ", $ millions"), or the period in
# brackets after it ("(six months ended June 30, 2023)").
_FORMULA_END = re.compile(r"(?:[,(]|\s(?:--|[—–-]))\s*(?:in |as an? |to )?(?:%|percent\w*|x\b|"
                          rf"(?:one|two|three|\d) (?:decimal|dp)\w*|{DOLLAR_SCALE})|"
                          r"\(\s*(?:for |in |during )?(?:the )?(?:three|six|nine|twelve)[- ]months?\b",
                          re.I)
# "X is defined as: ...", "X, calculated as ...", "X, taken as ...", "X, i.e. ...", "Define X
# as ...", "X = ...", "X: A / B", "X — A / B": the name, the formula.
# "compute (revenue - cost of revenue) / revenue": a formula with no name, bracketed first.
_STATED = re.compile(rf"(?:\b({_NAME})\s*(?:,\s*)?(?:(?:is |are )?(?:defined|calculated|computed|"
                     rf"taken|measured) as\b|=|(?<![(\w])i\.\s?e\.,?(?=\s)|{_INTRODUCED})|"
                     rf"\bdefine ({_NAME}) as\b|\b(?:compute|calculate)(?=\s*\())"
                     rf":?\s*(.+?)(?=[?;]|\.(?!\d){_NOT_ABBREVIATION}|$)", re.I)
# What makes a stated definition a formula: an operator between its terms (a hyphen only
# between spaces: "long-term" is a word).
_ARITHMETIC = re.compile(r"\b(?:divided by|over|plus|minus|less|times|multiplied by)\b|"
                         r"[/+*÷×]|\s[-−–]\s", re.I)
# An operand the vocabulary lacks is kept as the question's words when it is a short phrase
# of words ("interest expense"), for the filing's labels to resolve.
MAX_PHRASE_WORDS = 8
_PHRASE = re.compile(r"^[a-z][a-z&'’ ,-]*$")
_OPERATIONS = frozenset(OPERATION_WORDS)  # "average" of an operand narrows no item
# Where an operand is printed ("as listed in the cash flow statement"): no word of its name.
_AS_PRESENTED = re.compile(r"\s*,?\s*\bas (?:listed|shown|reported|presented|stated|disclosed|"
                           r"printed|given) (?:in|on)\b.*$")
# How a formula reads an item over its years ("change in X between FY2023 and FY2024").
_MODE_WORDS = frozenset(tokens("average change increase decrease between beginning ending end"))
# Share of an operand's words a vocabulary phrase must name for the operand to be that line
# item: "income from continuing operations before income taxes" is not "income taxes"
# (2 of its 5 words); such an operand goes to the filing's labels as a phrase.
MIN_NAMED_SHARE = 0.5
# A bare "(A / B)" or "A as a percentage of B": the ask itself, not a definition.
_BARE = re.compile(r"\(([^()]+/[^()]+)\)|"
                   r"\b((?:[\w&'’,-]+ |\([^()]*\) ){1,8}?as a (?:percentage|percent|%|share) of "
                   r"[\w&'’ -]+?)"
                   r"(?:\bfor\b|\bin\b|\bat\b|[,.?;]|$)", re.I)
# "operating income divided by interest expense", unbracketed or in a closing aside: the ask,
# where the question names no metric of the vocabulary (its own definition reads its operands).
_DIVIDED = re.compile(r"\b((?:[\w&'’-]+ ){1,8}?divided by [\w&'’ -]+?)"
                      r"(?:\bfor\b|\bin\b|\bat\b|[,.?;()]|$)", re.I)
# An operand that is a period, not a figure: "(both quarters ended in late June/July 2025)".
_PERIOD_WORDS = re.compile(r"\d|\b(?:quarters?|months?|weeks?|years?|ended|ending|fiscal|"
                           r"january|february|march|april|may|june|july|august|september|"
                           r"october|november|december)\b", re.I)
# What comes before a ratio's numerator in the question: its company's possessive, a year.
_SUBJECT = re.compile(r"['’]s\s+|\b(?:19|20)\d\d\b")
# "(total current assets minus total current liabilities)": a sum or difference of items.
_BARE_SUM = re.compile(r"\(([^()]+?\s(?:minus|less|plus|[-+])\s[^()]+)\)", re.I)
# A label quoted whole ("the 'Operator - Transaction fees' revenue line"): its dash is a
# word of the label, no operator.
_QUOTED = re.compile(r"(?:^|(?<=[\s(]))['‘“\"][^'’”\"]+['’”\"](?=[\s,.;:)?]|$)")
_OPERATOR = re.compile(r"\s(?:minus|less|plus|[-+])\s", re.I)
# What continues a formula after its operand's parentheses, and what opens one before them.
_IN_FORMULA = re.compile(r"^\s*(?:[/÷*×x+-]|divided\b|over\b|times\b|multiplied\b|as a\b)")
_OPEN = re.compile(r"(?:[(/÷*×+-]|\bdivided by|\bover|\btimes)\s*$")
_ASKS_RATIO = re.compile(r"\bratio\b|\bmargin\b|\brate\b|\bshare of\b|\bproportion\b")
_OVER = re.compile(r"\s*(?:/|÷|\bdivided by\b|\bover\b|\bas a (?:percentage|percent|%|share) of\b)\s*",
                   re.I)
_TO_RATIO = re.compile(r"\b([\w&'’, -]{2,60}?) to ([\w&'’, -]{2,60}?) ratio\b", re.I)
# "the ratio of total liabilities to total equity", and a ratio named by its two totals
# alone ("total liabilities to total stockholders' equity"): the first over the second.
_RATIO_OF = re.compile(r"\bratio of ([\w&'’, -]{2,60}?) to ([\w&'’ -]{2,60}?)"
                       r"(?=\s*[?,.;:(]|\s+(?:at|for|in|as|on|of)\b|$)|"
                       r"\b(total [\w&'’ -]{2,40}?) to (total [\w&'’ -]{2,40}?)"
                       r"(?=\s*[?,.;:(]|\s+(?:at|for|in|as|on|of)\b|$)", re.I)
_PERCENT = re.compile(r"percent|%", re.I)
# An operand paid for a balance ("payments for property, plant and equipment"): a flow the
# filing's labels name, not the balance.
_PAID = re.compile(r"(?:payments?|purchases?|paid|spent|spending)\b")
# A word joined to a measure's name by "and" or "&": the other half of a compound name.
_JOINED_AFTER = re.compile(r"\s+(?:and|&)\s+([\w&'-]+)")
_JOINED_BEFORE = re.compile(r"([\w&'-]+)\s+(?:and|&)\s+$")
# A term's period words ("FY2023 revenue", "fiscal 2025 net income"): `_term` reads them.
_YEAR_WORDS = re.compile(r"\b(?:fy|fiscal(?: year)?)?\s*'?(?:19|20)\d\d\b|\bfy\b", re.I)


@dataclass(frozen=True)
class Definition:
    name: str       # "" when the definition names nothing ("revenue growth, defined as ...")
    text: str       # its formula, in words
    span: tuple[int, int]


def _phrase_at(low: str, phrase: str) -> bool:
    return next(mentions(low, phrase), None) is not None


# The first and last words of every name of the vocabulary: the other half of "A and B"
# names a measure of its own when it begins (or ends) with one of them.
_FIRST_WORDS = frozenset(p.split()[0] for c in (*LINE_ITEMS, *ALL_METRICS) for p in c.phrases)
_LAST_WORDS = frozenset(p.split()[-1] for c in (*LINE_ITEMS, *ALL_METRICS) for p in c.phrases)


def _named_alone(low: str, phrase: str) -> bool:
    """Whether the text names `phrase` as a measure of its own somewhere: not as one half of
    a compound name whose other half names no measure ("sales and marketing expense" is no
    sales, "accounts payable and accrued liabilities" no accounts payable), while "revenue
    and net income" names both."""
    for m in mentions(low, phrase):
        after = _JOINED_AFTER.match(low, m.end())
        before = _JOINED_BEFORE.search(low[:m.start()])
        if (after is None or after.group(1) in _FIRST_WORDS) and \
                (before is None or before.group(1) in _LAST_WORDS):
            return True
    return False


def longest_named(text: str, candidates: tuple[LineItem, ...] | tuple[Metric, ...]
                  ) -> LineItem | Metric | None:
    """The candidate whose name or synonym the text names on its own, the longest phrase
    first."""
    low = normalized(text)
    best: tuple[int, LineItem | Metric] | None = None
    for candidate in candidates:
        for p in candidate.phrases:
            if (best is None or len(p) > best[0]) and _named_alone(low, p):
                best = (len(p), candidate)
    return best[1] if best else None


def stated_definitions(question: str) -> list[Definition]:
    return [Definition(normalized(m.group(1) or m.group(2) or ""),
                       ASIDE.sub("", _formula_part(m.group(3))).strip(), m.span())
            for m in _STATED.finditer(question)]


def _formula_part(text: str) -> str:
    """A stated formula up to its end (`_FORMULA_END`, an unbalanced closing bracket)."""
    end = _FORMULA_END.search(text)
    text = text[:end.start()] if end else text
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return text[:i]
    return text


def stated_formula(found: list[Definition]) -> str | None:
    """The first of the stated definitions that is a formula (an operator between its
    terms), in words."""
    return next((d.text for d in found if _ARITHMETIC.search(d.text)), None)


def definition_span(found: list[Definition]) -> tuple[int, int] | None:
    """From the first stated definition to the last: those words belong to the metric, not
    to what is asked of it ("defined as net income / average total assets" asks for no
    average). A bare "(A / B)" or "A as a percentage of B" is the ask itself."""
    return (found[0].span[0], found[-1].span[1]) if found else None


def _resolver(defined: dict[str, str], latest_year: int | None, depth: int = 0,
              operands: bool = False) -> Resolver:
    """Each phrase of a formula as its term. `operands`: the phrases are the two sides of a
    written-out ratio ("operating margin / total revenue"), amounts by construction: a
    metric that is itself a ratio names the filing's line of that name there (AES prints an
    "Operating margin" amount), never its percentage divided again."""
    def resolve(phrase: str) -> Node | None:
        key = _AS_PRESENTED.sub("", normalized(phrase)).strip(" :,")
        if key in defined and depth < MAX_DEPTH:
            return parse_formula(defined[key], latest_year, _resolver(defined, latest_year, depth + 1))
        item = longest_named(phrase, LINE_ITEMS)
        if SEGMENT_MEASURE.search(key):  # the segment's own measure (filings.segment_measures)
            return _phrase_term(key, item.name if item is not None else "") or \
                (ItemTerm(item.name) if item is not None else None)
        if item is not None and _names_another(key, item):
            return None  # two items with no operator read ("revenue − cost of sales")
        # "total automotive cost of revenues" is no cost of revenue: a word narrowing the
        # item sends the operand to the filing's labels
        if item is not None and _named_share(key, item) >= MIN_NAMED_SHARE and \
                not _one_half(key, item) and \
                not (item.kind is Kind.BALANCE and _PAID.match(key)) and \
                not measure_modifiers(_YEAR_WORDS.sub(" ", key), item, _OPERATIONS):
            # more words than the item's name: the filing's label holding them all first
            return (_extra_words(key, item) and _phrase_term(key, item.name)) or \
                ItemTerm(item.name)
        metric = next((m for m in ALL_METRICS if key in m.phrases), None)
        if metric is not None and not (operands and metric.scale is not Scale.AMOUNT):
            return metric.scaled()
        return _phrase_term(key) or (ItemTerm(item.name) if item is not None else None)
    return resolve


def _phrase_term(key: str, fallback: str = "") -> ItemTerm | None:
    """The operand as the question's words, for the filing's labels to resolve (`fallback`:
    the vocabulary item read where none does), when it is a short phrase of words."""
    words = _YEAR_WORDS.sub(" ", key).split()
    if words and len(words) <= MAX_PHRASE_WORDS and _PHRASE.match(" ".join(words)):
        return ItemTerm(PHRASE + " ".join(words), fallback=fallback)
    return None


def _one_half(operand: str, item: LineItem) -> bool:
    """Whether the operand names one half of an item whose name joins two ("depreciation" of
    "depreciation and amortization"): in a formula that is the half, which the filing's
    labels resolve, never the whole added to its other half again."""
    halves = item.name.split(" and ")
    words = set(tokens(_YEAR_WORDS.sub(" ", operand)))
    return len(halves) == 2 and any(words <= set(tokens(h)) for h in halves)


def _names_another(operand: str, item: LineItem) -> bool:
    """Whether the operand names a second line item on its own, outside every mention of
    `item`'s phrases: "revenue − cost of sales", its minus sign not read, is two operands,
    never "cost of sales" alone."""
    operand = STATEMENT_NAMES.sub(" ", operand)  # "from the cash flow statement" is no item
    taken = [m.span() for p in item.phrases for m in mentions(operand, p)]
    return any(o is not item and _named_alone(operand, p) and any(
        not any(a <= m.start() and m.end() <= b or _joined(operand, m.span(), (a, b))
                for a, b in taken)
        for m in mentions(operand, p)) for o in LINE_ITEMS for p in o.phrases)


def _joined(operand: str, one: tuple[int, int], other: tuple[int, int]) -> bool:
    """Whether two mentions are written one right before the other, one name of one figure
    ("cash" of "cash dividends"), not two operands an unread sign stood between."""
    first, second = sorted((one, other))
    return first[1] <= second[0] and not operand[first[1]:second[0]].strip()


def _extra_words(operand: str, item: LineItem) -> frozenset[str]:
    """The operand's words beyond the longest of the item's phrases it holds, its years,
    the statement it names, its operation ("average", "change in") and the words that leave
    a figure whole ("total", "unadjusted"): "common stock" of "net income attributable to
    common stock"."""
    words, named = _operand_words(operand, item)
    return frozenset(words - named - _OPERATIONS - NOT_NARROWING - _MODE_WORDS)


def _operand_words(operand: str, item: LineItem) -> tuple[set[str], set[str]]:
    """The operand's words less its years and the statement it names, and those of them the
    longest of the item's phrases it holds names."""
    words = set(tokens(STATEMENT_NAMES.sub(" ", _YEAR_WORDS.sub(" ", operand))))
    named = max((set(tokens(p)) & words for p in item.phrases if _phrase_at(operand, p)),
                key=len, default=set())
    return words, named


def _named_share(operand: str, item: LineItem) -> float:
    """The share of the operand's words (less its years and the statement it names) that
    the longest of the item's phrases it holds names."""
    words, named = _operand_words(operand, item)
    return len(named) / len(words) if words else 1.0


def _names(d: Definition) -> list[str]:
    """"days payable outstanding (dpo)" is known by both."""
    inner = re.findall(r"\(([^()]+)\)", d.name)
    return [n for n in (re.sub(r"\s*\([^()]*\)", "", d.name).strip(), *inner) if n]


def _bare_ratio(question: str) -> Metric | None:
    low = normalized(question)
    m = _BARE.search(low) or \
        (_DIVIDED.search(low) if longest_named(low, ALL_METRICS) is None else None)
    if not m:
        return None
    parts = _OVER.split(next(g for g in m.groups() if g).strip(), maxsplit=1)
    if len(parts) != 2:
        return None
    parts[0] = _SUBJECT.split(parts[0])[-1]  # "what was pg&e's 2017 operating income"
    top, bottom = longest_named(parts[0], LINE_ITEMS), longest_named(parts[1], LINE_ITEMS)
    scale = Scale.PERCENT if _PERCENT.search(question) else Scale.RATIO
    if top is None or bottom is None or any(SEGMENT_MEASURE.search(p) for p in parts):
        # an operand the vocabulary lacks ("electric / total operating revenues") or a
        # segment's own measure ("segment profit"): the filing's labels read it, as in a
        # stated definition
        resolve = _resolver({}, None, operands=True)
        # both named by the vocabulary: only the segment's measure is the labels' to read
        known = top is not None and bottom is not None
        terms = [ItemTerm(item.name) if known and not SEGMENT_MEASURE.search(part)
                 else resolve(part) for part, item in zip(parts, (top, bottom), strict=True)]
        if any(t is None for t in terms) or any(_PERIOD_WORDS.search(p) for p in parts):
            return None
        return Metric("defined ratio", (), scale=scale, formula=BinOp(Op.DIV, *terms))
    return Metric("defined ratio", ((top.name, 1),), bottom.name, scale,
                  "average" in normalized(parts[1]))


def _bare_amount(question: str, latest_year: int | None) -> Metric | None:
    """"working capital (total current assets minus total current liabilities)": the
    figure the parentheses compute, an amount of the items they name."""
    text = normalized(question)
    m = _BARE_SUM.search(text)
    # Inside a larger formula ("((revenue - cost of revenue) / revenue)") or a question
    # asking a ratio, the parentheses are an operand, not the figure asked.
    if m is None or _IN_FORMULA.search(text[m.end():]) or _OPEN.search(text[:m.start()]) or \
            _PERCENT.search(question) or _ASKS_RATIO.search(text) or \
            not _OPERATOR.search(_QUOTED.sub(" ", m.group(1))):
        return None
    formula = parse_formula(m.group(1), latest_year, _resolver({}, latest_year))
    if not isinstance(formula, BinOp) or divides(formula):
        return None
    return Metric("defined metric", (), scale=Scale.AMOUNT, formula=formula)


def defined_metric(question: str, found: list[Definition],
                   latest_year: int | None = None) -> Metric | None:
    """The metric the question defines (`found`: its `stated_definitions`); a year its
    definition names is read against `latest_year`, the question's latest. None when it
    defines none, or one whose terms name nothing known."""
    if not found:
        return _bare_ratio(question) or _bare_amount(question, latest_year)
    defined = {n: d.text for d in found for n in _names(d)}
    resolve = _resolver(defined, latest_year)
    scale = Scale.PERCENT if _PERCENT.search(question) else Scale.RATIO
    start, end = definition_span(found)
    asked = normalized(f"{question[:start]} {question[end:]}")
    for d in found:
        # "the EBITDA % margin ... Define EBITDA as ...": the defined amount over revenue.
        if any(_phrase_at(asked, f"{n} margin") for n in _names(d)):
            term = resolve(_names(d)[0])
            if term is not None:
                return Metric("defined margin", (), scale=Scale.PERCENT,
                              formula=BinOp(Op.DIV, term, ItemTerm("revenue")))
    formula = resolve(_names(found[0])[0]) if _names(found[0]) else \
        parse_formula(found[0].text, latest_year, resolve)
    if not isinstance(formula, BinOp):
        return None
    # "cash from operations minus capital expenditures" is an amount, shown in the unit asked.
    return Metric("defined metric", (), scale=scale if divides(formula) else Scale.AMOUNT,
                  formula=formula)


def named_metric(question: str) -> Metric | None:
    """"COGS % margin" (an item over revenue) and "capex to revenue ratio", "the ratio of
    total liabilities to total equity" (an item over another), for line items no metric of
    the vocabulary names."""
    low = normalized(question)
    scale = Scale.PERCENT if _PERCENT.search(question) else Scale.RATIO
    if (m := _TO_RATIO.search(low)) is not None:
        sides = list(m.groups())
    elif (of := _RATIO_OF.search(low)) is not None:
        sides = [g for g in of.groups() if g]  # "ratio of A to B", or "total A to total B"
    else:
        sides = []
    if sides:
        top, bottom = longest_named(sides[0], LINE_ITEMS), longest_named(sides[1], LINE_ITEMS)
        if top is not None and bottom is not None and top != bottom:
            return Metric(f"{top.name} to {bottom.name}", ((top.name, 1),), bottom.name, scale)
    m = re.search(r"\b([\w&'’, -]{2,60}?) margin\b", low)
    item = longest_named(m.group(1), LINE_ITEMS) if m else None
    if item is not None and item.name != "revenue":
        return Metric(f"{item.name} margin", ((item.name, 1),), "revenue", Scale.PERCENT)
    return None
