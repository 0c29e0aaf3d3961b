"""The countries a question names by their code in capitals ("US", "U.S.", "UK") or by the
name the code stands for ("United States"), matched against the filing's `country:`
members (`qualifiers.asked_parts`). A code names its country only where it is no pronoun
("tell us"), no accounting term ("U.S. GAAP"), no start of a region ("United States and
Canada") and not the rest of the world ("outside the U.S.").
"""

from __future__ import annotations

import re

from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.parts.place_codes import COUNTRIES, place_name
from pipeline.rag.answers.question_words import tokens

# Question words that are a country's code only when written in capitals.
_PRONOUNS = frozenset({"us"})
# A country's two-letter code in capitals, dotted or not: "US", "U.S.", "UK".
_COUNTRY_CODE = re.compile(r"(?<![\w.])(?:[A-Z]\.[A-Z]\.|[A-Z]{2}(?![\w.]))")
# What after a country's code makes it no place: "U.S. GAAP", "US$", "U.S. federal", "U.S.
# government securities" (a kind of investment); "U.S. government customers" are the
# country's government, no Government segment's whole.
_NOT_A_PLACE = re.compile(r"\s*(?:GAAP|dollars?|federal|statutory|treasur|generally|"
                          r"government[- ](?:securities|bonds|obligations|debt|agenc|sponsored|"
                          r"treasur))|\$", re.I)
# "U.S." or "UK" naming where a figure was earned, asked of a filing that may tag no country
# (Visa's "U.S. net revenues" had been answered with its total).
_PLACE = re.compile(r"(?<![\w.])(?:U\.S\.|US|U\.K\.|UK)(?![\w$])")
# The countries a question names in full whose code it may name instead (`_COUNTRY_CODE`).
_COUNTRY_CODES = {COUNTRIES[code].lower(): code for code in ("US", "GB")}
_COUNTRY_NAME = re.compile(rf"\b(?:{'|'.join(map(re.escape, _COUNTRY_CODES))})\b", re.I)
# A place joined to the country's name: "United States and Canada" is a region of its own.
_AND_PLACE = re.compile(r"\s*(?:and|&)\s+[A-Z]")
# What before a country's code makes it the rest of the world.
_OUTSIDE = re.compile(r"(?:\bnon-?|\boutside\s+(?:of\s+)?(?:the\s+)?|\bex-?|"
                      r"\bexcluding\s+(?:the\s+)?)$", re.I)


def _names_the_country(text: str, m: re.Match) -> bool:
    """Whether a country's code or name at `m` names that country: not the rest of the world
    ("outside the U.S."), no accounting term ("U.S. GAAP"), no region it opens ("United
    States and Canada")."""
    return not _OUTSIDE.search(text[:m.start()]) and not _NOT_A_PLACE.match(text, m.end()) \
        and not _AND_PLACE.match(text, m.end())


def countries_coded(text: str) -> dict[str, frozenset[str]]:
    """The country members a question names by their code in capitals ("US", "U.S.",
    "UK"), with the words naming them; not the rest of the world ("non-U.S.", "outside the
    U.S."). Lower-case "us" is a pronoun."""
    out = {}
    for m in _COUNTRY_CODE.finditer(text):
        if _names_the_country(text, m):
            code = m.group(0).replace(".", "")
            out[f"country:{code}"] = frozenset({code.lower()})
    for m in _COUNTRY_NAME.finditer(text):  # a filing may print the code ("U.S.") alone
        if _names_the_country(text, m):
            code = _COUNTRY_CODES[m.group(0).lower()]
            out[f"country:{code}"] = frozenset({code.lower(), *tokens(m.group(0))})
    return out


def pronoun_codes(text: str) -> frozenset[str]:
    """The question's words that are pronouns, not a country's code: "us", unless it writes
    "US" in capitals somewhere ("tell us" is no United States)."""
    if any(m.group(0).replace(".", "") == "US" for m in _COUNTRY_CODE.finditer(text)):
        return frozenset()
    return _PRONOUNS


def names_a_place(text: str) -> bool:
    """Whether the question writes "U.S." or "UK" as where a figure was earned (not "U.S.
    GAAP"): it asks for a part of the company even where the filing tags no country."""
    return any(not _NOT_A_PLACE.match(text, m.end()) for m in _PLACE.finditer(text))


def country_name_words(labels: FactLabels) -> set[str]:
    """The words of the places the filing tags by code that a question may write in full
    ("United States" of country:US, printed "U.S."; "China" of country:CN)."""
    return {w for _, m in labels.members if (name := place_name(m)) for w in tokens(name)}
