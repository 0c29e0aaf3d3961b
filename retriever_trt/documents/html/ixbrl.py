"""Inline XBRL: the tagged facts of an SEC filing and its `dei:` cover facts.

Every number of the statements is an `ix:nonFraction` with a concept (`name`), a context
(`contextRef` -> `xbrli:context`: the period and any dimensions), a unit, a `scale` (the
page shows value / 10**scale), a `sign` ("-" for a negative shown without one) and a
`format` (how the shown text reads). The cover facts (`dei:EntityRegistrantName`,
`dei:DocumentType`, `dei:DocumentFiscalYearFocus`, ...) are `ix:nonNumeric`; those the
cover page shows (incorporation, address, exchange, ...) become the metadata's `cover`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from retriever_trt.documents.filing.metadata import parse_date
from retriever_trt.documents.html.html_tables import local_name
from retriever_trt.documents.model import CoverEntry, CoverField, DocumentMetadata, Fact, Form

IX = "http://www.xbrl.org/2013/inlineXBRL"
XBRLI = "http://www.xbrl.org/2003/instance"
XBRLDI = "http://xbrl.org/2006/xbrldi"
_NONFRACTION = f"{{{IX}}}nonFraction"
_NONNUMERIC = f"{{{IX}}}nonNumeric"
# Shown texts that mean zero (ixt:fixed-zero, or a dash under num-dot-decimal).
_ZERO_TEXTS = {"", "-", "—", "–", "--"}
# A visible element displaying a hidden fact: style="-sec-ix-hidden:f-115".
_SEC_HIDDEN = re.compile(r"-sec-ix-hidden\s*:\s*([^;\s]+)")
# What a tag's edge may catch of the cover's punctuation: "Arlington," "Los Gatos,".
_EDGE_PUNCTUATION = " ,;:"
# A month and day as dei:CurrentFiscalYearEndDate tags it: "--12-31", or "12/31" in
# ixt:date-month-day's format.
_MONTH_DAY = re.compile(r"(?:--)?(\d{1,2})[-/](\d{1,2})")


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split())


def contexts(root: Any) -> dict[str, tuple[date | None, date, tuple[tuple[str, str], ...]]]:
    """context id -> (start or None for an instant, end, dimensions)."""
    out = {}
    for ctx in root.iter(f"{{{XBRLI}}}context"):
        period = ctx.find(f"{{{XBRLI}}}period")
        if period is None:
            continue
        instant = period.findtext(f"{{{XBRLI}}}instant")
        start = period.findtext(f"{{{XBRLI}}}startDate")
        end = instant or period.findtext(f"{{{XBRLI}}}endDate")
        if not end:
            continue
        dims = tuple(sorted((m.get("dimension", ""), (m.text or "").strip())
                            for m in ctx.iter(f"{{{XBRLDI}}}explicitMember",
                                              f"{{{XBRLDI}}}typedMember")))
        try:
            out[ctx.get("id")] = (None if instant or not start else date.fromisoformat(start.strip()),
                                  date.fromisoformat(end.strip()), dims)
        except ValueError:
            continue
    return out


def units(root: Any) -> dict[str, str]:
    """unit id -> "USD", "shares", "USD/shares", "pure"."""
    def local(el: Any) -> str:
        return "*".join((m.text or "").split(":")[-1].strip() for m in el.iter(f"{{{XBRLI}}}measure"))

    out = {}
    for unit in root.iter(f"{{{XBRLI}}}unit"):
        divide = unit.find(f"{{{XBRLI}}}divide")
        if divide is not None:
            num = divide.find(f"{{{XBRLI}}}unitNumerator")
            den = divide.find(f"{{{XBRLI}}}unitDenominator")
            out[unit.get("id")] = f"{local(num)}/{local(den)}" if num is not None and den is not None else ""
        else:
            out[unit.get("id")] = local(unit)
    return out


def _number(shown: str, fmt: str) -> Decimal | None:
    """The number a shown text stands for under its ixt format, before scale and sign."""
    t = shown.strip()
    fmt = fmt.split(":")[-1].lower()
    if fmt in ("fixed-zero", "fixedzero") or t in _ZERO_TEXTS:
        return Decimal(0)
    if "comma-decimal" in fmt or "numcommadecimal" in fmt:
        t = t.replace(".", "").replace(" ", "").replace(",", ".")
    else:
        t = t.replace(",", "").replace(" ", "")
    t = re.sub(r"[^\d.]", "", t)
    try:
        return Decimal(t) if t else None
    except InvalidOperation:
        return None


def facts(root: Any) -> list[Fact]:
    """Every `ix:nonFraction` whose context, unit and number read; ids kept for citing."""
    ctxs, unit_of = contexts(root), units(root)
    out = []
    for n, el in enumerate(root.iter(_NONFRACTION)):
        ctx = ctxs.get(el.get("contextRef", ""))
        shown = _text(el)
        number = _number(shown, el.get("format", ""))
        if ctx is None or number is None:
            continue
        try:
            scale = int(el.get("scale", "0") or 0)
            decimals = None if el.get("decimals", "INF") == "INF" else int(el.get("decimals"))
        except ValueError:
            continue
        value = number.scaleb(scale) * (-1 if el.get("sign") == "-" else 1)
        start, end, dims = ctx
        out.append(Fact(el.get("id") or f"fact-{n}", el.get("name", ""), value,
                        unit_of.get(el.get("unitRef", ""), ""), end, start, dims, decimals,
                        scale, shown))
    return out


@dataclass(frozen=True)
class CoverFact:
    """A `dei:` fact: its id and the text the cover shows for it; `shown` is False for a
    fact in `ix:hidden` that no visible element displays (its text is then the tagged
    value, which the cover may show otherwise: "DE" for "Delaware")."""

    fact_id: str
    text: str
    shown: bool = True
    # the fact's own value where the cover shows other text for it: Oracle shows the
    # period end's "2024" for its DocumentFiscalYearFocus 2025
    tagged: str = ""


def cover_facts(root: Any) -> dict[str, CoverFact]:
    """Each `dei:` fact by local name, {"EntityRegistrantName": CoverFact(..., "Apple Inc.")}:
    the first one the cover shows, else the first hidden one. A hidden fact is shown where a
    visible element names it in a `-sec-ix-hidden` style (SEC's way of tagging text whose
    value is a code), and takes that element's text."""
    displayed: dict[str, str] = {}
    for el in root.xpath("//*[contains(@style, '-sec-ix-hidden')]"):
        for fact_id in _SEC_HIDDEN.findall(el.get("style", "")):
            displayed.setdefault(fact_id, _text(el))
    shown: dict[str, CoverFact] = {}
    hidden: dict[str, CoverFact] = {}
    # a filing with several classes of securities shows a symbol and a title for each:
    # local name -> {text: fact id}, in order
    listed: dict[str, dict[str, str]] = {name: {} for name in _LISTED}
    for el in root.iter(_NONNUMERIC):
        name, fact_id = el.get("name", ""), el.get("id", "")
        if not name.startswith("dei:"):
            continue
        if not any(local_name(a.tag) == "hidden" for a in el.iterancestors()):
            text = _text(el)
            shown.setdefault(name[4:], CoverFact(fact_id, text))
            if name[4:] in listed:
                listed[name[4:]].setdefault(text.strip(_EDGE_PUNCTUATION), fact_id)
        elif fact_id in displayed:
            shown.setdefault(name[4:], CoverFact(fact_id, displayed[fact_id], tagged=_text(el)))
        else:
            hidden.setdefault(name[4:], CoverFact(fact_id, _text(el), shown=False))
    for name, found in listed.items():
        found.pop("", None)
        if found:
            shown[name] = CoverFact(next(iter(found.values())), _LISTED[name].join(found))
    return {**hidden, **shown}


