"""What a filing calls its facts: each concept's words (its name split, and the row labels the
filing prints beside its facts) and each qualifying member's words (the segment, region,
product or share class a fact is about), read once per filing.

The answer rules match a question's measure and qualifiers against these labels, so a line
item outside the vocabulary ("interest expense", "goodwill") resolves by the filing's own
words, and a segment the question names ("Compute & Networking") selects the fact tagged
with that member, never the consolidated one.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from pipeline.rag.answers.filings.parts.place_codes import place_name
from pipeline.rag.answers.question import tokens
from pipeline.rag.answers.question_words import label_stems
from retriever_trt.documents.model import Fact
from retriever_trt.documents.years import YEAR_DIGITS

# The axes whose members qualify a figure the way questions name them: a business segment,
# a region or country, a product or service line, a class of stock. Other axes (equity
# components, fair-value levels, award types, debt issues) break a figure down in ways a
# question names by its measure, not as a part of the company.
# A company's own axis of business groups or units ("gm:BusinessGroupAxis": GM tags its
# automotive SG&A with its Automotive member alone) names parts as a segment axis does, by
# the members' own names only: its few members sit on the rows of a segment table's
# measures, whose labels name no group ("Earnings before interest and taxes").
_NAMED_ONLY_AXES = re.compile(r"Business(?:Group|Unit)s?Axis", re.I)
# StatementOperatingActivitiesSegmentAxis splits continuing from discontinued operations:
# no part of the company ("from continuing operations" had named its member, which RTX tags
# on pension costs alone, and left operating cash flow without a number).
# A major customer ("gd:U.S.GovernmentMember" of srt:MajorCustomersAxis) is a part too: "revenue
# from the U.S. government" is that customer's, never the company's total.
QUALIFIER_AXES = re.compile(r"(?<!OperatingActivities)Segment|Geograph|Region|ProductOrService|"
                            rf"ClassOfStock|Brand|Division|MajorCustomers|"
                            rf"{_NAMED_ONLY_AXES.pattern}", re.I)
_SEGMENT_AXES = re.compile(r"BusinessSegments|Geograph", re.I)
# The standard axis of a company's business segments.
SEGMENT_AXIS = "us-gaap:StatementBusinessSegmentsAxis"
# Its name alone: `_segments_within` finds the segment axis by name, under any prefix.
_SEGMENT_AXIS_NAME = SEGMENT_AXIS.partition(":")[2]
_PLACE_AXES = re.compile(r"Geograph|Region", re.I)
# The most members of one axis a printed label may name: a country and the region named
# after it ("United States" for country:US and "United States and Puerto Rico"); a label
# printed for more is a measure's row across a segment table.
MAX_NAME_SHARERS = 2
# The parts the prose lists when the one asked is not reported.
MAX_LISTED = 12
# Dimensions that say where a segment figure sits in the reconciliation, not what it is of:
# a segment's revenue is tagged with its member and OperatingSegmentsMember alike. Alone,
# the member tags the segments' total, which is not the company's figure (TJX's "Segment
# profit" is no operating income).
# So is the reportable subsegments' member of the subsegments axis, which the taxonomy pairs
# with it (Caterpillar tags each segment's profit with its segment's member and both).
# So is the plain "Common Stock" member of the class-of-stock axis: the company's common
# stock, no class of it (Mondelez tags its cover's trading symbol with it, its shares
# outstanding with no member).
# So is the geographic concentration member of the concentration-risk axis beside a place:
# Palantir tags its 2022 U.S. revenue in the note on its customers' concentration so, the
# place's revenue all the same.
NEUTRAL_MEMBERS = frozenset({("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember"),
                             ("us-gaap:ConcentrationRiskByTypeAxis",
                              "us-gaap:GeographicConcentrationRiskMember"),
                             ("us-gaap:SubsegmentsConsolidationItemsAxis",
                              "us-gaap:ReportableSubsegmentsMember"),
                             ("us-gaap:StatementClassOfStockAxis", "us-gaap:CommonStockMember")})
# Standard members of other axes that name a part beside the segments: the corporate
# figures of the consolidation axis ("Corporate, Non-Segment": Colgate's Corporate
# operating loss is tagged with no segment member).
_PART_MEMBERS = frozenset({("srt:ConsolidationItemsAxis", "us-gaap:CorporateNonSegmentMember")})
# Standard members whose names read otherwise than a filing prints them: "Non Segment"
# says what Corporate is not (and "non" names no part: "held by non-affiliates").
_STANDARD_NAMES = {"us-gaap:CorporateNonSegmentMember": "Corporate"}
# Words a member's name carries that name no part of the company.
_GENERIC = frozenset({"member", "segment", "and", "other", "total", "all", "the", "of", "less", "plus"})
_PERIOD_LABEL = re.compile(rf"\b{YEAR_DIGITS}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
                           r"nov|dec)[a-z]*\b|\b(?:months?|quarter|year|ended)\b", re.I)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Initials a member's name writes with dots ("U.S."): one word, the dots dropped.
_DOTTED_INITIALS = re.compile(r"(?:[A-Z]\.){2,}")


# The cover's numbers are printed in a sentence, not a table row: the words the cover form
# (and the dei taxonomy's documentation) states them in.
COVER_LABELS = {
    "dei:EntityPublicFloat": "aggregate market value of the voting and non-voting common "
                             "equity stock held by non-affiliates public float",
    "dei:EntityCommonStockSharesOutstanding": "shares of common stock outstanding",
}


def split_name(name: str) -> str:
    """"us-gaap:InterestExpenseNonoperating" -> "Interest Expense Nonoperating";
    "aapl:WearablesHomeandAccessoriesMember" -> "Wearables Homeand Accessories Member";
    dotted initials as one word ("gd:U.S.GovernmentMember" -> "US Government Member")."""
    local = _DOTTED_INITIALS.sub(lambda m: m.group(0).replace(".", "") + " ", name.split(":")[-1])
    return " ".join(_CAMEL.findall(local))


def member_words(member: str) -> frozenset[str]:
    """The distinctive words of a member's name ("nvda:ComputeAndNetworkingSegmentMember":
    compute, networking); a place named by its code, its name's ("country:CN": china); a
    currency named by its code has none."""
    if member.split(":")[0] in ("country", "stpr", "currency"):
        name = place_name(member)
        return frozenset(tokens(name)) - _GENERIC if name else frozenset()
    return frozenset(w for w in tokens(_STANDARD_NAMES.get(member) or split_name(member))
                     if w not in _GENERIC)


def member_label(member: str) -> str:
    """A member as a reader names it: "Compute And Networking", "Greater China", "China" of
    country:CN."""
    if name := place_name(member):
        return name
    words = [w for w in (_STANDARD_NAMES.get(member) or split_name(member)).split()
             if w.lower() not in ("member", "segment")]
    return " ".join(words) or member


# The cash flow statement's own concepts ("PaymentsOfDividends", "ProceedsFromIssuance..."):
# what they pay or take in is cash, whether or not the label says so.
_CASH_FLOW_PREFIXES = ("Payments", "Proceeds", "Repayments")
_CASH = label_stems(["cash"])


def _is_cash_flow(concept: str) -> bool:
    return concept.partition(":")[2].startswith(_CASH_FLOW_PREFIXES)


# A footnote's mark after a label ("United States and Canada (1)"): no word of its name.
_FOOTNOTE = re.compile(r"\(\d{1,2}\)|\(\w\)$")
# A header's note of its scale ("Compute & Networking (In millions)"): no word of its name.
_SCALE_NOTE = re.compile(r"\(\s*in (?:thousands|millions|billions)\b[^)]*\)", re.I)


def _naming_labels(shown: tuple[str, str],
                   concept: set[str]) -> list[tuple[frozenset[str], str]]:
    """The words of each printed row label or column header that may name a part: those
    beyond the concept's own ("outside the U.S." of "Net sales - outside the U.S."), with
    the label as printed; a label with a year or a month names the period."""
    out = []
    for label in shown:
        printed = " ".join(_SCALE_NOTE.sub(" ", _FOOTNOTE.sub(" ", label)).split())
        found = set(tokens(printed)) - concept - _GENERIC
        if found and not _PERIOD_LABEL.search(label):
            out.append((frozenset(found), printed))
    return out


def _segments_within(facts: list[Fact]) -> dict[tuple[str, str], frozenset[tuple[str, str]]]:
    """The business segment every fact of a part of another axis carries ("Key Emerging
    Markets" of a subsegment axis, always with its segment's member): the part's figure is
    tagged with both."""
    seen: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
    for f in facts:
        parts = [d for d in f.dimensions if QUALIFIER_AXES.search(d[0])]
        segments = frozenset(d for d in parts if _SEGMENT_AXIS_NAME in d[0])
        for d in parts:
            if d not in segments and not _PLACE_AXES.search(d[0]):  # a place is no part of one
                seen[d] = seen[d] & segments if d in seen else segments
    return {d: found for d, found in seen.items() if len(found) == 1}


def _measure_rows(printed: dict[tuple[str, str], set[frozenset[str]]],
                  printed_of: dict[tuple[str, frozenset[str]], set[str]],
                  as_printed: dict[tuple[tuple[str, str], frozenset[str]], str],
                  members: dict[tuple[str, str], set[str]], words: dict[str, set[str]],
                  texts: set[str]) -> None:
    """The labels printed beside members' facts that name a part (added to `members`), and
    those that name a measure (added to its concepts' `words` and to `texts`). A label printed
    for more members of one axis than a name is names none: it is the row of a measure across
    a segment table's columns ("Purchases of property, equipment and capitalized software"
    under each of UnitedHealth's segments). That row names its concept instead: GM tags its
    segments' EBIT-adjusted, printed only across its segment table, as one unsplit word
    ("Earningslossbeforeautomotiveinterestandtaxesadjusted")."""
    shared = Counter((axis, label) for (axis, _), named in printed.items() for label in named)
    for d, named in printed.items():
        named -= {label for label in named if shared[d[0], label] > MAX_NAME_SHARERS}
        members[d].update(w for label in named for w in label)
    for (axis, label), concepts in printed_of.items():
        if shared[axis, label] > MAX_NAME_SHARERS:
            for concept in concepts:
                words[concept].update(label)
            texts.update(text for (m, found), text in as_printed.items()
                         if m[0] == axis and found == label)


def describe_members(members: frozenset[tuple[str, str]]) -> str:
    """"Compute And Networking" as the prose names what a figure is of."""
    return " and ".join(member_label(m) for _, m in sorted(members))


def qualifiers(fact: Fact) -> frozenset[tuple[str, str]]:
    """The fact's dimensions that name a part of the company (`QUALIFIER_AXES`), and any
    other dimension except the neutral ones: a fact with an equity-component member is not
    the company's figure, nor is the segments' total (the neutral member alone)."""
    named = frozenset(d for d in fact.dimensions if d not in NEUTRAL_MEMBERS)
    return named or frozenset(fact.dimensions)


@dataclass
class FactLabels:
    """A filing's concepts and qualifying members with their words."""

    concept_words: dict[str, frozenset[str]] = field(default_factory=dict)
    members: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    # each label the filing prints for a member, apart: a member shown under "Europe/Middle
    # East/Africa" in one table and beside credit ratings in another is named by the first
    # alone, which the union of both would dilute
    printed: dict[tuple[str, str], tuple[frozenset[str], ...]] = field(default_factory=dict)
    # each member's label run together in lower case: "iphone" of aapl:IPhoneMember
    compact: dict[tuple[str, str], str] = field(default_factory=dict)
    # the concepts a primary statement (balance sheet, income, cash flows) prints a fact of:
    # "Deferred revenue" on the balance sheet before the tax note's row of that name
    stated: frozenset[str] = frozenset()
    # the row labels a primary statement prints each concept's facts of no part under:
    # Walmart's "Net sales" apart from its "Total revenues"
    stated_rows: dict[str, frozenset[str]] = field(default_factory=dict)
    # each part reported only within one business segment, with that segment: Abbott's Key
    # Emerging Markets (a subsegment) is tagged with Established Pharmaceutical Products
    within: dict[tuple[str, str], frozenset[tuple[str, str]]] = field(default_factory=dict)
    # the label each member is printed under that names it ("iPhone", "Compute & Networking")
    names: dict[tuple[str, str], str] = field(default_factory=dict)
    # every label as written, its words in order: concepts' names split, the rows the
    # filing prints them on (initials a question writes are read against these)
    texts: tuple[str, ...] = ()
    _stems: dict[str, frozenset[str]] | None = field(default=None, repr=False, compare=False)
    _all_words: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _measure_words: frozenset[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, facts: list[Fact], shown_at: Any = None, stated: Any = None) -> FactLabels:
        """`shown_at(fact)`: the (row label, column header) the filing prints the fact under,
        or None; `stated(fact)`: whether a primary statement prints it. A fact of no part
        names its concept by its row; a part's fact names the part by a row or header that
        shares no word with its concept ("Taiwan" of country:TW, "Compute & Networking" over
        a column of segment revenues)."""
        words: dict[str, set[str]] = defaultdict(set)
        members: dict[tuple[str, str], set[str]] = defaultdict(set)
        printed: dict[tuple[str, str], set[frozenset[str]]] = defaultdict(set)
        rows: dict[str, set[str]] = defaultdict(set)
        as_printed: dict[tuple[tuple[str, str], frozenset[str]], str] = {}
        printed_of: dict[tuple[str, frozenset[str]], set[str]] = defaultdict(set)
        texts = {split_name(c) for c in {f.concept for f in facts}}
        in_statement = {id(f) for f in facts if stated is not None and stated(f)}
        for f in facts:
            if f.concept not in words:
                words[f.concept].update(tokens(split_name(f.concept)),
                                        tokens(COVER_LABELS.get(f.concept, "")))
            shown = shown_at(f) if shown_at is not None else None
            parts = [d for d in f.dimensions
                     if (QUALIFIER_AXES.search(d[0]) or d in _PART_MEMBERS) and
                     d not in NEUTRAL_MEMBERS]
            for d in parts:
                members[d].update(member_words(d[1]))
            if shown and not f.dimensions:
                words[f.concept].update(tokens(shown[0]))
                texts.add(shown[0])
                if id(f) in in_statement:
                    rows[f.concept].add(shown[0])
            elif shown and len(parts) == 1 and not _NAMED_ONLY_AXES.search(parts[0][0]) and all(
                    d in parts or d in NEUTRAL_MEMBERS for d in f.dimensions):
                # a fact of a part and of another dimension ("U.S. government revenue" of
                # Boeing's Global Services, a customer axis's member) is printed under the
                # other's name as often as under the part's
                for found, label in _naming_labels(shown, words[f.concept]):
                    printed[parts[0]].add(found)
                    printed_of[parts[0][0], found].add(f.concept)
                    as_printed.setdefault((parts[0], found), label)
        _measure_rows(printed, printed_of, as_printed, members, words, texts)
        kept = {m: frozenset(w) for m, w in members.items() if w}
        return cls({c: frozenset(w) for c, w in words.items()}, kept,
                   {m: tuple(sorted(printed[m], key=sorted)) for m in kept if m in printed},
                   # a place's code is its name only as the question writes it apart
                   # ("United States and Canada" names no country:US)
                   compact={m: re.sub(r"[^a-z0-9]", "", member_label(m[1]).lower())
                            for m in kept if place_name(m[1]) is None},
                   stated=frozenset(f.concept for f in facts if id(f) in in_statement),
                   stated_rows={c: frozenset(r) for c, r in rows.items()},
                   within=_segments_within(facts),
                   names={d: label for (d, found), label in reversed(as_printed.items())
                          if d in kept and found in printed[d]},
                   texts=tuple(sorted(texts)))

    def concept_stems(self) -> dict[str, frozenset[str]]:
        """Each concept's words as `label_stems` gives them, and those its kind implies: a
        cash flow's payments and proceeds are cash ("cash dividends" paid are Payments Of
        Dividends, not the equity statement's "Cash dividends declared"). Computed once
        per filing."""
        if self._stems is None:
            self._stems = {c: label_stems(w) | (_CASH if _is_cash_flow(c) else frozenset())
                           for c, w in self.concept_words.items()}
        return self._stems

    def measure_vocabulary(self) -> frozenset[str]:
        """The words of the concepts' labels that no member's holds: words naming measures,
        never parts ("EBITDA"; not "C" of Class C). Read once per filing."""
        if self._measure_words is None:
            named = {w for words in self.members.values() for w in words}
            self._measure_words = frozenset(w for words in self.concept_words.values()
                                            for w in words if w not in named)
        return self._measure_words

    def all_words(self) -> frozenset[str]:
        """Every word of every concept's and member's labels, read once per filing."""
        if self._all_words is None:
            self._all_words = frozenset(
                w for words in (*self.concept_words.values(), *self.members.values())
                for w in words)
        return self._all_words

    def name_of(self, member: tuple[str, str]) -> str:
        """A member as the filing prints it, else as its name reads ("iPhone", not "I
        Phone")."""
        return self.names.get(member) or member_label(member[1])

    def segments_of(self) -> list[str]:
        """The labels of the business segments and regions (else the product lines), as the
        prose lists what the filing reports."""
        for kind in (_SEGMENT_AXES, QUALIFIER_AXES):
            found = sorted({member_label(m) for (axis, m) in self.members if kind.search(axis)})
            if found:
                return found[:MAX_LISTED]
        return []
