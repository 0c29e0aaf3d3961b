"""The measure a question names, matched against the filing's own labels: the vocabulary
(`line_items.py`) is a prior, not a gate. "Interest expense", "goodwill" or "restructuring
charges" resolve to the concept whose label (its name split into words, and the row label
the filing prints beside it) holds the question's measure words.

A concept matches when its label holds at least `MIN_RECALL` of the measure words (weighted
by how rare each word is among the filing's concepts, so "expense" counts less than
"interest"); among those, the label with the fewest other words ("Interest Expense" before
"Interest Expense Nonoperating"). For a defined metric's operand and a measure the question
narrows, a concept a primary statement prints comes first ("Deferred revenue" of the
balance sheet before the tax note's row of that name; pretax income of the income statement
before the tax note's U.S. part of it). The match becomes a `LineItem` of that one concept,
a flow when any of its facts spans a period (else a balance), so the fact rules read it as
any vocabulary item.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from enum import Enum
from functools import lru_cache

from pipeline.rag.answers.filings.fact_labels import FactLabels, split_name
from pipeline.rag.answers.filings.parts.qualifiers import STATEMENT_WORDS
from pipeline.rag.answers.measure_modifiers import measure_modifiers
from pipeline.rag.answers.question import tokens
from pipeline.rag.answers.question_words import label_stems
from pipeline.rag.answers.vocabulary.formula import PHRASE
from pipeline.rag.answers.vocabulary.formula import items as formula_items
from pipeline.rag.answers.vocabulary.formula import terms as formula_terms
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, LINE_ITEMS, Kind, LineItem
from pipeline.rag.answers.vocabulary.metrics import Metric
from pipeline.rag.answers.vocabulary.phrasing import mentions, normalized
from retriever_trt.documents.model import Fact

# Share of the question's (rarity-weighted) measure words a label must hold.
MIN_RECALL = 0.9
COVER = "dei:"
# A printed filing's row named by its label (`label_facts.py`): the statement has no other
# concept beside it, so a label with words the question does not say is another figure
# ("Interest expense, net" is no "interest expense").
PRINTED = "pdf:"
PAYMENTS = "Payments"
_COVER_ASKED = re.compile(r"\bcover\b", re.I)
# Cash paid out: "how much did it spend on buybacks" is the payment, not the value of the
# shares bought back that the equity statement shows.
_PAID_ASKED = re.compile(r"\b(?:spen[dt]|spending|paid|pay|outlays?)\b", re.I)
# Words a statement's row adds to a measure's name without making it another figure
# ("Total revenues", "Research and development expense").
_ROW_GENERIC = label_stems(["total", "expense", "expenditure"])
PURE = "pure"  # a ratio's unit
# An amount of money, or of money per something: an ISO 4217 code ("USD", "EUR/shares").
_CURRENCY = re.compile(r"[A-Z]{3}(?:/|$)")
# Units of facts that count no people or things (besides money).
_NOT_COUNT_UNITS = frozenset({"shares", PURE})
# Words a row label must have for a question holding it whole to quote it.
MIN_QUOTED_WORDS = 3
# A period's average ("Weighted Average Number Of Diluted Shares Outstanding"): the answer
# to a question that says so only, never to "shares outstanding per its cover".
_AVERAGED = label_stems(["weighted", "average"])
_EXPENSE = label_stems(["expense"])
_INCOME = label_stems(["income", "revenue", "sales", "gain", "benefit", "proceeds"])
_ATTRIBUTED = re.compile(r"\battributable to\b.*", re.I)
# Statement rows whose words are kept once read (a shelf of filings has some thousands).
ROW_CACHE = 16384
# Candidates tried, best first, until one has a fact for the periods asked.
MAX_CANDIDATES = 5
# Concepts that are not the company's figures (executive pay disclosures); the cover's
# numbers (dei:EntityPublicFloat, dei:EntityCommonStockSharesOutstanding) are.
_NOT_FIGURES = ("ecd:",)


class Preference(Enum):
    """Which of the concepts naming the measure a question's words prefer."""

    NONE = "none"
    COVER = "cover"        # "on the cover": the cover's own dei: facts
    PAID = "paid"          # "spent", "paid": the cash flow statement's payments

    def holds(self, concept: str) -> bool:
        if self is Preference.COVER:
            return concept.startswith(COVER)
        return self is Preference.PAID and concept.partition(":")[2].startswith(PAYMENTS)


