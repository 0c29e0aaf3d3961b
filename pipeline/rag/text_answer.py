"""The short answer of a question from the text of the retrieved documents: an extract.

A 135M model paraphrases and rambles; a grader, a spreadsheet and a reader who checks the
source all want the report's own words. So the answer to a question about the text is cut
from it: the sentence that shares most of the question's words (each word weighted by how
rare it is among the candidate sentences), then, within it, what the question asks for: an
amount with its unit ("how much", "what was X in 2019": the amount nearest the question's
words, or the one a "..., respectively" list pairs with the year asked), a period ("how
long"), a date ("when"), the cause after "due to" / "driven by" ("why"), else the sentence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from pipeline.rag.arithmetic import plain
from pipeline.rag.question import tokens
from pipeline.rag.span_bounds import first_clause, is_heading, span_of
from retriever_trt.tables import years_in

# A sentence ends at . ! ? before a space and a capital, quote or bracket; not after a
# common abbreviation or a lone capital ("U.S. Steel", "Inc. and").
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)]?\s+(?=[A-Z“\"(])")
_ABBREVIATION = re.compile(r"(?:\b(?:Inc|Corp|Co|Ltd|No|Nos|Mr|Ms|Dr|vs|approx|etc|e\.g|i\.e|"
                           r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b[A-Z])\.$")
_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|"
          r"December)")
_CURRENCY = r"(?:(?:US|A|C|S|HK|NZ)?\$|€|£|¥|RMB\s?|USD\s?|EUR\s?|GBP\s?|INR\s?)"
_UNIT = r"(?:\s?(?:%|percent\b|per cent\b|(?:thousand|million|billion|bn|m)\b))"
# An amount as reports write it: [currency] number [scale word or %]; groups: the currency,
# the number (parenthesised when negative), the unit.
_AMOUNT = re.compile(rf"(?<![\w.])({_CURRENCY})?(\(?-?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?\)?)"
                     rf"({_UNIT})?(?!\w)", re.I)
_MONTH_BEFORE = re.compile(rf"(?:{_MONTH}|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
                           r"\.?\s*$", re.I)
_MONTH_AFTER = re.compile(rf"\s*{_MONTH}\b", re.I)
_DURATION = re.compile(r"\b(?:\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|"
                       r"twelve|fifteen|twenty|thirty)(?:\s|-)(?:years?|months?|days?|weeks?|"
                       r"quarters?)\b", re.I)
_DATE = re.compile(rf"\b{_MONTH}(?:\s+\d{{1,2}},)?\s+\d{{4}}\b|\b\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b|"
                   r"\b(?:fiscal\s+|FY\s?)?(?:19|20)\d\d\b", re.I)
_SCALE_WORDS = {"thousand": "thousand", "million": "million", "m": "million",
                "billion": "billion", "bn": "billion", "%": "percent", "percent": "percent",
                "per cent": "percent"}

# What the question asks for.
_ASKS_DURATION = re.compile(r"^\s*(?:how long|over (?:what|which) (?:period|duration)|how many "
                            r"(?:years|months|days)|in how many years|what (?:is|was) the "
                            r"(?:expected |remaining )?(?:term|period|life))\b", re.I)
_ASKS_DATE = re.compile(r"^\s*(?:when|in which (?:year|period|month)|what (?:is|was) the (?:\w+ )?"
                        r"(?:date|maturity))\b", re.I)
# "As of December 31, 2019, what was ...": a leading time phrase.
_LEAD = r"^\s*(?:(?:as of|as at|at|in|for|during) [^?]*?, )?"
_ASKS_AMOUNT = re.compile(
    _LEAD + r"(?:(?:by )?how much|how many|(?:what|which) (?:is|was|were|are|will be)(?: the)?(?: \w+){0,2}? "
    r"(?:amount|value|total|number|cost|price|rate|percentage|balance|sum|expense|fee|"
    r"revenue|income|loss|gain|liabilit\w+|asset|cash|debt|obligation|guarantee|charge))", re.I)
_ASKS_REASON = re.compile(r"^\s*why\b|\b(?:reasons?|caused?|led to|lead to|drove|driven|"
                          r"drivers?|attributable|due to|result of)\b", re.I)
# "What was the X in 2019?", "What were the X and Y, respectively?": an amount when the
# sentence states one with its currency or unit, else the sentence.
_ASKS_STATED = re.compile(_LEAD + r"(?:what|how much) (?:is|was|were|are|"
                          r"did)\b", re.I)
_RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
# The words a list of amounts may end this many characters before its "respectively"
# ("$14.2 million and $10.8 million over the next twelve months to fund ..., respectively").
RESPECTIVELY_GAP = 80
# A bracket whose label names a period: "(2018: £12.4 million)", "(31 December 2018: INR29)".
_PERIOD_LABEL = re.compile(r"\(([^():]*?\b(?:19|20)\d\d(?:/\d\d)?)\s*:[^()]*\)")
_ASKS_SHARE = re.compile(r"%|percent|proportion|\bratio\b|\brates?\b|\bshare\b|\bmargin\b|"
                         r"\bportion\b|\bpart\b|\byield\b", re.I)
# The hedge before a cause phrase: "primarily due to" is the phrase "due to".
_HEDGE = re.compile(r"^(?:primarily|mainly|largely|partly|partially) ", re.I)
# "What is the primary reason for ...", "What led to ...": the cause itself, a noun phrase,
# without the "primarily due to" that introduces it (a "why" keeps it: "due to X" answers).
_ASKS_CAUSE_ITSELF = re.compile(r"^\s*what\b.*\b(?:(?:primary|main|principal|major) reasons?|"
                                r"led to|lead to)\b", re.I)
# Where a cause starts in the sentence that gives it.
_CAUSE = re.compile(r"\b(?:primarily |mainly |largely |partly |partially )?(?:due to|driven by|"
                    r"as a result of|resulting from|attributable to|because(?: of)?|reflecting|"
                    r"caused by|owing to)\b", re.I)


@dataclass
class TextAnswer:
    """An extract: the short answer (a plain number and its scale for an amount, else the
    words as written), the sentence it is from, and the chunk holding that sentence."""

    short_answer: str | list[str]
    scale: str
    sentence: str
    chunk_id: str
    doc_id: str
    score: float   # the sentence's share of the question's (rarity-weighted) words; 0..1.1
    kind: str      # amount, stated_amount, duration, date, reason or sentence
    asked: str = "sentence"  # the kind the question asked for (kind is "sentence" when the
                             # sentence did not have it)

    @property
    def answer_type(self) -> str:
        return "multi-span" if isinstance(self.short_answer, list) else "span"


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of a document, whole again, with the chunks (overlapping word windows)
    it was cut into: an extract cites the chunk that holds its sentence."""

    doc_id: str
    chunks: tuple[Any, ...]
    text: str

    def chunk_of(self, sentence: str) -> Any:
        head = " ".join(sentence.split()[:8])
        return next((c for c in self.chunks if head in " ".join(c.text.split())), self.chunks[0])


