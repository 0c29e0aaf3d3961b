"""The member kinds of benchmarks/fact_probes.py: `segment` (a one-dimension segment,
region or product member's revenue or operating income, by the member's readable name) and
`foreign_segment` (another company's segment name asked of this filing: gold null).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from fact_probes_core import (
    Doc,
    Pick,
    convert,
    half_up,
    money_unit,
    pick,
    record,
    shown_pick,
    unit_words,
    when,
    whose,
)
from filings_facts import cell_of
from filings_heldout_check import parse as checker_doc
from filings_periods import Period

AXES = {"us-gaap:StatementBusinessSegmentsAxis": "segment",
        "srt:StatementGeographicalAxis": "region", "srt:ProductOrServiceAxis": "product"}
MEASURES = {"us-gaap:Revenues": "revenue",
            "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax": "revenue",
            "us-gaap:SalesRevenueNet": "revenue", "us-gaap:OperatingIncomeLoss": "operating income"}
# Members that name no business of their own: totals, eliminations, "other".
_SKIP = re.compile(r"^(other|all ?other|total|corporate|elimination|intersegment|reportable|"
                   r"operating segments?|segment|consolidat|reconcil|unallocated)", re.IGNORECASE)
KNOWN = {"country:US": "United States", "country:CN": "China", "country:JP": "Japan",
         "country:DE": "Germany", "country:FR": "France", "country:GB": "United Kingdom",
         "country:IT": "Italy", "country:ES": "Spain", "country:CA": "Canada",
         "country:BR": "Brazil", "country:AU": "Australia", "country:MX": "Mexico",
         "country:SG": "Singapore", "country:TW": "Taiwan", "country:IN": "India",
         "country:KR": "South Korea", "country:CH": "Switzerland", "country:NL": "Netherlands",
         "country:IE": "Ireland", "us-gaap:NonUsMember": "non-U.S. markets",
         "us-gaap:EMEAMember": "EMEA", "srt:AsiaPacificMember": "Asia Pacific"}
# Words a name made only of says nothing company-specific ("Europe", "Services").
GENERIC = {"americas", "america", "north", "south", "latin", "europe", "asia", "pacific", "china",
           "greater", "japan", "united", "states", "kingdom", "international", "domestic", "rest",
           "of", "world", "and", "the", "services", "service", "products", "product", "emea",
           "apac", "canada", "middle", "east", "africa", "us", "non", "subscription", "support",
           "professional", "other", "sales", "revenue", "revenues", "hardware", "software",
           "consulting", "financing", "licenses", "license", "cloud", "digital", "media"}
FOREIGN_PER_FILING = 6


def split_member(member: str) -> str:
    """ "aapl:GreaterChinaSegmentMember" -> "Greater China" (no Member, Segment, Revenue)."""
    local = member.split(":")[-1]
    local = re.sub(r"(Reportable)?(Segment)?(Revenues?)?(Member)?$", "", local)
    local = re.sub(r"([a-z])(and|of)([A-Z])", r"\1 \2 \3", local)
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", local).split()
    return " ".join(w.lower() if i and w.lower() in ("of", "and", "the") else w
                    for i, w in enumerate(words))


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _words(text: str) -> set[str]:
    words = {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower()) if w.rstrip("s")}
    return words - {"u"} | {"united", "state"} if "u" in words else words  # US, U.S.


def clean_label(label: str) -> str:
    label = re.sub(r"\(\d\)|[®™$]", "", label).strip(" :")
    label = re.sub(r"^(total\s+)?(revenues? from\s+|net sales\s*[–-]\s*)?", "", label,
                   flags=re.IGNORECASE)
    return re.sub(r"\s+(revenues?|net sales)$", "", label, flags=re.IGNORECASE).strip()


def readable(member: str, labels: list[str]) -> str | None:
    """The member's name: the printed row label where it says at least the member's words,
    else the member's local name split into words; None for a member naming no business."""
    if member in KNOWN:
        return KNOWN[member]
    base = split_member(member)
    if member.startswith("country:") or not base or _SKIP.match(base) or "." in base:
        return None
    for label in map(clean_label, labels):
        if 0 < len(label) <= 60 and not _SKIP.match(label) and (
                _squash(base) in _squash(label) or _words(base) <= _words(label)):
            return label
    return None if "other" in _words(base) else base


@dataclass(frozen=True)
class Member:
    measure: str      # "revenue" or "operating income"
    axis: str         # "segment", "region", "product"
    member: str       # the member's QName
    name: str         # its readable name
    period_key: str
    pick: Pick


def _grouped(doc: Doc) -> dict[tuple[str, str, str, str], list]:
    groups: dict[tuple[str, str, str, str], list] = defaultdict(list)
    spans = {(p.start, p.end): k for k, p in doc.periods.items() if p.start}
    for f in doc.filing.facts:
        dims = f.context.dims
        key = spans.get((f.context.start, f.context.end))
        if (f.concept in MEASURES and key and len(dims) == 1 and dims[0][0] in AXES
                and f.unit == "iso4217:USD"):
            groups[(MEASURES[f.concept], dims[0][0], dims[0][1], key)].append(f)
    return groups