def preference(question: str) -> Preference:
    if _COVER_ASKED.search(question):
        return Preference.COVER
    return Preference.PAID if _PAID_ASKED.search(question) else Preference.NONE


def _weights(concept_stems: dict[str, frozenset[str]]) -> dict[str, float]:
    """Inverse document frequency of each stem over the filing's concept labels."""
    counts = Counter(w for words in concept_stems.values() for w in words)
    n = max(len(concept_stems), 1)
    return {w: math.log(1 + n / c) for w, c in counts.items()}


def _weight(weights: dict[str, float], word: str, rarest: float) -> float:
    """A word no label holds weighs as the rarest one: "capital expenditure" is not
    matched by "Additional Paid In Capital" for lack of a word nothing could match."""
    return weights.get(word, rarest)


def labelled_items(measure_words: frozenset[str], labels: FactLabels,
                   facts: list[Fact], prefer: Preference = Preference.NONE,
                   stated_first: bool = False,
                   counted: frozenset[str] | None = None) -> list[LineItem]:
    """The filing's concepts whose labels name the measure, best first, as line items; the
    cover's own (`dei:`) first when the question asks for what the cover states, the cash
    paid (`Payments...`) first when it asks what was spent. `counted`: the question asks
    for a count (None: it does not), of things in those units when any are given: only a
    concept with a fact in such a unit answers ("how many employees" is neither
    EmployeeRelatedLiabilitiesCurrent nor the shares of an employee stock purchase plan,
    nor Home Depot's employees' age in "yearOld")."""
    if not measure_words:
        return []
    uncounted = _not_counts(facts, counted) if counted is not None else frozenset()
    concept_stems = labels.concept_stems()
    asked = label_stems(measure_words)
    weight = _weights(concept_stems)
    rarest = math.log(1 + max(len(concept_stems), 1))
    total = sum(_weight(weight, w, rarest) for w in asked)
    scored = []
    for concept, words in concept_stems.items():
        if concept.startswith(_NOT_FIGURES) or concept in uncounted:
            continue
        recall = sum(weight.get(w, 0.0) for w in asked & words) / total
        # the fewest other words of the concept's own name: "Goodwill" before "Goodwill
        # Acquired During Period" (the printed labels beside a fact may be many)
        own = label_stems(tokens(split_name(concept)))
        if concept.startswith(PRINTED) and own - asked:
            continue  # a printed row's other words name another figure ("..., net")
        if own & _AVERAGED and not asked & _AVERAGED:
            continue  # a period's weighted average is no count at a date ("outstanding")
        if recall >= MIN_RECALL:
            scored.append((not prefer.holds(concept), -recall,
                           stated_first and concept not in labels.stated,
                           not _row_says_only(labels.stated_rows.get(concept, ()), asked),
                           len(own - asked), concept))
    if not scored and _EXPENSE <= asked and asked - _EXPENSE:
        # "fuel expense" of a statement that prints "Fuel" under its operating expenses:
        # the label need not say "expense", but must name a flow, and no income
        return [i for i in labelled_items(measure_words - {"expense"}, labels, facts, prefer,
                                          stated_first, counted)
                if i.kind is Kind.FLOW and
                not concept_stems.get(i.concepts[0], frozenset()) & _INCOME]
    scored.sort()
    # a label printed in two statements ("Electric" of revenues and of plant) is a flow first
    flows = {f.concept for f in facts if f.start is not None}
    return [_item(c, flows) for *_, c in scored[:MAX_CANDIDATES]]


def _row_says_only(rows: frozenset[str] | tuple[()], asked: frozenset[str]) -> bool:
    """Whether a statement prints the concept on a row saying nothing but what is asked:
    Travelers' "Debt" before its "Fixed maturities, available for sale", whose concept's
    name (AvailableForSaleSecuritiesDebtSecurities) says "debt" as well."""
    return any(label_stems(tokens(r)) <= asked for r in rows)


def _not_counts(facts: list[Fact], units: frozenset[str]) -> frozenset[str]:
    """The concepts no fact of which counts what is asked: a count is tagged in one of
    `units` ("employee", "shares"), or when none is given, in any unit but money, shares and
    pure numbers (a share of compensation)."""
    def counts(unit: str) -> bool:
        if _CURRENCY.match(unit):  # dollars, euros per share
            return False
        if units:
            return bool(label_stems(tokens(split_name(unit))) & units)
        return unit not in _NOT_COUNT_UNITS

    counting = {unit for unit in {f.unit for f in facts} if counts(unit)}  # a filing has few
    counted = {f.concept for f in facts if f.unit in counting}
    return frozenset(f.concept for f in facts if f.concept not in counted)