# The cover facts a filing gives once a class of securities, read as one list: the symbols
# ", "-joined, the titles "; "-joined (a title may hold a comma: "Common Stock, $0.01 par").
_LISTED = {"TradingSymbol": ", ", "Security12bTitle": "; "}


def cover_fields(cover: dict[str, CoverFact]) -> dict[CoverField, CoverEntry]:
    """The cover fields the cover shows, as it shows them ("Arlington," is "Arlington");
    a field only tagged hidden is left out, since its code is not what the cover says."""
    out = {}
    for f in (f for f in CoverField if f.concepts):
        parts = [cover.get(c.removeprefix("dei:")) for c in f.concepts]
        if f is CoverField.FISCAL_YEAR_END and parts[0] is not None and not parts[0].shown:
            parts = [_month_day(parts[0])]  # a date has one reading: "--12-31" is December 31
        if not all(p is not None and p.shown for p in parts):
            continue
        texts = [p.text.strip(_EDGE_PUNCTUATION) for p in parts]
        if not all(texts):
            continue
        value = " ".join(texts)
        if f is CoverField.PHONE:  # area code "408" or "(408)", then "996-1010"
            value = f"({texts[0].strip('()')}) {texts[1]}"
        out[f] = CoverEntry(value, tuple((p.fact_id, t) for p, t in zip(parts, texts, strict=True)))
    return out


def _month_day(fact: CoverFact) -> CoverFact | None:
    """A hidden month-and-day fact ("--12-31", "12/31") as a reader writes it, shown."""
    found = _MONTH_DAY.fullmatch(fact.text.strip())
    if found is None or not 1 <= int(found.group(1)) <= 12:
        return None
    return CoverFact(fact.fact_id, f"{calendar.month_name[int(found.group(1))]} "
                                   f"{int(found.group(2))}")


def metadata_from_cover(cover: dict[str, CoverFact]) -> DocumentMetadata:
    """Metadata from the dei facts; fields the filing does not tag stay empty."""
    def text(name: str) -> str:
        return cover[name].text if name in cover else ""

    focus = cover.get("DocumentFiscalYearFocus")
    year = (focus.tagged or focus.text).strip() if focus is not None else ""
    return DocumentMetadata(
        company=text("EntityRegistrantName"),
        ticker=text("TradingSymbol").split(",")[0].upper(),
        form=Form.parse(text("DocumentType")),
        fiscal_year=int(year) if year.isdigit() else None,
        fiscal_period=text("DocumentFiscalPeriodFocus").upper(),
        period_end=parse_date(text("DocumentPeriodEndDate")),
        cover=cover_fields(cover))