@cache
def members(doc: Doc) -> list[Member]:
    """Every readable one-dimension member fact whose duplicates (across revenue concepts
    too) agree, and whose name no other member of the same measure and period shares with
    another value."""
    out = []
    for (measure, axis, member, key), facts in _grouped(doc).items():
        if measure == "operating income" and AXES[axis] != "segment":
            continue
        got = shown_pick(doc, facts)
        name = readable(member, [c.label for f in facts if (c := cell_of(f)) is not None])
        if got is None or name is None or (measure == "revenue" and got.value < 0):
            continue
        out.append(Member(measure, AXES[axis], member, name, key, got))
    return _unambiguous(out)


def _unambiguous(found: list[Member]) -> list[Member]:
    by_name: dict[tuple[str, str, str], list[Member]] = defaultdict(list)
    for m in found:
        by_name[(m.measure, m.period_key, " ".join(sorted(_words(m.name) - {"total"})))].append(m)
    out = []
    for same in by_name.values():
        if len({m.pick.value for m in same}) == 1:
            out.append(same[0])
    return out


def segment_question(doc: Doc, m: Member, phrase: str, units: str, rng: random.Random) -> str:
    co = doc.name(rng)
    if m.measure == "operating income":
        return rng.choice([f"What was the operating income of {whose(co)} {m.name} segment "
                           f"{phrase}? Answer {units}.",
                           f"How much operating income did {whose(co)} {m.name} segment report "
                           f"{phrase} ({units})?"])
    if m.axis == "segment":
        return rng.choice([f"What was the revenue of {whose(co)} {m.name} segment {phrase}? "
                           f"Answer {units}.",
                           f"How much revenue did {co} book in its {m.name} segment {phrase}, "
                           f"{units}?"])
    if m.axis == "region":
        return rng.choice([f"What was {whose(co)} revenue from {m.name} {phrase}? Answer {units}.",
                           f"How much revenue did {co} derive from {m.name} {phrase} ({units})?"])
    return rng.choice([f"What was {whose(co)} {m.name} revenue {phrase}? Answer {units}.",
                       f"How much did {co} earn from {m.name} {phrase}, {units}?"])


def segment_probes(doc: Doc, rng: random.Random) -> Iterator[dict]:
    for m in sorted(members(doc), key=lambda m: (m.measure, m.axis, m.name, m.period_key)):
        unit, decimals, target = money_unit(m.pick, rng)
        derivation, exact = convert(m.pick, target)
        question = segment_question(doc, m, when(doc.periods[m.period_key], rng),
                                    unit_words(unit, decimals, rng), rng)
        yield record(doc, "segment", question, half_up(exact, decimals), unit, decimals,
                     [m.pick.ref()], derivation, [m.pick.cell])


def distinctive(name: str) -> bool:
    words = _words(name)
    return "other" not in words and not words <= {w.rstrip("s") for w in GENERIC}


def foreign_probes(doc: Doc, others: list[Doc], rng: random.Random) -> Iterator[dict]:
    """Segment and product names of other companies' filings (one a company, its segments
    first, FOREIGN_PER_FILING of them at random) that this filing neither tags as a member
    nor prints anywhere."""
    main = doc.main
    if main is None:
        return
    own = {m for c in doc.filing.contexts.values() for _, m in c.dims}
    text = _squash(checker_doc(doc.path).visible)
    held = sorted({m.name for m in members(doc) if m.axis == "segment"})
    by_company: dict[str, Member] = {}
    for other in others:
        if other.cik == doc.cik or other.cik in by_company:
            continue
        for m in sorted(members(other), key=lambda m: (m.axis != "segment", m.name)):
            local = m.member.split(":")[-1].removesuffix("Member")
            if (m.axis != "region" and distinctive(m.name)
                    and not any(local.lower() in o.lower() for o in own)
                    and _squash(m.name) not in text and _squash(local) not in text):
                by_company[other.cik] = m
                break
    chosen = list(by_company.values())
    for m in sorted(rng.sample(chosen, min(FOREIGN_PER_FILING, len(chosen))),
                    key=chosen.index):
        yield _foreign(doc, m, m.member.split(":")[-1].removesuffix("Member"), held, main, rng)


def _foreign(doc: Doc, m: Member, local: str, held: list[str], main: Period,
             rng: random.Random) -> dict:
    revenue = pick(doc, "revenue", main)
    unit = {3: "USD thousands"}.get(revenue.fact.scale if revenue else 6, "USD millions")
    units = unit_words(unit, 0, rng)
    co, phrase = doc.name(rng), when(main, rng)
    question = rng.choice([f"What was the revenue of {whose(co)} {m.name} segment {phrase}? "
                           f"Answer {units}.",
                           f"How much did {co} earn from {m.name} {phrase}, {units}?"])
    says = f"its segments: {', '.join(held)}" if held else "it tags no business segment members"
    note = (f"{m.name} is another company's ({m.pick.doc_id}) {m.axis}; {whose(doc.company)} "
            f"{doc.form} neither tags a member like {local!r} nor prints the name ({says}).")
    return record(doc, "foreign_segment", question, None, unit, 0, [], "", [], note,
                  absent={"member_like": local}, held=[])