def _item(concept: str, flows: set[str]) -> LineItem:
    """A filing's concept as a line item the fact rules read: a flow when any of its facts
    spans a period (`flows`), else a balance."""
    return LineItem(split_name(concept).lower(), (concept,),
                    Kind.FLOW if concept in flows else Kind.BALANCE)


def holding(items: list[LineItem], modifiers: frozenset[str], labels: FactLabels
            ) -> list[LineItem]:
    """The candidates whose labels hold every word narrowing the measure ("Deferred revenue"
    for the "deferred" of "deferred revenue": `Query.modifiers`)."""
    want = label_stems(modifiers)
    stems = labels.concept_stems()
    held = [i for i in items if want <= stems.get(i.concepts[0], frozenset())]
    return sorted(held, key=lambda i: i.concepts[0] not in labels.stated)


def phrase_words(measure: LineItem | Metric | None) -> frozenset[str]:
    """The words of every name of the measure and of the line items it is computed from:
    they name the measure, so they cannot also name a segment ("property and equipment")."""
    if measure is None:
        return frozenset()
    names = formula_items(measure.expression()) if isinstance(measure, Metric) else []
    phrases = [*measure.phrases, *(n.removeprefix(PHRASE) for n in names if n.startswith(PHRASE))]
    phrases += [p for n in names if n in BY_NAME for p in BY_NAME[n].phrases]
    return frozenset(w for p in phrases for w in tokens(p))


def phrase_items(measure: LineItem | Metric | None, labels: FactLabels,
                 facts: list[Fact], company: frozenset[str] = frozenset(),
                 part: frozenset[str] = frozenset(),
                 members: frozenset[tuple[str, str]] = frozenset()) -> dict[str, LineItem]:
    """A defined metric's operands the vocabulary lacks ("interest expense"), each resolved
    against the filing's labels; an operand no label names is left out (then missing).
    `company`: the company's name's words, which narrow no operand ("total Danaher
    stockholders' equity" is its stockholders' equity); `part`: the words naming the part
    of the company asked, which every operand is of ("Bitcoin Mining cost of revenue"), and
    `members` its dimensions: a label with a figure of that part comes first."""
    if not isinstance(measure, Metric):
        return {}
    out = {}
    # the concepts of the company's own figures: Chevron tags LongTermDebt only in its fair
    # value note (a dimension's), its balance sheet's "Long-term debt" otherwise
    tagged = {f.concept for f in facts if not f.dimensions}
    of_part = {f.concept for f in facts if members and members <= set(f.dimensions)}
    for term in formula_terms(measure.expression()):
        name = term.item
        if name.startswith(PHRASE) and name not in out:
            phrase = name.removeprefix(PHRASE)
            said = frozenset(tokens(phrase))
            found = [i for i in labelled_items(said - part or said, labels, facts,
                                               stated_first=True)
                     if not _narrower(phrase, i.concepts[0], company | part |
                                      labels.concept_words.get(i.concepts[0], frozenset()))]
            found.sort(key=lambda i: not of_part & set(i.concepts))
            if found or term.fallback:
                out[name] = found[0] if found else BY_NAME[term.fallback]
        elif name in BY_NAME and name not in out and not tagged & set(BY_NAME[name].concepts):
            # the vocabulary names the operand but the filing tags it otherwise (Colgate's
            # "Dividends paid"): its name meets the filing's labels, as a measure's does
            found = labelled_items(frozenset(tokens(name)), labels, facts, stated_first=True)
            if found:
                out[name] = found[0]
    return out


def _narrower(phrase: str, concept: str, known: frozenset[str]) -> bool:
    """Whether the phrase narrows the vocabulary item whose concept the labels gave: a
    printed filing reads "Total automotive revenues" as a row of revenue, whose figure is
    the company's total revenues, so "total automotive revenues" is not that concept. A word
    the concept's own name holds narrows nothing ("common" of "common dividends paid",
    PaymentsOfDividendsCommonStock), nor one of `known`: the company's name and the words of
    the row it is printed on ("cash" of JCI's "Payment of cash dividends")."""
    own = label_stems(tokens(split_name(concept))) | label_stems(known)
    return any(concept in item.concepts and label_stems(measure_modifiers(phrase, item)) - own
               for item in LINE_ITEMS)


