"""What every kind of benchmarks/fact_probes.py shares: a filing read once (its facts, periods
and readable company names), a line item's fact at a period (benchmarks/filings_check.py's
resolve: the tagged fact, duplicates agreeing, shown in a row labelled as the item), the
unit a question asks in and the derivation that gets there, period phrasings, and the
record in the held-out sets' format (benchmarks/data/README.md).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path

from filings_check import Unverified, check_cell, consistent, plain, resolve
from filings_facts import Context, Fact, Filing, TextFact, cell_of, is_hidden, parse_filing
from filings_periods import ORDINAL, Kind, Period, periods_of, phrases, spoken_date
from filings_vocab import ITEMS, LineItem, Measure, Statement, possessive

# 10^3, 10^6, 10^9 as the held-out checker admits them (constants 100, 1 and 0.5 only).
POW10 = {3: "100 ** (1 + 0.5)", 6: "100 ** (1 + 0.5 + 1 + 0.5)",
         9: "100 ** (1 + 0.5 + 1 + 0.5 + 1 + 0.5)"}
MONEY_UNITS = {0: "USD", 3: "USD thousands", 6: "USD millions", 9: "USD billions"}
SHARE_UNITS = {0: "shares", 3: "thousand shares", 6: "million shares", 9: "billion shares"}
UNIT_WORDS = {
    "USD": ("in dollars",), "USD thousands": ("in thousands of dollars", "in $ thousands"),
    "USD millions": ("in millions of dollars", "in $ millions", "in USD millions"),
    "USD billions": ("in billions of dollars", "in $ billions"),
    "USD per share": ("in dollars per share", "in $ per share"),
    "shares": ("as a number of shares",), "thousand shares": ("in thousands of shares",),
    "million shares": ("in millions of shares",), "billion shares": ("in billions of shares",),
    "percent": ("in percent, to one decimal", "as a percentage rounded to one decimal place"),
}
_SUFFIX = re.compile(r"(,?\s+(inc\.?|incorporated|corp\.?|corporation|co\.?|company|ltd\.?|plc)"
                     r"|\s+&\s+(co\.?|company))$", re.IGNORECASE)
_SMALL = {"and", "of", "the", "for", "&"}


def readable_names(raw: str) -> tuple[str, ...]:
    """A registrant's name as a question says it: short first ("Apple"), then the full one
    ("Apple Inc."); title case where the filing writes capitals ("COCA COLA CO")."""
    name = raw.split("/")[0].strip()
    if name.upper() == name:
        name = " ".join(w if i and w.lower() in _SMALL else w.capitalize()
                        for i, w in enumerate(name.lower().split()))
    short = re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)
    while _SUFFIX.search(short):
        short = _SUFFIX.sub("", short).strip()
    return (short, name) if name != short else (short,)


@dataclass(eq=False)
class Doc:
    """A filing as the probes use it."""

    path: Path
    filing: Filing
    periods: dict[str, Period]
    form: str
    fiscal_year: int
    names: tuple[str, ...]
    cik: str

    @property
    def doc_id(self) -> str:
        return self.path.name

    @property
    def company(self) -> str:
        return self.names[0]

    def name(self, rng: random.Random) -> str:
        return self.names[-1] if len(self.names) > 1 and rng.random() < 0.3 else self.names[0]

    def durations(self) -> list[Period]:
        return [p for p in self.periods.values() if p.kind is not Kind.INSTANT]

    def balance_dates(self) -> list[Period]:
        return [self.periods[k] for k in ("END", "END-1") if k in self.periods]

    @property
    def main(self) -> Period | None:
        return self.periods.get("FY") or self.periods.get("Q") or self.periods.get("YTD")


@cache
def load_doc(path: Path) -> Doc | None:
    """The filing at `path`, or None when it has no dei document type or period."""
    filing = parse_filing(path)
    try:
        periods = periods_of(filing)
        fiscal_year = int(filing.dei("DocumentFiscalYearFocus"))
    except (ValueError, KeyError):
        return None
    return Doc(path, filing, periods, filing.dei("DocumentType"), fiscal_year,
               readable_names(filing.dei("EntityRegistrantName") or path.stem),
               filing.dei("EntityCentralIndexKey"))


@dataclass(frozen=True)
class Pick:
    """One tagged fact a gold rests on, with the cell that shows it."""

    fact: Fact
    cell: str
    doc_id: str

    @property
    def value(self) -> Decimal:
        """The value at the fact's scale (millions for scale 6), as the filing prints it."""
        return Decimal(plain(self.fact.value.scaleb(-self.fact.scale)))

    def ref(self, with_doc: bool = False) -> dict:
        ctx = self.fact.context
        out = {"concept": self.fact.concept, "contextRef": ctx.id, "period": period_text(ctx),
               "dimensions": dict(ctx.dims), "value": plain(self.value), "scale": self.fact.scale}
        return out | ({"doc_id": self.doc_id} if with_doc else {})


