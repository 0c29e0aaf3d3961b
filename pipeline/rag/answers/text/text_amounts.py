"""The amounts a sentence of a report states, and which of them a question asks for.

An amount as reports write it: a currency, a number (parenthesised when negative) and a
scale word or percent ("$1.1 billion", "£(8.1m)", "57%"); not a year, a date's day or a
list mark. Of several, the one a bracket's period label ("(2018: £12.4 million)") or a
"..., respectively" list pairs with the year asked, else the one nearest the question's
words (text_answer.py asks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from decimal import Decimal, InvalidOperation

from pipeline.rag.answers.arithmetic import plain
from retriever_trt.documents.years import YEAR_DIGITS, years_in

MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|"
          r"December)")
IS_MONTH = re.compile(rf"^{MONTH}$", re.I)  # a word that is a month's name
_CURRENCY = r"(?:(?:US|A|C|S|HK|NZ)?\$|€|£|¥|RMB\s?|USD\s?|EUR\s?|GBP\s?|INR\s?)"
_UNIT = r"(?:\s?(?:%|percent\b|per cent\b|(?:thousand|million|billion|bn|m)\b))"
# An amount as reports write it: [currency] number [scale word or %]; groups: the currency,
# the number (parenthesised when negative), the unit. A number joined to a name by a hyphen
# ("F-35", "COVID-19") is part of the name.
_AMOUNT = re.compile(rf"(?<![\w.])(?<![A-Za-z]-)({_CURRENCY})?"
                     rf"(\(?-?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?\)?)({_UNIT})?(?!\w)", re.I)
_MONTH_BEFORE = re.compile(rf"(?:{MONTH}|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
                           r"\.?\s*$", re.I)
_MONTH_AFTER = re.compile(rf"\s*{MONTH}\b", re.I)
SCALE_WORDS = {"thousand": "thousand", "million": "million", "m": "million",
               "billion": "billion", "bn": "billion", "%": "percent", "percent": "percent",
               "per cent": "percent"}
RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
# The words a list of amounts may end this many characters before its "respectively"
# ("$14.2 million and $10.8 million over the next twelve months to fund ..., respectively").
RESPECTIVELY_GAP = 80
# A bracket whose label names a period: "(2018: £12.4 million)", "(31 December 2018: INR29)".
_PERIOD_LABEL = re.compile(rf"\(([^():]*?\b{YEAR_DIGITS}(?:/\d\d)?)\s*:[^()]*\)")
# Reports name what an amount is before it ("The hurdle rate has been set at 7%, and ... up
# to 12% of growth above the hurdle rate"): a question's word after an amount is this many
# times as far from it.
AFTER_WORDS = 1.5


def figures(sentence: str) -> list[re.Match]:
    """The figures of a sentence, with or without a currency or unit: not years, days of
    dates or list marks ("(1)")."""
    out = []
    for m in _AMOUNT.finditer(sentence):
        currency, number, unit = m.group(1), m.group(2), m.group(3)
        if not (currency or unit) and (
                years_in(number) or re.fullmatch(r"\(\d{1,2}\)", number)
                or _MONTH_BEFORE.search(sentence[:m.start()])
                or _MONTH_AFTER.match(sentence[m.end():])):
            continue
        out.append(m)
    return out


def amounts(sentence: str) -> list[re.Match]:
    """The amounts of a sentence (its `figures`); only those with a currency or a unit when
    there are any: they are what a report states."""
    out = figures(sentence)
    return [m for m in out if m.group(1) or m.group(3)] or out


# The scales an amount is written in, as words: "$1.1 billion", "how many million of
# receivables" (an amount in a scale, no count: asked_spans.counted_noun).
SCALE_NAMES = frozenset({"thousand", "million", "billion"})
# The words of a unit asked, which every amount of that unit sits beside.
_UNIT_WORDS = SCALE_NAMES | frozenset({"percent", "percentage", "trillion", "dollar", "usd"})


def near(sentence: str, spans: list[re.Match], words: set[str],
          years: Sequence[int]) -> list[re.Match]:
    """The spans nearest the question's words (and the years it names), nearest first. The
    unit asked is no anchor: "percent" follows every percentage ("down 27 percent ..., with
    local price down 18 percent")."""
    low = sentence.lower()
    anchors = [m.start() for w in words if w not in _UNIT_WORDS
               for m in re.finditer(rf"\b{re.escape(w)}", low)]
    year_at = [m.start() for y in years for m in re.finditer(str(y), sentence)]

    def distance(m: re.Match) -> float:
        d = min((m.start() - a if a <= m.start() else AFTER_WORDS * (a - m.start())
                 for a in anchors), default=len(sentence))
        if year_at:
            d += 0.5 * min(abs(m.start() - a) for a in year_at)
        return d

    return sorted(spans, key=distance)


def respective(sentence: str, amounts: list[re.Match], years: Sequence[int]) -> list[re.Match]:
    """"In 2019, 2018 and 2017 ... were $131 million, $117 million and $180 million,
    respectively": the amounts of the years asked, by their places in the two lists."""
    at = RESPECTIVELY.search(sentence)
    if not years or at is None:
        return []
    listed = list(dict.fromkeys(years_in(sentence[:at.start()])))
    before = [m for m in amounts if m.start() < at.start()]
    if len(listed) < 2 or len(before) != len(listed) or any(y not in listed for y in years):
        return []
    return [before[listed.index(y)] for y in dict.fromkeys(years)]


def respective_lists(sentence: str, amounts: list[re.Match], years: Sequence[int],
                     words: Collection[str]) -> list[re.Match]:
    """"17% and 16%, respectively, of subscription revenue was from new customers, and the
    remaining 83% and 84%, respectively, from existing customers for the three months ended
    July 31, 2023 and 2022, respectively": several "respectively" lists, each as long as the
    list of years the sentence names. Of the one list whose own words (up to the next list)
    alone say a word of the question, the amounts of the years asked; [] when no one list
    does."""
    listed = list(dict.fromkeys(years_in(sentence)))
    if not years or len(listed) < 2 or any(y not in listed for y in years):
        return []
    lists, start = [], 0
    for mark in RESPECTIVELY.finditer(sentence):
        group = [m for m in amounts if start <= m.start() < mark.start()]
        lists += [group] if group else []
        start = mark.end()
    if len(lists) < 2 or any(len(group) != len(listed) for group in lists):
        return []
    low = sentence.lower()
    own = [low[group[-1].end():nxt[0].start() if nxt else len(low)]
           for group, nxt in zip(lists, [*lists[1:], None], strict=True)]
    asked = _the_one_naming(own, words)
    return [] if asked is None else [lists[asked][listed.index(y)] for y in dict.fromkeys(years)]


def of_listed_item(sentence: str, amounts: list[re.Match],
                   words: Collection[str]) -> list[re.Match]:
    """"Sales ... by geographic destination were: North America, 33%; Western Europe, 34%;
    other developed markets, 5%": of a list whose items (after its colon) a semicolon
    parts, the amounts of the one item whose words alone say a word of the question; []
    when the sentence lists no such items or names no one of them."""
    start = sentence.rfind(":", 0, sentence.find(";")) + 1
    bounds = [start, *(m.end() for m in re.finditer(";", sentence)), len(sentence)]
    items = [(a, b) for a, b in zip(bounds, bounds[1:], strict=False)
             if any(a <= m.start() < b for m in amounts)]
    if len(items) < 2:
        return []
    low = sentence.lower()
    asked = _the_one_naming([low[a:b] for a, b in items], words)
    if asked is None:
        return []
    a, b = items[asked]
    return [m for m in amounts if a <= m.start() < b]


def _named(words: Collection[str]) -> list[str]:
    """The question's words that may name what an amount is of: a date's month places it in
    time and names nothing ("July 31, 2023" follows every list)."""
    return [w for w in words if w.isalpha() and not IS_MONTH.match(w)]


def _the_one_naming(texts: Sequence[str], words: Collection[str]) -> int | None:
    """The index of the one of `texts` (lower case) that alone says a word of the question;
    None unless exactly one does."""
    said = [{w for w in _named(words) if re.search(rf"\b{re.escape(w)}", text)} for text in texts]
    alone = [i for i, ws in enumerate(said) if ws - set().union(*said[:i], *said[i + 1:])]
    return alone[0] if len(alone) == 1 else None


def by_period_label(sentence: str, amounts: list[re.Match],
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


# "increased from 59.1 million patrons to 66.4 million patrons": the earlier period's amount,
# then the later's.
_FROM = re.compile(r"\bfrom\s+$", re.I)
_TO = re.compile(r"(?:\s+[a-z]+){0,3}\s+to\s+", re.I)


def from_to(sentence: str, amounts: list[re.Match], years: Sequence[int]) -> list[re.Match]:
    """[the amount of the year asked] of "from A to B" in a sentence comparing two years: B
    for the later, A for the earlier; [] when the sentence states no such pair, or the
    question names neither year."""
    stated = sorted(set(years_in(sentence)))
    if len(stated) < 2 or not years:
        return []
    for a, b in zip(amounts, amounts[1:], strict=False):
        if _FROM.search(sentence, 0, a.start()) and _TO.fullmatch(sentence, a.end(), b.start()):
            if stated[-1] in years:
                return [b]
            return [a] if stated[0] in years else []
    return []


def listed_before_respectively(sentence: str, amounts: list[re.Match]) -> list[re.Match]:
    """"... of approximately $41.8 million, $86.3 million and $5.7 million, respectively":
    the list of amounts "respectively" closes, for a question naming its items, not years;
    [] when fewer than two."""
    at = RESPECTIVELY.search(sentence)
    if at is None:
        return []
    run: list[re.Match] = []
    for m in (m for m in amounts if m.end() <= at.start()):
        joined = run and re.fullmatch(r"\)?,?\s*(?:and\s+)?", sentence[run[-1].end():m.start()])
        run = [*run, m] if joined else [m]
    tail = sentence[run[-1].end():at.start()] if run else ""
    return run if len(run) >= 2 and len(tail) <= RESPECTIVELY_GAP else []


# The second end of a range, whose scale word is the first's too ("between $3.0 and $3.2
# billion", "$1.1-$1.3 billion").
_RANGE_END = re.compile(rf"\s*(?:and|to|-|–)\s*{_CURRENCY}?(?:\d[\d,]*)(?:\.\d+)?({_UNIT})", re.I)


def _unit(m: re.Match) -> str:
    """The amount's unit word, or that of the range it opens."""
    if m.group(3):
        return m.group(3).strip().lower()
    end = _RANGE_END.match(m.string, m.end())
    unit = end.group(1).strip().lower() if end and m.group(1) else ""
    return unit if SCALE_WORDS.get(unit, "percent") != "percent" else ""  # a scale, no percent


def scale_of(m: re.Match) -> str:
    return SCALE_WORDS.get(_unit(m), "")


def as_value(m: re.Match) -> tuple[str, str] | None:
    """An amount as the /ask contract gives numbers: a plain decimal and its scale; None
    for one in another currency than the dollar (a bare 77 would pass RMB77 million off as
    dollars: it is given as written)."""
    number, unit = m.group(2), _unit(m)
    if (m.group(1) or "$").strip() != "$":
        return None
    negative = number.startswith("(") or number.startswith("-")
    try:
        value = Decimal(number.strip("()-").replace(",", ""))
    except InvalidOperation:
        return None
    return plain(-value if negative else value), SCALE_WORDS.get(unit, "")


def _as_written(m: re.Match) -> str:
    """The amount's text; "£(8.1m)" keeps the bracket its scale letter sits inside."""
    text = m.group(0).strip()
    if text.count("(") > text.count(")") and m.string[m.end():m.end() + 1] == ")":
        text += ")"
    return text


def values(found: list[re.Match]) -> tuple[str | list[str], str]:
    """Plain numbers with their one scale; the amounts as written when their scales differ."""
    values = [as_value(m) for m in found]
    scales = {v[1] for v in values if v}
    if all(values) and len(scales) == 1:
        nums = [v[0] for v in values if v]
        return (nums[0] if len(nums) == 1 else nums), scales.pop()
    spans = [_as_written(m) for m in found]
    return (spans[0] if len(spans) == 1 else spans), ""




# What an amount's own words are: those after it up to the next amount, bracket, comma or
# "and" ("$46.4 million | is related to RSUs", "251,379 | primary services units (";
# "dividends of $7.6 billion | and share repurchases of $1.0 billion": the words after "and"
# name the next amount).
_OWN_WORDS_END = re.compile(r"[(),;]|\band\b")


def qualified(sentence: str, found: list[re.Match], words: set[str]) -> list[re.Match]:
    """[the amount a question's word qualifies]: "... $60.3 million unrecognized expense of
    which $13.9 million is related to stock options and $46.4 million is related to RSUs"
    for "related to RSUs": the last amount whose own words hold a word of the question the
    sentence says only there (the opening amount is the total the other words describe);
    [] when none does or fewer than two amounts."""
    if len(found) < 2:
        return []
    low = sentence.lower()
    # Dates ("December 31") place an amount in time, the year picks by its own rules.
    once = [w for w in _named(words) if len(re.findall(rf"\b{re.escape(w)}", low)) == 1]
    picked = []
    for m, nxt in zip(found, [*found[1:], None], strict=True):
        own = low[m.end():nxt.start() if nxt else len(low)]
        stop = _OWN_WORDS_END.search(own, 1)  # "£(8.1m)": its own bracket closes first
        own = own[:stop.start()] if stop else own
        if any(re.search(rf"\b{re.escape(w)}", own) for w in once):
            picked = [m]
    return picked


# "share repurchases of approximately $1.0 billion": an amount named by the words before it.
_OF_AMOUNT = re.compile(r"\bof\s+(?:(?:approximately|about|roughly|nearly|around|over|some)\s+)?$")
_BREAK = re.compile(r"[,;:()]|\band\b")
# Of the words before "of", this many at most name the amount after it.
NAMING_WORDS = 4


def named_before(sentence: str, found: list[re.Match], words: set[str]) -> list[re.Match]:
    """[the amount a question's word names right before it]: "a total of approximately $8.6
    billion, comprising dividends of approximately $7.6 billion and share repurchases of
    approximately $1.0 billion" for "share repurchases": of the amounts stated "X of $Y",
    the one whose X holds a word of the question the sentence says only there; [] unless
    exactly one."""
    if len(found) < 2:
        return []
    low = sentence.lower()
    once = [w for w in _named(words) if len(re.findall(rf"\b{re.escape(w)}", low)) == 1]
    picked = []
    for m, prev in zip(found, [None, *found[:-1]], strict=True):
        before = low[prev.end() if prev else 0:m.start()]
        of = _OF_AMOUNT.search(before)
        head = " ".join(_BREAK.split(before[:of.start()])[-1].split()[-NAMING_WORDS:]) if of else ""
        if any(re.search(rf"\b{re.escape(w)}", head) for w in once):
            picked.append(m)
    return picked if len(picked) == 1 else []


# The items a "respectively" list pairs its amounts with, named before them: "we owned and
# leased approximately 9.1 million ... and 5.3 million ..., respectively".
_ITEMS = re.compile(r"\b([a-z]+)((?:,\s+[a-z]+)*),?\s+and\s+([a-z]+)\b", re.I)


def item_of_respectively(sentence: str, amounts: list[re.Match],
                         asked: Callable[[str], bool]) -> list[re.Match] | None:
    """Of the amounts a "respectively" pairs with a list of items named before them, the one
    of the item the question names (`asked`: whether a word restates one of its words); []
    when the sentence pairs none so, None when it does but the question names no one item."""
    at = RESPECTIVELY.search(sentence)
    if at is None:
        return []
    for found in reversed(list(_ITEMS.finditer(sentence, 0, at.start()))):
        items = [found.group(1), *re.findall(r"[a-z]+", found.group(2), re.I), found.group(3)]
        paired = [m for m in amounts if found.end() <= m.start() < at.start()]
        if len(items) == len(paired) >= 2:
            named = [i for i, item in enumerate(items) if asked(item)]
            return [paired[named[0]]] if len(named) == 1 else None
    return []


# Amounts listed before "of" and as many items listed after it, paired in order with no
# "respectively": "generated 27% and 34% of our net sales and operating income".
_JOINED = re.compile(r",?\s+(?:and|or)\s+|,\s+")
_ITEMS_AFTER = re.compile(r"\s+of\s+(?:our|the|its|their)?\s*(?P<items>[a-z][a-z -]*?"
                          r"(?:,\s+[a-z][a-z -]*?)*,?\s+and\s+[a-z][a-z -]*?)"
                          r"(?=\s*[.,;:)]|\s+(?:in|for|during|at|from|by|as|was|were)\b|\s*$)",
                          re.I)


def item_after_amounts(sentence: str, amounts: list[re.Match],
                       asked: Callable[[str], bool]) -> list[re.Match] | None:
    """Of amounts listed before "of" and paired in order with the items listed after it,
    the one of the item whose every word the question restates (`asked`: whether a word
    restates one of its words; a word every item shares names none: "operations" says the
    "operating" of "operating income" but not its "income"); [] when the sentence pairs none
    so, None when it does but the question names no one item whole."""
    for i, first in enumerate(amounts):
        run = [first]
        for m in amounts[i + 1:]:
            if not _JOINED.fullmatch(sentence[run[-1].end():m.start()]):
                break
            run.append(m)
        after = _ITEMS_AFTER.match(sentence, run[-1].end()) if len(run) >= 2 else None
        if after is None:
            continue
        items = [item.lower().split() for item in _JOINED.split(after.group("items").strip())]
        if len(items) != len(run):
            continue
        shared = set.intersection(*map(set, items))
        named = [k for k, item in enumerate(items)
                 if all(asked(w) for w in item if w not in shared)]
        return [run[named[0]]] if len(named) == 1 else None
    return []