def printed_as_named(text: str, measure: LineItem, labels: FactLabels,
                     facts: list[Fact], company: frozenset[str] = frozenset()) -> LineItem | None:
    """The concept a primary statement prints under the very name the question gives the
    measure, where the vocabulary's own concept sits on a row of another name: Walmart's
    "Net sales" apart from its "Total revenues" (the vocabulary reads net sales as
    revenue), J&J's "Research and development expense" apart from the in-process charges
    it tags with the vocabulary's concept. None when no row, or more than one concept, has
    that name; when the vocabulary's concept is on no statement (its row is then not known
    to be another); or when the vocabulary's row names it too, whose share it is aside ("Net loss
    attributable to Boeing shareholders" is the company's net loss, before the "Net loss"
    with its minority; "Total Walmart shareholders' equity" is Walmart's shareholders' equity,
    before the "Total shareholders' equity" with its minority). `company`: the company's
    name's words."""
    low = normalized(text)
    named = [p for p in (measure.name, *measure.phrases) if any(mentions(low, p))]
    if not named:
        return None
    asked = label_stems(tokens(max(named, key=len))) - _ROW_GENERIC
    found = {c for c, rows in labels.stated_rows.items() if any(_plain(r) == asked for r in rows)}
    # a percent of sales printed beside the amount on its row is not the amount
    found -= {f.concept for f in facts if f.concept in found and f.unit == PURE}
    present = [c for c in measure.concepts if c in labels.concept_words]
    if len(found) != 1 or found == set(present[:1]) or \
            (present and not labels.stated_rows.get(present[0])) or \
            any(_plain(r) - label_stems(company) == asked
                for c in present[:1] for r in labels.stated_rows.get(c, ())):
        return None
    concept = found.pop()
    return _item(concept, {f.concept for f in facts if f.concept == concept and f.start is not None})


@lru_cache(maxsize=ROW_CACHE)
def _plain(row: str) -> frozenset[str]:
    """A row label's words naming its figure: not whose share it is ("attributable to
    common stockholders") nor the generic "Total" or "expense". Cached: every question of a
    filing reads the same statement rows."""
    return label_stems(tokens(_ATTRIBUTED.sub("", row))) - _ROW_GENERIC


@lru_cache(maxsize=ROW_CACHE)
def _plain_name(row: str) -> frozenset[str]:
    """`_plain` of a name with its asides left out ("Capital expenditures (including
    capitalized software)" is capital expenditures)."""
    return _plain(normalized(row))


@lru_cache(maxsize=ROW_CACHE)
def _row_text(row: str) -> tuple[str, tuple[str, ...], frozenset[str]]:
    """A statement row as `quoted_rows` reads it: normalized, its words, their stems."""
    words = tuple(tokens(row))
    return normalized(row), words, label_stems(words)


# The words of a statement's line, beside the name of a part it is of ("Bitcoin Mining
# revenue").
_STATEMENT_STEMS = label_stems(STATEMENT_WORDS)


def quoted_rows(text: str, labels: FactLabels) -> set[str]:
    """The words of each statement row the question quotes whole ("cost of sales, including
    buying and occupancy costs"): they name that row's figure, not a part of the company;
    unless a part of the company has that name too (Oracle's "Cloud services and license
    support" row of revenues and its product member; Riot's "Bitcoin Mining revenue" row of
    its cash flows and its Bitcoin Mining member)."""
    low = normalized(text)
    parts = {label_stems(words) for words in labels.members.values()}
    out: set[str] = set()
    for rows in labels.stated_rows.values():
        for row in rows:
            text, words, stems = _row_text(row)
            if len(words) >= MIN_QUOTED_WORDS and stems not in parts and \
                    stems - _STATEMENT_STEMS not in parts and any(mentions(low, text)):
                out.update(words)
    return out


def rows_named_as(measure: LineItem, labels: FactLabels, items: list[LineItem]) -> list[LineItem]:
    """Of `items`, those a primary statement prints under one of the vocabulary item's
    names ("Capital expenditures (including capitalized software)" for capital
    expenditures), for a tagged filing that uses none of the item's concepts: a label that
    merely shares a word with it is another figure (TJX's "Interest (income) expense, net"
    is no revenue, Lilly's "Total current liabilities" no total liabilities)."""
    names = {_plain_name(p) for p in (measure.name, *measure.phrases)}
    return [i for i in items
            if any(_plain_name(r) in names for r in labels.stated_rows.get(i.concepts[0], ()))]
