"""The kinds of benchmarks/fact_probes.py beyond one statement line: `compare` (two filings'
same item at matching periods) and `cover` (the dei facts of the cover page).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator

from fact_probes_core import (
    MONEY_UNITS,
    SHARE_UNITS,
    Doc,
    Pick,
    convert,
    half_up,
    pick,
    record,
    shared_income,
    shown_decimals,
    shown_pick,
    text_ref,
    unit_words,
    whose,
)
from filings_facts import TextFact
from filings_periods import MONTHS_OF_QUARTERS, ORDINAL, spoken_date
from filings_vocab import ITEMS, Statement

COMPARE_ITEMS = ("revenue", "net_income", "operating_income", "total_assets", "ocf")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
TEXT, LIST = "text", "list"


def matching_periods(a: Doc, b: Doc) -> Iterator[tuple[str, str]]:
    """(period key, phrase) of the periods both filings hold alike: the same fiscal year of
    two 10-Ks, the same calendar quarter (and year to date) of two 10-Qs."""
    pa, pb = a.main, b.main
    if pa is None or pb is None or a.form != b.form or a.fiscal_year != b.fiscal_year:
        return
    fy, calendar = a.fiscal_year, pa.calendar and pb.calendar
    if a.form == "10-K":
        yield "FY", f"in {fy}" if calendar else f"in fiscal {fy}"
        yield "END", f"at the end of fiscal {fy}"
        return
    q = a.periods.get("Q")
    if not (calendar and q and "Q" in b.periods and abs((q.end - b.periods["Q"].end).days) <= 7
            and q.quarter == b.periods["Q"].quarter):
        return
    yield "Q", f"in the {ORDINAL[q.quarter]} quarter of {fy}"
    if "YTD" in a.periods and "YTD" in b.periods:
        yield "YTD", (f"in the first half of {fy}" if q.quarter == 2 else
                      f"in the first {MONTHS_OF_QUARTERS[q.quarter]} months of {fy}")
    if a.periods["END"].end == b.periods["END"].end:
        yield "END", f"as of {spoken_date(q.end)}"


def compare_probes(doc: Doc, others: list[Doc], rng: random.Random) -> Iterator[dict]:
    """Each pair once (under the filing that sorts first), one question per item and period."""
    for other in others:
        if other.cik == doc.cik or other.doc_id <= doc.doc_id:
            continue
        for key, phrase in matching_periods(doc, other):
            balance = key == "END"
            for item in COMPARE_ITEMS:
                if (ITEMS[item].statement is Statement.BALANCE) != balance:
                    continue
                if item == "net_income" and (shared_income(doc, doc.periods[key])
                                             or shared_income(other, other.periods[key])):
                    continue
                pa, pb = pick(doc, item, doc.periods[key]), pick(other, item, other.periods[key])
                if pa is not None and pb is not None and pa.fact.value != pb.fact.value:
                    yield _compare(doc, other, item, phrase, pa, pb, rng)


def _compare(a: Doc, b: Doc, item: str, phrase: str, pa: Pick, pb: Pick,
             rng: random.Random) -> dict:
    name = ITEMS[item].names[0]
    form = rng.choice(("higher", "lower", "difference", "sum"))
    if form in ("higher", "lower"):
        hi = pa.fact.value > pb.fact.value
        answer = a if hi == (form == "higher") else b
        question = (f"Which had {form} {name} {phrase}: {a.name(rng)} or {b.name(rng)}?")
        return record(a, "compare", question, answer.company, TEXT, None,
                      [pa.ref(True), pb.ref(True)],
                      f"{form} of {pa.value} x 10^{pa.fact.scale} and {pb.value} x 10^{pb.fact.scale}",
                      [pa.cell, pb.cell], doc_ids=[a.doc_id, b.doc_id], pick=form,
                      operands=[a.company, b.company])
    if form == "difference" and pa.fact.value < pb.fact.value:
        a, b, pa, pb = b, a, pb, pa
    target = max(pa.fact.scale, pb.fact.scale)
    decimals = max(shown_decimals(pa.cell), shown_decimals(pb.cell)) \
        if pa.fact.scale == pb.fact.scale else 0
    (da, xa), (db, xb) = convert(pa, target), convert(pb, target)
    unit = MONEY_UNITS[target]
    units = unit_words(unit, decimals, rng)
    if form == "difference":
        question = (f"How much more {name} did {a.name(rng)} report than {b.name(rng)} {phrase}? "
                    f"Answer {units}.")
        derivation, exact = f"{da} - {db}", xa - xb
    else:
        question = f"What was the combined {name} of {a.name(rng)} and {b.name(rng)} {phrase}, {units}?"
        derivation, exact = f"{da} + {db}", xa + xb
    return record(a, "compare", question, half_up(exact, decimals), unit, decimals,
                  [pa.ref(True), pb.ref(True)], derivation, [pa.cell, pb.cell],
                  doc_ids=[a.doc_id, b.doc_id])


def text_span(shown: str) -> str:
    return shown.strip().rstrip(",;:").strip()


def _agreed(doc: Doc, concept: str) -> TextFact | None:
    found = doc.filing.text(concept)
    return found[0] if found and len({text_span(t.shown).lower() for t in found}) == 1 else None


def month_day(shown: str) -> str | None:
    m = re.fullmatch(r"-*(\d{1,2})[-/](\d{1,2})", shown.strip())
    if m:
        return f"{MONTHS[int(m.group(1)) - 1]} {int(m.group(2))}"
    m = re.fullmatch(r"([A-Za-z]+)\s+(\d{1,2})", shown.strip())
    month = m and next((x for x in MONTHS if x.lower() == m.group(1).lower()), None)
    return f"{month} {int(m.group(2))}" if month else None


def text_facts(doc: Doc, rng: random.Random) -> Iterator[dict]:
    co, of = doc.name(rng), f"its {doc.form} for fiscal {doc.fiscal_year}"
    asks = {"dei:AuditorName": [f"Who is {whose(co)} independent auditor, per {of}?",
                                f"Which audit firm signed the opinion in {whose(co)} {doc.form} "
                                f"for fiscal {doc.fiscal_year}?"],
            "dei:AuditorLocation": [f"In which city is the office of {whose(co)} auditor that "
                                    f"signed the opinion in {of}? Give city and state.",
                                    f"Where (city, state) is {whose(co)} auditor located, per {of}?"],
            "dei:CurrentFiscalYearEndDate": [f"On what month and day does {whose(co)} fiscal "
                                             f"year end, per the cover of {of}?"]}
    for concept, questions in asks.items():
        t = _agreed(doc, concept)
        answer = t and (month_day(t.shown) if concept.endswith("EndDate") else text_span(t.shown))
        if answer:
            yield record(doc, "cover", rng.choice(questions), answer, TEXT, None, [text_ref(t)],
                         answer, [t.shown])


def symbols(doc: Doc, rng: random.Random) -> Iterator[dict]:
    found = doc.filing.text("dei:TradingSymbol") + doc.filing.text("dei:TradingSymbol", dims=True)
    spans = list(dict.fromkeys(text_span(t.shown) for t in found if text_span(t.shown)))
    if spans:
        co = doc.name(rng)
        question = rng.choice([f"List every trading symbol on the cover of {whose(co)} "
                               f"{doc.form} for fiscal {doc.fiscal_year}.",
                               f"What are all the trading symbols registered on {whose(co)} "
                               f"{doc.form} cover page (every class and note)?"])
        yield record(doc, "cover", question, spans, LIST, None, [text_ref(t) for t in found],
                     ", ".join(spans), [t.shown for t in found])


def class_name(label: str, member: str) -> str:
    said = re.sub(r"[$]", "", label).strip()
    if "class" in said.lower():
        return said if "stock" in said.lower() else f"{said} common stock"
    m = re.search(r"Class([A-Z]\d?)", member)
    return f"Class {m.group(1)} common stock" if m else "common stock"


def share_counts(doc: Doc, rng: random.Random) -> Iterator[dict]:
    groups: dict[tuple, list] = defaultdict(list)
    for f in doc.filing.numeric("dei:EntityCommonStockSharesOutstanding"):
        groups[f.context.dims].append(f)
    classed = any(groups)  # a class member's counts stand for the whole when given
    for dims, facts in groups.items():
        if bool(dims) != classed or (dims and dims[0][0] != "us-gaap:StatementClassOfStockAxis"):
            continue
        got = shown_pick(doc, facts, in_table=False)
        if got is None or got.fact.scale not in SHARE_UNITS:
            continue
        label = got.cell.split(" | ")[0] if " | " in got.cell else ""
        what = class_name(label, dims[0][1]) if dims else "common stock"
        unit, decimals = SHARE_UNITS[got.fact.scale], shown_decimals(got.cell)
        question = (f"How many shares of {whose(doc.name(rng))} {what} were outstanding as of "
                    f"{spoken_date(got.fact.context.end)}, per the cover of its {doc.form}? "
                    f"Answer {unit_words(unit, decimals, rng)}.")
        yield record(doc, "cover", question, half_up(got.value, decimals), unit, decimals,
                     [got.ref()], str(got.value), [got.cell])


def public_float(doc: Doc, rng: random.Random) -> Iterator[dict]:
    facts = [f for f in doc.filing.numeric("dei:EntityPublicFloat") if not f.context.dims]
    got = shown_pick(doc, facts, in_table=False)
    if got is None or got.fact.scale not in (0, 3, 6, 9, 12):
        return
    decimals = max(0, shown_decimals(got.cell) - 3) if got.fact.scale == 12 else \
        shown_decimals(got.cell) if got.fact.scale == 9 else 1
    derivation, exact = convert(got, 9)
    question = (f"What was the aggregate market value of {whose(doc.name(rng))} common equity held "
                f"by non-affiliates (its public float) as of {spoken_date(got.fact.context.end)}? "
                f"Answer {unit_words('USD billions', decimals, rng)}.")
    yield record(doc, "cover", question, half_up(exact, decimals), "USD billions", decimals,
                 [got.ref()], derivation, [got.cell])


def cover_probes(doc: Doc, rng: random.Random) -> Iterator[dict]:
    yield from text_facts(doc, rng)
    yield from symbols(doc, rng)
    yield from share_counts(doc, rng)
    yield from public_float(doc, rng)