def period_text(ctx: Context) -> str:
    return f"{ctx.start}..{ctx.end}" if ctx.start else str(ctx.end)


def text_ref(t: TextFact) -> dict:
    return {"concept": t.concept, "contextRef": t.context.id, "period": period_text(t.context),
            "dimensions": dict(t.context.dims)}


def only(item: LineItem, concept: str) -> LineItem:
    return replace(item, concepts=(concept,))


@cache
def item_for(doc: Doc, key: str) -> LineItem | None:
    """The line item restricted to the one concept this filing uses for it (the first of the
    vocabulary's that resolves at some period), so every period reads the same concept."""
    item = ITEMS[key] if key in ITEMS else EXTRA_ITEMS[key]
    for concept in item.concepts:
        for p in doc.periods.values():
            if (p.kind is Kind.INSTANT) == (item.statement is Statement.BALANCE):
                try:
                    resolve(doc.filing, only(item, concept), p)
                    return only(item, concept)
                except Unverified:
                    continue
    return None


def pick(doc: Doc, key: str, period: Period) -> Pick | None:
    """The item's fact at `period`, shown in a matching row with agreeing duplicates."""
    item = item_for(doc, key)
    if item is None:
        return None
    try:
        r = resolve(doc.filing, item, period)
    except Unverified:
        return None
    if r.fact.value == 0 or (item.measure is Measure.MONEY and r.fact.unit != "iso4217:USD"):
        return None
    return Pick(r.fact, r.cell.render(), doc.doc_id)


def shown_pick(doc: Doc, facts: list[Fact], in_table: bool = True) -> Pick | None:
    """A fact of agreeing duplicates `facts` as shown. `in_table`: in a table cell whose
    caption states the fact's scale; else also outside a table, as its own text (a cover's
    share count). None when only hidden, zero or shown otherwise."""
    facts = [f for f in facts if f.value is not None]
    if not facts or not consistent(facts):
        return None
    for f in facts:
        if is_hidden(f.element) or f.value == 0:
            continue
        cell = cell_of(f)
        if cell is None:
            if not in_table:
                return Pick(f, f.shown, doc.doc_id)
            continue
        if check_cell(f, cell, Measure.MONEY if in_table else Measure.PER_SHARE) is None:
            return Pick(f, cell.render(), doc.doc_id)
    return None


def shown_decimals(text: str) -> int:
    digits = text.split("|")[-1]
    m = re.search(r"\.(\d+)", digits)
    return len(m.group(1)) if m else 0


def convert(p: Pick, target: int) -> tuple[str, Decimal]:
    """The derivation of `p`'s value in units of 10^target, and its exact value."""
    shift = p.fact.scale - target
    base = plain(p.value)
    if shift == 0:
        return base, p.value
    op = "*" if shift > 0 else "/"
    return f"{base} {op} {POW10[abs(shift)]}", p.value.scaleb(shift)


def half_up(value: Decimal, decimals: int) -> str:
    """`value` rounded half up to `decimals`, written with them all ("5.0", "-1176")."""
    return format(value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP), "f")