def merge_windows(windows: Sequence[str]) -> str:
    """One text from word windows that each repeat the end of the one before."""
    words: list[str] = []
    for w in windows:
        nxt = w.split()
        k = min(len(words), len(nxt))
        while k and words[-k:] != nxt[:k]:
            k -= 1
        words += nxt[k:]
    return " ".join(words)


def document_paragraphs(chunks: Sequence[Any]) -> list[Paragraph]:
    """The paragraphs of a document's chunks (its table pieces left out), in corpus order;
    a paragraph's chunks share the id before their last "/" (the chunker's "<source>/<i>")."""
    groups: dict[str, list[Any]] = {}
    for c in chunks:
        if not getattr(c, "table", None):
            groups.setdefault(c.chunk_id.rsplit("/", 1)[0], []).append(c)
    return [Paragraph(cs[0].doc_id, tuple(cs), merge_windows([c.text for c in cs]))
            for cs in groups.values()]


def split_sentences(text: str) -> list[str]:
    out: list[str] = []
    pending = ""
    for piece in _SENTENCE_END.split(" ".join(text.split())):
        pending = f"{pending} {piece}" if pending else piece
        if not _ABBREVIATION.search(pending):
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def sentence_scores(question: str, sentences: Sequence[str]) -> list[float]:
    """Each sentence's share of the question's words, a word weighing more the fewer
    candidate sentences have it; plus 0.1 for naming the question's years."""
    # Sorted: a sum's order is fixed, so equal scores tie the same way in every process
    # (a set's order changes with the hash seed, and a float sum with its order).
    words = sorted(set(tokens(question)))
    years = set(years_in(question))
    bags = [set(tokens(s)) for s in sentences]
    n = len(bags)
    weight = {w: math.log(1 + n / (1 + sum(w in b for b in bags))) for w in words}
    total = sum(weight.values()) or 1.0
    out = []
    for s, bag in zip(sentences, bags, strict=True):
        score = sum(weight[w] for w in words if w in bag) / total
        if years:
            score += 0.1 * len(years & set(years_in(s))) / len(years)
        out.append(score)
    return out


