"""Companies as a question names them: the registrant's name as people write it, matched to
the filings' companies (`filters.company_key`: no legal words, punctuation or "The").

The aliases of a registrant (`company_aliases`), from its name on the cover and its symbol:

- its key, when of two words or more ("coca cola" of "The Coca-Cola Company") or led by a
  digit ("3m" of "3M COMPANY"), without a last word people leave out ("johnson controls" of
  "Johnson Controls International plc"), its words run together ("footlocker", "cocacola"), a
  one-letter first word with the next ("t mobile" of "T-Mobile US, Inc."), its
  possessive without the apostrophe ("mcdonalds" of "McDonald's Corporation") and "J&J" of
  "Johnson & Johnson": in any case;
- a name's initials when it has three words or more ("AMD" of "Advanced Micro Devices"):
  in capitals only;
- a one-word name and a distinctive first word ("Best" of Best Buy, "Apple"): only where
  the question writes it with a capital or as a possessive ("nvidia's revenue"), so "the
  best of", "a block of shares" name no one; a first word of three letters only as a
  capitalized possessive ("Lam's" of Lam Research);
- its trading symbol ("COST"): in capitals only, so "cost" is no company; a one-letter
  symbol ("F" of Ford) only as a possessive ("F's") or after "ticker", "symbol", "NYSE:" or
  "Nasdaq:", since "Class A", "Form 10-K" and "Schedule K" are no companies;
- a few names everybody writes that the cover does not print (NICKNAMES: "Amex");
- a former name the cover prints ("Square, Inc." over "(Former name ...)"): its aliases name
  the company by its present name, unless a filing on the shelf is still under it
  (`filings/scope.py` takes both names for one company).
- a combined report's other registrant ("Pacific Gas and Electric Company" under PG&E
  Corporation's name): its aliases name the report's company;
- the short name the filing defines for it ("references to “BXP” mean Boston Properties,
  Inc."): in capitals only, as a symbol.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from retriever_trt.documents.model import CoverField, DocumentMetadata
from retriever_trt.search.filters import company_key, without_accents

# First words that several companies share or that are common words in questions:
# "home" of "home depot" or "united" of two companies would name the wrong one.
_COMMON_FIRST_WORDS = {"home", "united", "general", "american", "first", "international",
                       "national", "bank", "union", "wells", "procter", "johnson", "coca"}
# A first word this short is no name of its own ("the", "pg")...
MIN_FIRST_WORD = 4
# ...save a word of three letters written as a capitalized possessive ("Lam's" of Lam
# Research): "The's" or "Its" are never written so.
MIN_POSSESSIVE_FIRST_WORD = 3
_POSSESSIVE = "'s"
# Words an initialism leaves out ("Bank of America" is "BA" no more than "BOA").
_NOT_INITIALS = frozenset({"and", "of", "the", "for"})
MIN_INITIALS = 3
# A name's last word people leave out when they write it ("Johnson Controls International
# plc", "Philip Morris International", "Hilton Worldwide Holdings").
_DROPPED_LAST = frozenset({"international", "holdings", "holding", "group", "worldwide"})
# Where a one-letter capital is a symbol: "ticker F", "symbol: F", "(NYSE: F)".
_SYMBOL_BEFORE = re.compile(r"\b(?i:ticker|symbol|nyse|nasdaq)\s*:?\s*\(?([A-Z])\b")
# Names people write that no cover prints, by the company key they name.
# "Google parent Alphabet", "Facebook's parent company", "the parent of Google": the word
# before "parent" names the company by what it owns, not a part of its figures.
_PARENT_OF = re.compile(r"\bparent (?:company )?of ([\w&]+)|\b([\w&]+)(?:'s)? parent\b"
                        r"(?! (?:company )?of\b)", re.I)
_ARTICLES = frozenset({"the", "a", "its", "their"})
NICKNAMES = {"american express": ("amex",), "bank of america": ("bofa",)}


def shelf_aliases(filings: Iterable[DocumentMetadata]) -> dict[str, str]:
    """alias -> company key, of the filings' registrants, their former names and the other
    registrants of a combined report (the filing's company key)."""
    filings = list(filings)
    out = company_aliases((m.company, m.ticker) for m in filings)
    for m in filings:
        key = company_key(m.company)
        former = m.cover.get(CoverField.FORMER_NAME)
        others = m.cover.get(CoverField.CO_REGISTRANTS)
        names = [*([former.value] if former else []), *(others.value.split("; ") if others else [])]
        if key and names:
            for alias in company_aliases((name, "") for name in names):
                out.setdefault(alias, key)
        short = m.cover.get(CoverField.SHORT_NAME)
        if key and short:  # in capitals only, as a symbol
            out.setdefault(short.value.upper(), key)
    return out


# A later word of a registrant's name that its own filing writes alone and capitalized this
# many times at least is a name of the company ("Disney" of "Walt Disney", "Lilly" of "Eli
# Lilly"); "Pacific" of "Union Pacific" is written after a capitalized word ("Asia Pacific"),
# "Dynamics" of "General Dynamics" in lower case half as often at least ("market dynamics").
MIN_WRITTEN_ALONE = 10
_WORD_BEFORE = re.compile(r"([\w'’&-]+)\W*$")


def written_short_names(key: str, texts: Iterable[str]) -> list[str]:
    """The later words of the company's name (`key`) its filing's `texts` write alone as a
    name, capitalized ("Disney")."""
    words = key.split()
    candidates = [(prev, w) for prev, w in zip(words, words[1:], strict=False)
                  if w.isalpha() and len(w) >= MIN_FIRST_WORD and w not in _COMMON_FIRST_WORDS]
    if not candidates:
        return []
    text = "\n".join(texts)
    out = []
    for prev, word in candidates:
        alone = 0
        for m in re.finditer(rf"\b{word.capitalize()}\b", text):
            before = _WORD_BEFORE.search(text[max(0, m.start() - 40):m.start()])
            said = before.group(1) if before else ""
            if said.lower() != prev and not said[:1].isupper():
                alone += 1
        lower = len(re.findall(rf"\b{word}\b", text))
        if alone >= MIN_WRITTEN_ALONE and 2 * lower <= alone:
            out.append(word.capitalize())
    return out


def company_aliases(names: Iterable[tuple[str, str]]) -> dict[str, str]:
    """alias -> company key, from (registrant name, ticker) pairs (see the module's list)."""
    out: dict[str, str] = {}
    firsts: dict[str, set[str]] = {}
    for name, ticker in names:
        key = company_key(name)
        if not key:
            continue
        words = key.split()
        if len(words) == 1:
            out.setdefault(key.capitalize(), key)
        else:
            out[key] = key
            if len(words) == 2 and all(w.isalpha() and len(w) > 1 for w in words):
                out.setdefault("".join(words), key)  # "Foot Locker" written "Footlocker"
            second = words[1]  # a word, not "and" or an initial ("J. M. Smucker")
            if len(words) > 2 and len(words[0]) == 1 and second.isalpha() and len(second) > 1 \
                    and second != "and":
                out.setdefault(" ".join(words[:2]), key)  # "T-Mobile" of "T-Mobile US"
        if len(words) > 2 and words[-1] in _DROPPED_LAST:
            out.setdefault(" ".join(words[:-1]), key)  # "Johnson Controls" of "... International"
        unquoted = company_key(re.sub(r"['’]", "", name))
        if unquoted != key:  # "McDonald's" written "McDonalds"
            out.setdefault(unquoted if " " in unquoted else unquoted.capitalize(), key)
        if ticker:
            out.setdefault(ticker.upper(), key)
        if len(words) == 3 and words[1] == "and":  # "P&G", "J&J"
            out.setdefault(f"{words[0][0]} and {words[2][0]}", key)
        initials = "".join(w[0] for w in words if w not in _NOT_INITIALS)
        if len(initials) >= MIN_INITIALS and initials.isalpha():
            out.setdefault(initials.upper(), key)
        for nickname in NICKNAMES.get(key, ()):
            out.setdefault(nickname, key)
        firsts.setdefault(words[0], set()).add(key)
    for first, keys in firsts.items():
        if len(keys) != 1 or first in _COMMON_FIRST_WORDS or not first.isalpha():
            continue
        if len(first) >= MIN_FIRST_WORD:
            out.setdefault(first.capitalize(), next(iter(keys)))
        elif len(first) >= MIN_POSSESSIVE_FIRST_WORD and " " in next(iter(keys)):
            out.setdefault(first.capitalize() + _POSSESSIVE, next(iter(keys)))
    return out


def _names(alias: str, words: str, cased: set[str], capitals: set[str],
           possessed: set[str]) -> bool:
    """Whether the question names `alias`: a lower-case alias in any case; a symbol or
    initials (all capitals) only in capitals; a capitalized word only written with one
    (`cased` holds the words written so, and those written as possessives); a possessive
    alias only as a capitalized possessive (`possessed`)."""
    if alias.endswith(_POSSESSIVE):
        return alias[:-len(_POSSESSIVE)] in possessed
    if alias.islower():
        return f" {alias} " in words
    if alias.isupper():
        return alias in capitals
    return alias.lower() in cased


def _capitalized(text: str) -> set[str]:
    """The words written with a capital, save those inside a longer capitalized name that
    starts past a sentence's first word: "Pacific" of "the Asia Pacific region" is no
    company's first word, but "Best" of "Did Best Buy ..." is, and "Apple" of "In FY2023
    Apple ..." (a code or a year is no name's word)."""
    out = set()
    for sentence in re.split(r"(?<=[.?!;:])\s+", text):
        words = re.findall(r"[A-Za-z0-9]+", sentence)
        for i, w in enumerate(words):
            inside = i > 1 and words[i - 1].istitle() and words[i - 1].isalpha() and \
                words[i - 1] != "The"  # "than The Boeing Company": a name's article
            if w != w.lower() and not inside:
                out.add(w.lower())
    return out


def find_companies(text: str, aliases: dict[str, str]) -> dict[str, list[str]]:
    """company key -> the aliases of it the question names, in the order first named; an
    alias inside a longer one named ("meta" in "meta platforms") counts once."""
    text = without_accents(text)
    words = f" {company_key(text)} "
    tokens = re.findall(r"[A-Za-z0-9]+", text)
    # "salesforce.com's", "Amazon.com's": the name before its web domain is the possessive
    possessives = re.findall(r"\b([A-Za-z0-9]+)(?:\.com)?['’]s\b", text)
    cased = _capitalized(text) | {p.lower() for p in possessives}
    # a one-letter capital only where it is written as a symbol (see the module's list)
    symbols = {p for p in possessives if len(p) == 1} | set(_SYMBOL_BEFORE.findall(text))
    capitals = {t for t in tokens if t.isupper() and (len(t) > 1 or t in symbols)}
    possessed = {p for p in possessives if p[:1].isupper()}
    named = sorted((a for a in aliases if _names(a, words, cased, capitals, possessed)),
                   key=len, reverse=True)
    kept: list[str] = []
    for a in named:
        if not any(f" {a.lower()} " in f" {k.lower()} " for k in kept):
            kept.append(a)
    kept.sort(key=lambda a: words.find(
        f" {company_key(a) if a.endswith(_POSSESSIVE) else a.lower()} "))
    out: dict[str, list[str]] = {}
    for a in kept:
        out.setdefault(aliases[a], []).append(a)
    return out


def find_company(text: str, aliases: dict[str, str]) -> str | None:
    """The company key of the longest alias the question names as whole words."""
    found = find_companies(text, aliases)
    return max(found, key=lambda c: max(len(a) for a in found[c])) if found else None


def as_named(text: str, alias: str) -> str | None:
    """The words the question wrote an alias with: "J&J" for "j and j", "Coca-Cola" for
    "coca cola"."""
    words = [r"(?:and|&)" if w == "and" else re.escape(w) for w in alias.split()]
    found = re.search(r"\b" + r"[\W_]*".join(words) + r"\b", text, re.I)
    return found.group(0) if found else None


# Legal words written after a company's name ("Marsh & McLennan Companies", "Linde plc", "Eli
# Lilly and Company"): the name's, never a part of the company nor its measure. Written in
# lower case, only the abbreviations are: "Where is Apple incorporated?" asks something.
_LEGAL = re.compile(r"(?:inc|incorporated|corp|corporation|co|company|companies|ltd|limited|plc|"
                    r"llc|lp|holdings?|group)\.?", re.I)
_LOWER_LEGAL = frozenset({"plc", "llc", "lp", "ltd", "inc", "corp", "co"})
_AND_COMPANY = re.compile(r",?\s+(?:and|AND|&)\s+(?:Company|COMPANY|Co\.?|CO\.?|Companies|COMPANIES)\b")
_NEXT_WORD = re.compile(r",?[\s-]+([\w&]+\.?)")
_THE_BEFORE = re.compile(r"\bthe\s+$", re.I)


def _of_the_name(word: str, own: set[str]) -> bool:
    """Whether a word written after a company's alias is still its name: a capitalized word
    of its registered name or a legal word, or a legal abbreviation."""
    if word[:1].isupper():
        return word.lower().rstrip(".") in own or _LEGAL.fullmatch(word) is not None
    return word.rstrip(".") in _LOWER_LEGAL


@dataclass(frozen=True)
class NameSpan:
    """Where a question writes a company's name: the alias found (`start`..`said`), then the
    rest of its registered name or legal words written after it ("Costco" + " Wholesale",
    "Linde" + " plc"), up to `end`."""

    key: str
    start: int
    said: int
    end: int


def written_name(text: str, span: NameSpan) -> str:
    """The company's name as the question writes it, its legal words left out: "Thermo
    Fisher" of "Thermo Fisher's", not the alias "Thermo" alone; "Apple" of "Apple Inc."."""
    words = text[span.start:span.end].split()
    while len(words) > 1 and _LEGAL.fullmatch(words[-1].rstrip(",")):
        words.pop()
    return " ".join(words).rstrip(",")


def name_spans(text: str, companies: dict[str, list[str]]) -> list[NameSpan]:
    """Each place the question names one of `companies` (`find_companies`' key -> aliases)."""
    text = without_accents(text)  # one character for one: the spans are the question's
    out = []
    for key, aliases in companies.items():
        own = set(key.split())
        for alias in aliases:
            words = [r"(?:and|&)" if w == "and" else re.escape(w).replace("'", "['’]")
                     for w in alias.split()]
            for found in re.finditer(r"\b" + r"[\W_]*".join(words) + r"\b", text, re.I):
                end = found.end()
                while (nxt := _NEXT_WORD.match(text, end)) and _of_the_name(nxt.group(1), own):
                    end = nxt.end()
                if legal := _AND_COMPANY.match(text, end):
                    end = legal.end()
                article = _THE_BEFORE.search(text, 0, found.start())  # "The TJX Companies"
                out.append(NameSpan(key, article.start() if article else found.start(),
                                    found.end(), end))
    return out


def owned_names(text: str) -> set[str]:
    """The lower-case words a question names the company's owned business by ("google" of
    "Google parent Alphabet"): they name the company asked about, not one of its parts."""
    found = {(m.group(1) or m.group(2)).lower()
             for m in _PARENT_OF.finditer(text.replace("’", "'"))}
    return found - _ARTICLES