def money_unit(p: Pick, rng: random.Random, billions: bool = True) -> tuple[str, int, int]:
    """(unit, decimals, target scale) a money question asks in: the fact's own scale, or
    now and then billions to one decimal for a figure of a billion or more."""
    scale = p.fact.scale
    if scale not in MONEY_UNITS:
        raise Unverified(f"scale {scale}")
    if billions and scale in (3, 6) and abs(p.fact.value) >= 10 ** 9 and rng.random() < 0.25:
        return "USD billions", 1, 9
    return MONEY_UNITS[scale], shown_decimals(p.cell), scale


def unit_words(unit: str, decimals: int, rng: random.Random) -> str:
    words = rng.choice(UNIT_WORDS[unit])
    if unit.startswith("USD") and unit != "USD per share" and decimals:
        return f"{words}, to {'one decimal' if decimals == 1 else f'{decimals} decimals'}"
    return words


def when(p: Period, rng: random.Random) -> str:
    """A way to name `p` with its preposition ("in fiscal 2024", "for the six months ended
    June 30, 2025", "as of September 28, 2024")."""
    yy = f"{p.fiscal_year % 100:02d}"
    out = list(phrases(p))
    if p.kind is Kind.YEAR:
        out.append(f"in FY{yy}")
    elif p.kind is Kind.QUARTER:
        out.append(f"in Q{p.quarter} {p.fiscal_year}" if p.calendar else f"in Q{p.quarter} FY{yy}")
    elif p.kind is Kind.YEAR_TO_DATE:
        out.append(f"for the fiscal {p.fiscal_year} year-to-date period ended {spoken_date(p.end)}")
        if p.quarter == 2 and not p.calendar:
            out.append(f"in the first half of fiscal {p.fiscal_year}")
    return rng.choice(out)


def rough_when(kind: Kind, fiscal_year: int, quarter: int | None, calendar: bool,
               rng: random.Random) -> str:
    """How to name a period the filing does not hold (no exact dates: they are guesses)."""
    yy = f"{fiscal_year % 100:02d}"
    if kind is Kind.YEAR:
        out = [f"in fiscal {fiscal_year}", f"in FY{yy}", f"for fiscal year {fiscal_year}"]
        return rng.choice(out + ([f"in {fiscal_year}"] if calendar else []))
    fiscal = "" if calendar else "fiscal "
    return rng.choice([f"in the {ORDINAL[quarter]} quarter of {fiscal}{fiscal_year}",
                       f"in Q{quarter} {fiscal_year}" if calendar else f"in Q{quarter} FY{yy}"])


def year_back(d: date, years: int = 1) -> date:
    return d - timedelta(days=round(365.25 * years))


def record(doc: Doc, kind: str, question: str, answer: str | list | None, unit: str,
           decimals: int | None, facts: list[dict], derivation: str, cells: list[str],
           note: str = "", **extra: object) -> dict:
    """One question in the held-out sets' record format (id and half are set later)."""
    return {"id": "", "question": question, "type": kind, "doc_id": doc.doc_id,
            "company": doc.company, "form": doc.form, "fiscal_year": doc.fiscal_year,
            "answer": answer, "unit": unit, "decimals": decimals, "facts": facts,
            "derivation": derivation, "cells": cells, "half": "", "note": note, **extra}


def whose(name: str) -> str:
    return possessive(name)


def shared_income(doc: Doc, period: Period) -> bool:
    """Net income attributable to the company differs from the total (noncontrolling
    interests share it): "net income" alone would be ambiguous."""
    own, whole = pick(doc, "net_income", period), pick(doc, "profit_loss", period)
    return own is not None and whole is not None and own.value != whole.value


# Items the vocabulary does not name that a ratio needs.
EXTRA_ITEMS: dict[str, LineItem] = {i.key: i for i in (
    LineItem("pretax_income", ("income before income taxes",),
             ("us-gaap:IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItems"
              "NoncontrollingInterest",
              "us-gaap:IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAnd"
              "IncomeLossFromEquityMethodInvestments"),
             r"before (provision for |the provision for )?(income )?tax|pre-?tax",
             ITEMS["income_tax"].statement),
    LineItem("profit_loss", ("net income including noncontrolling interests",),
             ("us-gaap:ProfitLoss",), r"net (income|earnings|loss)", ITEMS["net_income"].statement),
)}