def _amounts(sentence: str) -> list[re.Match]:
    """The amounts of a sentence, not years, days of dates or list marks ("(1)"); only those
    with a currency or a unit when there are any: they are what a report states."""
    out, stated = [], []
    for m in _AMOUNT.finditer(sentence):
        currency, number, unit = m.group(1), m.group(2), m.group(3)
        if not (currency or unit) and (
                years_in(number) or re.fullmatch(r"\(\d{1,2}\)", number)
                or _MONTH_BEFORE.search(sentence[:m.start()])
                or _MONTH_AFTER.match(sentence[m.end():])):
            continue
        out.append(m)
        if currency or unit:
            stated.append(m)
    return stated or out


def _near(sentence: str, spans: list[re.Match], words: set[str],
          years: Sequence[int]) -> list[re.Match]:
    """The spans nearest the question's words (and the years it names), nearest first."""
    low = sentence.lower()
    anchors = [m.start() for w in words for m in re.finditer(rf"\b{re.escape(w)}", low)]
    year_at = [m.start() for y in years for m in re.finditer(str(y), sentence)]

    def distance(m: re.Match) -> float:
        d = min((abs(m.start() - a) for a in anchors), default=len(sentence))
        if year_at:
            d += 0.5 * min(abs(m.start() - a) for a in year_at)
        return d

    return sorted(spans, key=distance)


def _respective(sentence: str, amounts: list[re.Match], years: Sequence[int]) -> list[re.Match]:
    """"In 2019, 2018 and 2017 ... were $131 million, $117 million and $180 million,
    respectively": the amounts of the years asked, by their places in the two lists."""
    at = _RESPECTIVELY.search(sentence)
    if not years or at is None:
        return []
    listed = list(dict.fromkeys(years_in(sentence[:at.start()])))
    before = [m for m in amounts if m.start() < at.start()]
    if len(listed) < 2 or len(before) != len(listed) or any(y not in listed for y in years):
        return []
    return [before[listed.index(y)] for y in dict.fromkeys(years)]


def _by_period_label(sentence: str, amounts: list[re.Match],
                     years: Sequence[int]) -> tuple[list[re.Match], list[re.Match]]:
    """(the amounts to choose from, the one picked): "totalled £13.0 million (2018: £12.4
    million)" states 2018's in the bracket its label opens; for 2018 that amount, for
    another year the amounts outside such brackets."""
    labelled = {}
    for bracket in _PERIOD_LABEL.finditer(sentence):
        for m in amounts:
            if bracket.start() < m.start() < bracket.end():
                labelled[m.start()] = set(years_in(bracket.group(1)))
    asked = [m for m in amounts if set(years) & labelled.get(m.start(), set())]
    if asked:
        return amounts, asked[:1]
    outside = [m for m in amounts if m.start() not in labelled]
    return (outside or amounts), []


def _listed_before_respectively(sentence: str, amounts: list[re.Match]) -> list[re.Match]:
    """"... of approximately $41.8 million, $86.3 million and $5.7 million, respectively":
    the list of amounts "respectively" closes, for a question naming its items, not years;
    [] when fewer than two."""
    at = _RESPECTIVELY.search(sentence)
    if at is None:
        return []
    run: list[re.Match] = []
    for m in (m for m in amounts if m.end() <= at.start()):
        joined = run and re.fullmatch(r"\)?,?\s*(?:and\s+)?", sentence[run[-1].end():m.start()])
        run = [*run, m] if joined else [m]
    tail = sentence[run[-1].end():at.start()] if run else ""
    return run if len(run) >= 2 and len(tail) <= RESPECTIVELY_GAP else []


def as_value(m: re.Match) -> tuple[str, str] | None:
    """An amount as the /ask contract gives numbers: a plain decimal and its scale; None
    for one in another currency than the dollar (a bare 77 would pass RMB77 million off as
    dollars: it is given as written)."""
    number, unit = m.group(2), (m.group(3) or "").strip().lower()
    if (m.group(1) or "$").strip() != "$":
        return None
    negative = number.startswith("(") or number.startswith("-")
    try:
        value = Decimal(number.strip("()-").replace(",", ""))
    except InvalidOperation:
        return None
    return plain(-value if negative else value), _SCALE_WORDS.get(unit, "")


