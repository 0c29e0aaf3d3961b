"""What a filing's cover says about the filing itself, answered from its metadata: the
trading symbol, the last day of the fiscal year or quarter asked, and the cover fields
(`CoverField`: state of incorporation, I.R.S. employer identification number, city and
state of the principal executive offices, exchange, Commission file number, telephone).
An inline-XBRL filing's metadata comes from its `dei:` facts, a PDF's from its cover page
(`retriever_trt/documents/`), so both answer alike, each citing where the value stands:
the tagged fact, or the cover's page. A sentence extract of the cover would answer with
the whole cover paragraph. A filing whose cover lacks the field gets no answer here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from enum import Enum
from typing import Any

from pipeline.rag.answers.answer_checks import asks_date
from pipeline.rag.answers.filings.fact_targets import targets
from pipeline.rag.answers.query import Query
from pipeline.rag.answers.short_answer import ShortAnswer
from retriever_trt.documents.filing.cover_page import COVER_PAGES
from retriever_trt.documents.model import CoverEntry, CoverField
from retriever_trt.store.document_store import DocumentInfo


class FilingField(Enum):
    """What a question may ask of the filing that its metadata's own fields hold."""

    TICKER = "trading symbol"
    PERIOD_END = "period end"
    OFFICES = "city and state of the principal executive offices"


Asked = FilingField | CoverField
# A count or an amount asked: no field of the cover is one.
_HOW_MANY = re.compile(r"\bhow (?:many|much)\b", re.I)
# The fields that are dates: a question asking "when" is answered by no other.
_DATES = frozenset({FilingField.PERIOD_END, CoverField.FISCAL_YEAR_END})

_OFFICES = r"(?:principal\s+(?:executive\s+)?offices?|headquarter(?:s|ed))"
# In order: the first that matches is what the question asks ("In which state is it
# incorporated" asks the incorporation, "the state of its principal executive offices" not).
_ASKS: tuple[tuple[Asked, re.Pattern[str]], ...] = (
    (CoverField.SYMBOLS, re.compile(r"\b(?:trading|ticker) symbols\b|\btickers\b|"
                                    r"\b(?:every|all|each|list)\b.*\b(?:trading|ticker) symbol\b",
                                    re.I)),
    (FilingField.TICKER, re.compile(r"\b(?:trading|ticker) symbol\b|\bticker\b", re.I)),
    (CoverField.AUDITOR_LOCATION, re.compile(
        r"\bwhere\b.*\baudit|\baudit\w*\b.*\b(?:location|city|located|office)\b|"
        rf"^(?!.*{_OFFICES}).*\b(?:location|city|office)\b.*\baudit", re.I)),
    (CoverField.AUDITOR, re.compile(
        r"\baudit(?:or|ors|ed|s|(?:ing)? firm)\b|\bregistered public accounting firm\b", re.I)),
    (CoverField.FISCAL_YEAR_END, re.compile(
        r"\bmonth and day\b|\bfiscal[- ]year[- ]end(?:ing)? date\b|"
        r"\bwhen does\b.*\bfiscal year end\b", re.I)),
    (FilingField.PERIOD_END, re.compile(
        r"\b(?:last day of|on what date did)\b.*\b(?:year|quarter)\b", re.I)),
    # "Where is its Class A common stock registered for trading?" names no exchange: where a
    # stock trades is one.
    (CoverField.EXCHANGE, re.compile(
        r"(?<!foreign )\bexchanges?\b.*\b(?:trade[sd]?|traded|listed|registered)\b|"
        r"\b(?:trade[sd]?|listed|registered)\b.*(?<!foreign )\bexchanges?\b(?! act)|"
        r"\bwhere\b.*\b(?:trade[sd]?|trading|listed)\b", re.I)),
    # after the symbols and the exchange: "on which exchange are its notes registered?"
    (CoverField.SECURITIES, re.compile(
        r"\btitles? of (?:each|every|all|the) class|\b(?:note|debt) series\b|"
        r"\b(?:every|all|each|list)\b.*\b(?:securities|notes|class(?:es)?)\b.*\bregistered\b",
        re.I)),
    (CoverField.TAX_ID, re.compile(
        r"\bemployer identification\b|\btax (?:identification|id)\b|\bEIN\b", re.I)),
    (CoverField.FILE_NUMBER, re.compile(r"\bfile number\b", re.I)),
    (CoverField.PHONE, re.compile(r"\b(?:tele)?phone number\b", re.I)),
    (CoverField.POSTAL_CODE, re.compile(r"\b(?:zip|postal)(?: ?code)?\b", re.I)),
    (CoverField.STREET, re.compile(r"\bstreet(?: address)?\b", re.I)),
    # Both where the cover states them as one address: "Bethesda, Maryland".
    (FilingField.OFFICES, re.compile(
        rf"\bcity and state\b.*\b{_OFFICES}|\b{_OFFICES}.*\bcity and state\b|"
        r"\bwhere\b.*\bprincipal\s+executive\s+offices?\b", re.I)),
    (CoverField.CITY, re.compile(rf"\bcity\b.*\b{_OFFICES}|\b{_OFFICES}.*\bcity\b", re.I)),
    (CoverField.STATE, re.compile(rf"\bstate\b.*\b{_OFFICES}|\b{_OFFICES}.*\bstate\b", re.I)),
    # "When was X incorporated?", "In what year ...": a date the prose gives, not the state.
    (CoverField.INCORPORATION, re.compile(
        r"^(?!\s*(?:when|in (?:what|which) year|what year)\b).*?(?:\bincorporat(?:ed|ion)\b|"
        r"\bjurisdiction of (?:incorporation|organization)\b)", re.I)),
)
# The kind of registered security a question lists: "note series", "classes of common stock".
_SECURITY_KIND = re.compile(r"\b(notes?|debentures?|common stock|preferred stock|warrants?)\b",
                            re.I)
