"""A question's words, years and dates, as every rule reads them.

`tokens` is the one tokenizer of finrag's answer rules: a question's content words are
`tokens(question)`, computed once per request (query.parse_query keeps them as
`Query.words`; `Question.words` is the same list); the rules compare the words of table
labels, headers and sentences, tokenized the same way, with those. The years are
retriever_trt.documents.years' (one range, FIRST_YEAR..LAST_YEAR); this module adds the ways a
question names a period with them: "fiscal 2024", "FY24", "June 30, 2025".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from pipeline.rag.answers.vocabulary.phrasing import noncurrent_joined
from retriever_trt.documents.filing.metadata import parse_date
from retriever_trt.documents.years import CENTURY, YEAR, YEAR_DIGITS, years_in

_STOP = set("""a an the of in on at to for from by with and or is was were are be been what
which how much many do does did has have had as its it their our this that these those
between during over than year years fiscal fy ended ending end period value amount
respectively respective company company's group's group""".split())
_WORD = re.compile(r"[a-z0-9]+(?:'s)?")
# Finance's ampersand shorthand, spelled out: "G&A" had been the letter "g" (and a stop word),
# and "G&A expense" any expense (General Dynamics' 38,027 of costs and expenses, not its 2,427).
# "S&M" stays letters: it names no one line (a question has written it for a receivable).
SPELLED_OUT = {"sg&a": "selling general and administrative", "g&a": "general and administrative",
               "r&d": "research and development", "d&a": "depreciation and amortization",
               "m&a": "mergers and acquisitions",
               "pp&e": "property plant and equipment", "e&p": "exploration and production"}
_SHORTHAND = re.compile(r"(?<![\w&])(" + "|".join(re.escape(k) for k in SPELLED_OUT) +
                        r")(?![\w&])", re.I)
# "Spire Inc.'s": the possessive of "Inc.", not a word "s".
_ABBREVIATED_POSSESSIVE = re.compile(r"\.'s\b")
# Initials written with stops ("U.S.", "U.K."): one word, as "US", not two letters.
_INITIALS = re.compile(r"\b(?:[A-Za-z]\.){2,}")
# Digits past which a number is a figure, not a word of the question ("10-K", "q2" are).
MAX_WORD_DIGITS = 2
# Shorter words keep a final "s" ("gas", "its" are no plurals).
MIN_PLURAL = 4
# Inflections `stems` drops, longest first, keeping at least MIN_STEM letters. Fewer than
# text/span_words.word_stem drops: labels meet a question's measure by equal stems, and a
# noun in "-ment" or "-ation" names another line than its verb ("Investments" on the balance
# sheet, "investing activities" of the cash flows), so it keeps those endings (and "y").
_SUFFIXES = ("ings", "ing", "ions", "ion", "ed", "es", "e")
MIN_STEM = 4
# A noun's ending and its verb's ("acquisition" and "acquire", "issuance" and "issue"), so
# "acquiring wireless licenses" meets "Acquisitions of wireless licenses".
_NOUN_ENDINGS = (("isition", "ir"), ("uance", "u"))

# "December 31, 2024", "Jun. 30 2025": a date a question names.
_DATE = re.compile(r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2},? \d{4})\b",
                   re.I)
# "on its balance sheet", "in the cash flow statement", "additions to property, plant and
# equipment in investing activities": where a figure is printed, not what it is (but "cash
# used in investing activities" is that figure).
STATEMENT_NAMES = re.compile(
    r"\b(?:balance sheets?|income statements?|cash[- ]flows? statements?|statements? of "
    r"(?:cash flows|operations|(?:comprehensive )?income|earnings|financial (?:position|"
    r"condition)|(?:stockholders|shareholders)['’]? equity)|"
    r"(?<!used )(?<!provided )(?<!generated )(?:in|under|within) (?:the |its )?(?:investing|"
    r"financing|operating) activities(?: section)?)\b", re.I)
# "fiscal 2024", "fiscal year 2024", "FY2024", "FY '24": a fiscal year, two digits of CENTURY.
_FISCAL_YEAR = re.compile(rf"\b(?:fiscal(?: year)?|fy)\s*['’]?({YEAR_DIGITS}|\d{{2}})\b", re.I)


# Stems that name the same thing in a filing's labels (`label_stems`): "dividends paid" are
# us-gaap:PaymentsOfDividendsCommonStock; an Irish or British company's "ordinary shares" are
# its common stock.
SAME_STEMS = {"stock": "shar", "stockholder": "shareholder", "comp": "compensat",
              "paid": "payment", "pay": "payment", "ordinary": "common"}


def joined_initials(text: str) -> str:
    """"U.S." as "US": one word of initials."""
    return _INITIALS.sub(lambda m: m.group(0).replace(".", ""), text)


def spelled_out(text: str) -> str:
    """The text with finance's ampersand shorthand in words ("G&A": "general and
    administrative")."""
    if "&" not in text:  # tokens() runs on every label: most have none
        return text
    return _SHORTHAND.sub(lambda m: SPELLED_OUT[m.group(1).lower()], text)