def _as_written(m: re.Match) -> str:
    """The amount's text; "£(8.1m)" keeps the bracket its scale letter sits inside."""
    text = m.group(0).strip()
    if text.count("(") > text.count(")") and m.string[m.end():m.end() + 1] == ")":
        text += ")"
    return text


def _values(found: list[re.Match]) -> tuple[str | list[str], str]:
    """Plain numbers with their one scale; the amounts as written when their scales differ."""
    values = [as_value(m) for m in found]
    scales = {v[1] for v in values if v}
    if all(values) and len(scales) == 1:
        nums = [v[0] for v in values if v]
        return (nums[0] if len(nums) == 1 else nums), scales.pop()
    spans = [_as_written(m) for m in found]
    return (spans[0] if len(spans) == 1 else spans), ""


def kind_of(question: str) -> str:
    """What a question about the text asks for."""
    if _ASKS_DURATION.search(question):
        return "duration"
    if _ASKS_DATE.search(question):
        return "date"
    if _ASKS_AMOUNT.search(question):
        return "amount"
    if _ASKS_REASON.search(question):
        return "reason"
    if _ASKS_STATED.search(question) and (years_in(question) or _RESPECTIVELY.search(question)):
        return "stated_amount"
    return "sentence"


def extract(question: str, sentence: str, kind: str) -> tuple[str | list[str], str] | None:
    """(short answer, scale) of the kind asked, from one sentence; None when it has none
    (for a plain "sentence": when nothing is left past the words restating the question)."""
    words, years = set(tokens(question)), years_in(question)
    if kind in ("amount", "stated_amount"):
        found = _amounts(sentence)
        if not _ASKS_SHARE.search(question):  # "revenue": an amount, not a share of one
            found = [m for m in found if _SCALE_WORDS.get((m.group(3) or "").strip().lower())
                     != "percent"]
        if not found or kind == "stated_amount" and not any(m.group(1) or m.group(3) for m in found):
            return None
        found, picked = _by_period_label(sentence, found, years)
        picked = picked or _respective(sentence, found, years)
        if not picked and _RESPECTIVELY.search(question) and 2 <= len(years) <= len(found):
            picked = _near(sentence, found, words, ())[:len(years)]
        if not picked and _RESPECTIVELY.search(question) and len(years) < 2:
            picked = _listed_before_respectively(sentence, found)
        return _values(picked or _near(sentence, found, words, years)[:1])
    if kind == "duration":
        found = list(_DURATION.finditer(sentence))
        return (_near(sentence, found, words, years)[0].group(0), "") if found else None
    if kind == "date":
        found = [m for m in _DATE.finditer(sentence) if m.group(0) not in map(str, years)]
        return (_near(sentence, found, words, ())[0].group(0), "") if found else None
    if kind == "reason":
        m = _CAUSE.search(sentence)
        if m is None:
            return None
        # "What was the increase driven by?": the question's own "driven by" is no part of
        # the answer, which is what drove it; otherwise the report's words are kept whole.
        asked = _HEDGE.sub("", m.group(0)).lower() in question.lower() or \
            _ASKS_CAUSE_ITSELF.search(question) is not None
        cause = first_clause(sentence[m.end() if asked else m.start():])
        return (cause, "") if cause else None
    return span_of(question, sentence), ""


def answer_from_text(question: str, paragraphs: Sequence[Paragraph]) -> TextAnswer | None:
    """The extract from `paragraphs` (best retrieved document first); None without text."""
    cands = [(p, s) for p in paragraphs for s in split_sentences(p.text)]
    if not cands or not tokens(question):
        return None
    scores = sentence_scores(question, [s for _, s in cands])
    # A heading ("Net Cash Used In Investing Activities") shares the question's words and
    # answers nothing: any sentence that says something is chosen before one.
    says = [not is_heading(s) for _, s in cands]
    best = max(range(len(cands)), key=lambda i: (says[i], scores[i], -i))  # ties: the earlier
    paragraph, sentence = cands[best]
    kind = kind_of(question)
    got = extract(question, sentence, kind)
    if got is None:  # not the kind asked ("when" and no date): the span answering it
        got, kind = (span_of(question, sentence), ""), "sentence"
    chunk = paragraph.chunk_of(sentence)
    return TextAnswer(got[0], got[1], sentence, chunk.chunk_id, paragraph.doc_id,
                      scores[best], kind, kind_of(question))