# The caption the cover prints under (or over) each field: a citation's `row`.
CAPTIONS = {
    CoverField.INCORPORATION: "State or other jurisdiction of incorporation or organization",
    CoverField.TAX_ID: "I.R.S. Employer Identification No.",
    CoverField.CITY: "Address of principal executive offices",
    CoverField.STATE: "Address of principal executive offices",
    CoverField.POSTAL_CODE: "Zip Code",
    CoverField.STREET: "Address of principal executive offices",
    CoverField.EXCHANGE: "Name of each exchange on which registered",
    CoverField.FILE_NUMBER: "Commission File Number",
    CoverField.PHONE: "Registrant's telephone number, including area code",
    CoverField.AUDITOR: "Auditor Name",
    CoverField.AUDITOR_LOCATION: "Auditor Location",
    CoverField.FISCAL_YEAR_END: "Fiscal year end",
    CoverField.SYMBOLS: "Trading Symbol(s)",
    CoverField.SECURITIES: "Title of each class",
    CoverField.FORMER_NAME: "Former name, former address and former fiscal year, if changed "
                            "since last report",
}


def cover_field(question: str) -> Asked | None:
    """The field of the filing or its cover that the question asks for, or None."""
    return next((f for f, pattern in _ASKS if pattern.search(question)), None)


def answer_from_cover(query: Query, info: DocumentInfo, chunks: Sequence[Any] = ()) -> \
        ShortAnswer | None:
    """The field's value in this filing, citing where it stands (and, among the filing's
    `chunks`, the cover's passage showing it); None when the question asks for no such
    field or the filing does not state it."""
    field = cover_field(query.unnamed_text())
    if asks_date(query.text) and field not in _DATES or _HOW_MANY.search(query.text):
        # "When does the lease on its Redwood City headquarters expire?", "How many stories
        # is its headquarters building?": no field of the cover
        return None
    if field is FilingField.TICKER:
        value = info.metadata.ticker or None
    elif field is FilingField.PERIOD_END:
        ends = targets(query, info)
        value = f"{ends[-1].end:%B} {ends[-1].end.day}, {ends[-1].end.year}" if ends else None
    elif field is FilingField.OFFICES:
        return _offices(info, chunks, query.text)
    elif isinstance(field, CoverField) and field in info.metadata.cover:
        return _cited(field, info, info.metadata.cover[field], chunks, query.text)
    else:
        return None
    return ShortAnswer(value, "", "span") if value else None


def _cited(field: CoverField, info: DocumentInfo, entry: CoverEntry,
           chunks: Sequence[Any], question: str) -> ShortAnswer:
    base = {"doc_id": info.doc_id, "row": CAPTIONS[field]}
    end = info.metadata.period_end.isoformat() if info.metadata.period_end else None
    if entry.facts:  # the column is the fact's concept, as a table cell's is its period
        citations = [{**base, "column": concept, "value": text, "fact": {
            "id": fact_id, "concept": concept, "value": text, "unit": "", "start": None,
            "end": end}} for (fact_id, text), concept in zip(entry.facts, field.concepts,
                                                              strict=False)]
    else:
        citations = [{**base, "column": f"p. {entry.page}", "value": entry.value,
                      "page": entry.page}]
    chunk = _cover_chunk(entry, chunks)
    if chunk is not None:
        for c in citations:
            c["source_id"] = chunk.chunk_id
    # Several symbols or titles are several spans, as a list answers "Which trading symbols
    # ...", "List every note series registered".
    value: str | list[str] = entry.value
    if field is CoverField.SYMBOLS:
        value = entry.value.split(", ")
    elif field is CoverField.SECURITIES:
        value = _of_kind(entry.value.split("; "), question)
    return ShortAnswer(value, "", "span", citations=citations, cited=chunk,
                       cited_from="the cover page")


def _offices(info: DocumentInfo, chunks: Sequence[Any], question: str) -> ShortAnswer | None:
    """"City, State" of the principal executive offices, citing both; the city alone where
    the cover states no state (an address abroad); None without a city."""
    cover = info.metadata.cover
    if CoverField.CITY not in cover:
        return None
    city = _cited(CoverField.CITY, info, cover[CoverField.CITY], chunks, question)
    if CoverField.STATE not in cover:
        return city
    state = _cited(CoverField.STATE, info, cover[CoverField.STATE], chunks, question)
    return replace(city, short_answer=f"{city.short_answer}, {state.short_answer}",
                   citations=city.citations + state.citations)


def _of_kind(titles: list[str], question: str) -> list[str] | str:
    """The titles of the kind of security the question names ("notes", "common stock"),
    else every one; one title alone is a plain span."""
    kind = _SECURITY_KIND.search(question)
    named = [t for t in titles if kind is None or re.search(rf"\b{kind.group(1)}", t, re.I)]
    kept = named or titles
    return kept if len(kept) > 1 else kept[0]


def _cover_chunk(entry: CoverEntry, chunks: Sequence[Any]) -> Any:
    """The first passage of the cover's page (the first pages, where it is not known)
    that shows the value; None if none does."""
    pages = {str(entry.page)} if entry.page else {str(n) for n in range(1, COVER_PAGES + 1)}
    return next((c for c in chunks if c.sources.get("page") in pages and entry.value in c.text),
                None)
