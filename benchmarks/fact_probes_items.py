"""The statement line-item kinds of benchmarks/fact_probes.py: `period` (an item at each
period the filing holds), `absent` (an item at a period it does not hold: gold null) and
`ratio` (defined ratios of its facts, in percent to one decimal).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal, localcontext

from fact_probes_core import (
    Doc,
    Pick,
    convert,
    half_up,
    item_for,
    money_unit,
    pick,
    record,
    rough_when,
    shared_income,
    shown_decimals,
    unit_words,
    when,
    whose,
    year_back,
)
from filings_periods import Kind, Period, spoken_date
from filings_vocab import ITEMS, Measure, Statement

PERIOD_ITEMS = ("revenue", "net_income", "operating_income", "eps_diluted", "total_assets",
                "ocf", "capex", "rnd", "sga", "long_term_debt")
ABSENT_ITEMS = ("revenue", "net_income", "operating_income", "eps_diluted", "total_assets", "ocf")
PERCENT = "percent"
_PREPOSITIONS = ("in ", "for ", "at ", "as of ")


def bare(phrase: str) -> str:
    """A period phrase without its preposition ("in fiscal 2023" -> "fiscal 2023")."""
    return next((phrase[len(p):] for p in _PREPOSITIONS if phrase.startswith(p)), phrase)


def item_name(doc: Doc, key: str, p: Pick, period: Period, rng: random.Random) -> str:
    """How the question names the item: varied, the row's own words where they suit, net
    income "attributable to" the company where noncontrolling interests share it."""
    if key == "net_income" and shared_income(doc, period):
        return f"net income attributable to {doc.company}"
    return rng.choice(ITEMS[key].names_for(p.cell.split(" | ")[0]))


def ask(co: str, name: str, plural: bool, phrase: str, units: str, rng: random.Random) -> str:
    verb = "were" if plural else "was"
    forms = [f"What {verb} {whose(co)} {name} {phrase}? Answer {units}.",
             f"{phrase[0].upper()}{phrase[1:]}, what {verb} {whose(co)} {name} ({units})?",
             f"{whose(co)} {name} {phrase}, {units}?",
             f"How much did {co} report as {name} {phrase}? Give the figure {units}."]
    return rng.choice(forms)


def item_unit(key: str, p: Pick, rng: random.Random) -> tuple[str, int, int]:
    if ITEMS[key].measure is Measure.PER_SHARE:
        return "USD per share", shown_decimals(p.cell), 0
    return money_unit(p, rng)


def period_probes(doc: Doc, rng: random.Random) -> Iterator[dict]:
    for key in PERIOD_ITEMS:
        item = ITEMS[key]
        balance = item.statement is Statement.BALANCE
        for period in doc.balance_dates() if balance else doc.durations():
            got = pick(doc, key, period)
            if got is None:
                continue
            unit, decimals, target = item_unit(key, got, rng)
            derivation, exact = convert(got, target)
            name = item_name(doc, key, got, period, rng)
            question = ask(doc.name(rng), name, item.plural, when(period, rng),
                           unit_words(unit, decimals, rng), rng)
            yield record(doc, "period", question, half_up(exact, decimals), unit, decimals,
                         [got.ref()], derivation, [got.cell])


def facts_within(doc: Doc, concepts: tuple[str, ...], lo: date, hi: date) -> bool:
    return any(f.concept in concepts and not f.context.dims and f.value is not None
               and lo <= f.context.end <= hi for f in doc.filing.facts)


def gaps(doc: Doc, balance: bool, rng: random.Random) -> Iterator[tuple[str, date, date, str]]:
    """(how the question names a period the filing does not hold, the window its end would
    fall in, the key of the period the filing holds instead)."""
    per, fy = doc.periods, doc.fiscal_year
    main = doc.main
    cal = main is not None and main.calendar
    if doc.form == "10-K" and balance and "END-2" in per:
        end = per["END-2"].end
        yield f"as of {spoken_date(end)}", end - timedelta(7), end + timedelta(7), "END-1"
    if doc.form == "10-K" and not balance and "FY-2" in per:
        start = per["FY-2"].start
        yield (rough_when(Kind.YEAR, fy - 3, None, cal, rng), start - timedelta(380),
               start - timedelta(1), "FY-2")
    if doc.form == "10-K" and "FY" in per:
        end = per["FY"].end
        phrase = (f"at the end of fiscal {fy + 1}" if balance else
                  rough_when(Kind.YEAR, fy + 1, None, cal, rng))
        yield phrase, end + timedelta(1), end + timedelta(380), "END" if balance else "FY"
    if doc.form != "10-Q" or "END" not in per:
        return
    end, quarter = per["END"].end, per["END"].quarter or 0
    if balance:
        back = year_back(end)
        yield f"as of {spoken_date(back)}", back - timedelta(7), back + timedelta(7), "END-1"
        return
    if quarter < 4:
        yield (rough_when(Kind.QUARTER, fy, quarter + 1, cal, rng), end + timedelta(1),
               end + timedelta(100), "Q")
    if "Q-1" in per:
        prior = per["Q-1"].end
        yield (rough_when(Kind.QUARTER, fy - 2, quarter, cal, rng),
               year_back(prior) - timedelta(10), year_back(prior) + timedelta(10), "Q-1")


def absent_probes(doc: Doc, rng: random.Random) -> Iterator[dict]:
    for key in ABSENT_ITEMS:
        item = ITEMS[key]
        if item_for(doc, key) is None:
            continue
        for phrase, lo, hi, held_key in gaps(doc, item.statement is Statement.BALANCE, rng):
            held = pick(doc, key, doc.periods[held_key]) if held_key in doc.periods else None
            if held is None or facts_within(doc, item.concepts, lo, hi):
                continue
            unit, decimals, _ = item_unit(key, held, rng)
            name = rng.choice(item.names)
            question = ask(doc.name(rng), name, item.plural, phrase,
                           unit_words(unit, decimals, rng), rng)
            note = (f"{whose(doc.company)} {doc.form} for fiscal {doc.fiscal_year} does not hold "
                    f"{item.names[0]} {phrase}; nearest it holds: {bare(when(doc.periods[held_key], rng))} "
                    f"({held.cell}).")
            yield record(doc, "absent", question, None, unit, decimals, [], "", [], note,
                         absent={"concepts": list(item.concepts), "dimensions": {},
                                 "ends_within": f"{lo}..{hi}"},
                         held=[held.ref() | {"cell": held.cell}])


def ratio_record(doc: Doc, question: str, picks: list[Pick], derivation: str,
                 exact: Decimal) -> dict:
    return record(doc, "ratio", question, half_up(exact, 1), PERCENT, 1,
                  [p.ref() for p in picks], derivation, [p.cell for p in picks])


def same_scale(*picks: Pick | None) -> bool:
    return all(p is not None for p in picks) and len({p.fact.scale for p in picks}) == 1


def margins(doc: Doc, period: Period, rng: random.Random) -> Iterator[dict]:
    rev, co = pick(doc, "revenue", period), doc.name(rng)
    phrase, pct = when(period, rng), unit_words(PERCENT, 1, rng)
    cost, gross = pick(doc, "cost_of_revenue", period), pick(doc, "gross_profit", period)
    if same_scale(rev, cost) and (gross is None or gross.value == rev.value - cost.value):
        r, c = rev.value, cost.value
        yield ratio_record(doc, f"What was {whose(co)} gross margin {phrase}, defined as (revenue "
                           f"- cost of revenue) / revenue? Answer {pct}.", [rev, cost],
                           f"({r} - {c}) / {r} * 100", (r - c) / r * 100)
    income = f"net income attributable to {doc.company}" if shared_income(doc, period) \
        else "net income"
    for key, name in (("operating_income", "operating margin (operating income / revenue)"),
                      ("net_income", f"net margin ({income} / revenue)")):
        num = pick(doc, key, period)
        if same_scale(rev, num):
            yield ratio_record(doc, f"What was {whose(co)} {name} {phrase}? Answer {pct}.",
                               [num, rev], f"{num.value} / {rev.value} * 100",
                               num.value / rev.value * 100)
    tax, pretax = pick(doc, "income_tax", period), pick(doc, "pretax_income", period)
    if same_scale(tax, pretax) and pretax.value > 0:
        yield ratio_record(doc, f"What was {whose(co)} effective tax rate {phrase}, computed as "
                           f"income tax expense divided by income before income taxes? "
                           f"Answer {pct}.", [tax, pretax], f"{tax.value} / {pretax.value} * 100",
                           tax.value / pretax.value * 100)


def growth(doc: Doc, cur: Period, prior: Period, rng: random.Random) -> Iterator[dict]:
    for key in ("revenue", "net_income", "operating_income"):
        now, then = pick(doc, key, cur), pick(doc, key, prior)
        if not same_scale(now, then) or then.value <= 0:
            continue
        name = ITEMS[key].names[0]
        if key == "net_income" and (shared_income(doc, cur) or shared_income(doc, prior)):
            name = f"net income attributable to {doc.company}"
        question = (f"By what percent did {whose(doc.name(rng))} {name} change {when(cur, rng)} "
                    f"compared with {bare(when(prior, rng))}? Answer {unit_words(PERCENT, 1, rng)}.")
        yield ratio_record(doc, question, [now, then],
                           f"({now.value} - {then.value}) / {then.value} * 100",
                           (now.value - then.value) / then.value * 100)


def cagr(doc: Doc, rng: random.Random) -> Iterator[dict]:
    first, last = doc.periods.get("FY-2"), doc.periods.get("FY")
    now = pick(doc, "revenue", last) if last else None
    then = pick(doc, "revenue", first) if first else None
    if not same_scale(now, then) or then.value <= 0:
        return
    with localcontext() as ctx:
        ctx.prec = 40
        exact = ((now.value / then.value).sqrt() - 1) * 100
    if abs((exact * 10) % 1 - Decimal("0.5")) < Decimal("1e-9"):
        return  # a tie the checker's float root could round either way
    question = (f"What was {whose(doc.name(rng))} two-year compound annual growth rate of revenue "
                f"from fiscal {first.fiscal_year} to fiscal {last.fiscal_year}, i.e. (revenue "
                f"{last.fiscal_year} / revenue {first.fiscal_year}) ^ (1/2) - 1? "
                f"Answer {unit_words(PERCENT, 1, rng)}.")
    yield ratio_record(doc, question, [now, then],
                       f"(({now.value} / {then.value}) ** 0.5 - 1) * 100", exact)


def leverage(doc: Doc, rng: random.Random) -> Iterator[dict]:
    for period in doc.balance_dates():
        debt, equity = pick(doc, "long_term_debt", period), pick(doc, "equity", period)
        if not same_scale(debt, equity) or equity.value <= 0:
            continue
        question = (f"What was {whose(doc.name(rng))} debt-to-equity ratio {when(period, rng)}, "
                    f"defined as long-term debt (noncurrent) divided by total stockholders' "
                    f"equity? Answer {unit_words(PERCENT, 1, rng)}.")
        yield ratio_record(doc, question, [debt, equity], f"{debt.value} / {equity.value} * 100",
                           debt.value / equity.value * 100)


def ratio_probes(doc: Doc, rng: random.Random) -> Iterator[dict]:
    for period in doc.durations():
        yield from margins(doc, period, rng)
    per = doc.periods
    for cur, prior in (("FY", "FY-1"), ("FY-1", "FY-2"), ("Q", "Q-1"), ("YTD", "YTD-1")):
        if cur in per and prior in per:
            yield from growth(doc, per[cur], per[prior], rng)
    yield from cagr(doc, rng)
    yield from leverage(doc, rng)