def tokens(text: str) -> list[str]:
    """Content words, lower-cased and crudely singular ("costs" and "cost" match)."""
    out = []
    text = noncurrent_joined(joined_initials(text))
    text = spelled_out(text)
    for w in _WORD.findall(_ABBREVIATED_POSSESSIVE.sub("'s", text.lower().replace("’", "'"))):
        w = w.removesuffix("'s")
        if w in _STOP or years_in(w) or (w.isdigit() and len(w) > MAX_WORD_DIGITS):
            continue
        if len(w) >= MIN_PLURAL and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def stems(words: Iterable[str]) -> frozenset[str]:
    """`tokens`' words without their inflections, so a question's verb meets a label's noun
    ("repurchasing" and "Repurchases of common stock", "acquired" and "acquisitions")."""
    return frozenset(_stem(w) for w in words)


def label_stems(words: Iterable[str]) -> frozenset[str]:
    """`stems` with the words finance writes either way made one ("stock-based" is
    "share-based", "stockholders" "shareholders") and its shorthand spelled out ("comp"):
    a question's measure and a filing's labels meet in these."""
    return frozenset(SAME_STEMS.get(w, w) for w in stems(words))


def _stem(word: str) -> str:
    for noun, verb in _NOUN_ENDINGS:
        if word.endswith(noun) and len(word) - len(noun) >= MIN_STEM - 2:
            return word[: -len(noun)] + verb
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            return word[: -len(suffix)]
    return word


def fiscal_years(text: str) -> list[int]:
    """The fiscal years named as such, in order: "fiscal 2024", "FY24" (2024)."""
    return [int(y) if len(y) > MAX_WORD_DIGITS else CENTURY + int(y)
            for y in _FISCAL_YEAR.findall(text)]


def calendar_years(text: str) -> list[int]:
    """The four-digit years named, in order ("in 2024"; not "FY2024", one word)."""
    return [int(y) for y in YEAR.findall(text)]


def named_years(text: str) -> list[int]:
    """Every year named, fiscal or calendar, once, in the order the question names them:
    "Coca-Cola (2024) or Nike (fiscal 2025)" is 2024 then 2025, one year to each company
    in turn."""
    found = [(m.start(), int(y) if len(y) > MAX_WORD_DIGITS else CENTURY + int(y))
             for m in _FISCAL_YEAR.finditer(text) for y in (m.group(1),)]
    found += [(m.start(), int(m.group(0))) for m in YEAR.finditer(text)]
    return list(dict.fromkeys(year for _, year in sorted(found)))


def without_dates(text: str) -> str:
    """The text with each date ("June 30, 2025") blanked, one space a character."""
    return _DATE.sub(lambda m: " " * len(m.group(0)), text)


def named_dates(text: str) -> list[date]:
    """The dates named, in order: "June 30, 2025"."""
    return [d for d in (parse_date(m) for m in _DATE.findall(text)) if d]
