"""The part of the company a question names: a segment, region, product line or share class,
matched against the filing's own members (`fact_labels.FactLabels`).

A member is named when at least `MEMBER_COVER` of its distinctive words are in the question
and one of them is not a word every statement uses ("operations" names no segment). On one
axis the best-covered member wins; a tie between members is ambiguous and names none of
them. A question with a segment word ("segment", "region", ...) that names no member of the
filing asks for a part the filing does not report: the answer says so and lists the parts
it does report, instead of answering with the company's total. The countries a question
names by code ("U.S.", "UK") are read in `asked_countries.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.rag.answers.filings.fact_labels import FactLabels, member_words, split_name
from pipeline.rag.answers.filings.parts.asked_countries import (
    countries_coded,
    names_a_place,
    pronoun_codes,
)
from pipeline.rag.answers.question_words import tokens

# A member's name run together must be this long to match the question's words run
# together ("iphone", "datacenter"): shorter ones ("mac") occur inside other words.
MIN_COMPACT = 4
# The most words a member's name runs together ("Wearables, Home and Accessories": 4).
MAX_RUN = 6
_RAW_WORD = re.compile(r"[a-z0-9]+")
# Share of a member's words the question must name: "Automotive revenues" names
# AutomotiveRevenuesMember fully; "energy storage" names EnergyGenerationAndStorage by 2 of 3.
MEMBER_COVER = 0.5
# Words of statement lines: on their own they name no part of a company.
STATEMENT_WORDS = frozenset("""operation operating income revenue sale cost expense net gross
profit asset liability cash interest tax equity share stock common total sold good""".split())
# A question asking for a part of the company.
SEGMENT_CUE = re.compile(r"\b(?:segments?|regions?|regional|geographic(?:al)?|divisions?|"
                         r"business (?:units?|lines?)|product (?:lines?|categor(?:y|ies)))\b",
                         re.I)
# The cue words alone: they name neither a part nor a measure ("Other segment items" is no
# answer to "NVIDIA's Graphics segment").
CUE_WORDS = frozenset(tokens("segment segments region regions regional geographic division "
                             "divisions"))
# Words naming the rest of a whole ("Other Americas", "Non-US", "Rest of world"): a member
# whose name starts with one is named only by a question that says it, not by its other
# words alone ("OEM and Other" is the OEM line, named by "OEM").
_REMAINDER = frozenset({"other", "non", "rest", "remaining", "remainder"})
_JOINING = frozenset({"and", "or"})
_NEGATING = frozenset({"non"})
# Words that say "the rest" of a whole without its name: "outside the U.S." and
# "international" are Non-US.
_REST_CUE = re.compile(r"\b(?:outside|excluding|except|elsewhere|foreign|international)\b", re.I)
# Words that cut a region to one side of it ("North America", "Western Europe"): a member
# whose name holds one is named only by a question that says it ("Americas" is no answer's
# "North America"). A question's "non-X" names the rest of X, never X ("non-food revenue").
_DIRECTIONS = frozenset({"north", "south", "northern", "southern", "eastern", "western",
                         "central", "latin"})  # not "east": "Middle East" is no side of it
_NEGATED = re.compile(r"\bnon[- ]?([a-z]+)", re.I)
# A name's initials in capitals ("FLNA" of pep:FritoLayNorthAmericaMember, "EMEA"): three
# letters at least, and not the measure's own ("EPS" names no "Energy Production Services").
_INITIALS = re.compile(r"\b[A-Z]{3,6}\b")
# Capitalized words, then an acronym in brackets: "GM North America's (GMNA)".
_BEFORE_ACRONYM = re.compile(r"((?:[A-Z][\w&.-]*(?:['\u2019]s)?,?\s+(?:(?:of|and|&)\s+)?){1,6})"
                             r"\(([A-Z]{2,6})\)")
# Two words' initials joined by their ampersand ("E&T" of cat:EnergyAndTransportationMember).
_AMPERSAND_INITIALS = re.compile(r"(?<![\w&])[A-Z]&[A-Z](?![\w&])")
_NO_INITIAL = frozenset({"and", "of", "the", "segment", "member", "total"})
# A word with a capital and a small letter after it: "WhatsApp", "Medicine", not "EPS".
NAME = re.compile(r"\b[A-Z][A-Za-z]*[a-z][A-Za-z]*\b")
# A name with a capital inside a word: "iPhone", "eBay".
_CAMEL_NAME = re.compile(r"\b[a-z]+[A-Z][A-Za-z]*\b")
# The axis of a filing's classes of stock (its cover's common stock, notes, ...).
_CLASS_AXIS = re.compile(r"ClassOfStock", re.I)
# Members of the class-of-stock axis that are no other class of the company's stock: debt
# securities listed on the cover, and the generic common stock member.
_NOT_ANOTHER_CLASS = re.compile(r"Notes?|Debentures?|Bonds?|Due\d{4}|:CommonStockMember$")
# What precedes a sentence's first word: nothing, or the end of a sentence or a clause.
SENTENCE_START = re.compile(r"(?:^|[.?!:;(]|--|\u2014)\s*[\"'\u201c]?$")
# "across all segments", "total of its segments": the whole company.
_ALL_PARTS = re.compile(r"\b(?:all|every|each|total|combined|consolidated)\b[^.?]{0,20}"
                        r"\b(?:segments?|regions?)\b", re.I)


def word_runs(text: str, longest: int = MAX_RUN) -> set[str]:
    """Every run of up to `longest` consecutive words of `text`, written together in lower
    case ("Data Center" -> "data", "center", "datacenter")."""
    raw = _RAW_WORD.findall(text.lower().replace("&", " and "))
    return {"".join(raw[i:j]) for i in range(len(raw))
            for j in range(i + 1, min(i + longest, len(raw)) + 1)}


@dataclass(frozen=True)
class Parts:
    """What the question names: `options`, the member sets (axis, member) its figure may
    carry, best first (the fact rules take the first the filing has a figure for, and call
    the question ambiguous when equally good options give different figures); `unknown`
    when it asks for a part and the filing reports none by that name."""

    options: tuple[frozenset[tuple[str, str]], ...] = ()
    unknown: bool = False
    # member -> the question's words that name it: they name no measure
    named: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)

    def naming_words(self, every: bool = False) -> frozenset[str]:
        """The words naming the first option's members (`every`: every option's)."""
        options = self.options if every else self.options[:1]
        return frozenset(w for o in options for m in o for w in self.named[m])


@dataclass
class _Scores:
    """How well the question names each member: `scored`, the share of its name covered;
    `named`, the question's words naming it; `overall`, the share of its own name, else of
    all its words, the question names; `initialed`, the members the question names by their
    own name's initials ("DPEP")."""

    scored: dict[tuple[str, str], float] = field(default_factory=dict)
    named: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    overall: dict[tuple[str, str], float] = field(default_factory=dict)
    initialed: set[tuple[str, str]] = field(default_factory=set)


def _scores(words: set[str], distinctive: set[str], text: str, runs: set[str],
            labels: FactLabels) -> _Scores:
    """Each member the question names, with how well (`asked_parts`)."""
    out = _Scores()
    coded = countries_coded(text)
    pronouns = pronoun_codes(text)  # "tell us": a pronoun, not the country
    words, distinctive = words - pronouns, distinctive - pronouns
    rest_cue = _REST_CUE.search(text) is not None
    said = runs | _REMAINDER if rest_cue else runs
    negated = {w for m in _NEGATED.finditer(text) for w in tokens(m.group(1))}
    initials = {m.group(0) for m in _INITIALS.finditer(text) if m.group(0).lower() in distinctive}
    initials |= {m.group(0).replace("&", "") for m in _AMPERSAND_INITIALS.finditer(text)}
    rests = []
    for member, mwords in labels.members.items():
        rest = _rest_word(member[1])
        if rest in _REMAINDER - said:
            rests.append(member)
            continue  # "Other Americas", "Non-US": the rest of a whole, named only as such
        own_words = member_words(member[1])
        if rest not in _REMAINDER and own_words & negated:
            continue
        if rest in _REMAINDER and not mwords - _REMAINDER & words and not rest_cue:
            continue  # "held by non-affiliates" names no "Non-US": the rest of what?
        joined = labels.compact.get(member, "")
        # a name all of whose words are the measure's ("repurchases of common stock") is
        # the measure's, not Linde's CommonStockMember among its registered classes
        measures_own = bool(own_words) and own_words <= words - distinctive
        # its initials as named or as printed ("Energy & Transportation" of Caterpillar's
        # EnergyandTransportationMember, whose name runs two words together)
        initialed = bool(initials) and bool(initials & {
            _initials(split_name(member[1])), _initials(labels.names.get(member, ""))})
        if member[1] in coded or len(joined) >= MIN_COMPACT and joined in runs and \
                not measures_own or initialed:
            out.scored[member] = out.overall[member] = 1.0
            out.named[member] = coded.get(member[1]) or mwords & words
            if initialed:
                out.initialed.add(member)
            continue
        if own_words & _DIRECTIONS - words:
            continue
        own = _cover(own_words, words, distinctive)
        printed = [c for c in (_cover(label, words, distinctive)
                               for label in labels.printed.get(member, ())) if c]
        found = max([c for c in (own, *printed) if c], key=lambda c: c[0], default=None) or \
            _cover(mwords, words, distinctive)
        if found:
            out.overall[member] = max(own[0] if own else 0.0,
                                      len(mwords & words) / len(mwords))
            out.scored[member] = max(found[0], out.overall[member])
            out.named[member] = found[1]
    _drop_shared_with_rest(out, rests, labels)
    _drop_codes_of_names(out, coded)
    for spelled, acronym in spelled_out(text):
        for member, named in out.named.items():
            if acronym in named:  # "GM North America (GMNA)": all of it names gm:GmnaMember
                out.named[member] = named | spelled
    return out


def spelled_out(text: str) -> list[tuple[frozenset[str], str]]:
    """(the words, the acronym) of each name the question spells out before its acronym in
    brackets: "GM North America's (GMNA)", "Frito-Lay North America (FLNA)"; an acronym
    whose letters the words' initials (a word in capitals, all of it) do not spell is no such
    pair."""
    out = []
    for m in _BEFORE_ACRONYM.finditer(text):
        words = [w for w in re.split(r"[\s,-]+", re.sub(r"['\u2019]s\b", "", m.group(1)))
                 if w and w.lower() not in _NO_INITIAL]
        for start in range(len(words)):
            run = words[start:]
            if "".join(w if w.isupper() else w[0] for w in run).upper() == m.group(2):
                out.append((frozenset(tokens(" ".join(run))), m.group(2).lower()))
                break
    return out


def _drop_shared_with_rest(got: _Scores, rests: list[tuple[str, str]],
                           labels: FactLabels) -> None:
    """A member named in part by words the rest of its whole also holds names neither:
    "emerging markets" are Abbott's Key Emerging Markets and its Other Emerging Markets
    together, no figure of the first alone."""
    for member in [m for m, c in got.overall.items() if c < 1.0]:
        if any(rest[0] == member[0] and got.named[member] <= labels.members[rest]
               for rest in rests):
            del got.scored[member], got.overall[member], got.named[member]


def _drop_codes_of_names(got: _Scores, coded: dict[str, frozenset[str]]) -> None:
    """A country named by a code that another member named in full holds as a word of its
    own name is that member's word: "U.S. Government" names General Dynamics' customer
    member, not the United States as well."""
    for country, code in coded.items():
        member = next((m for m in got.named if m[1] == country), None)
        if member is not None and any(o != member and got.overall[o] == 1.0 and code <= named
                                      for o, named in got.named.items()):
            del got.scored[member], got.overall[member], got.named[member]


def _rest_word(member: str) -> str:
    """The word saying a member is the rest of a whole: its first ("Other Americas",
    "Non-US", "All Other") or a last "other" not joined to a name before it ("Manufactured
    Product Other", printed "Other product revenues"; "OEM and Other" is the OEM line's)."""
    words = _RAW_WORD.findall(split_name(member).lower())
    words = words[:-1] if words[-1:] == ["member"] else words
    if words[:2] == ["all", "other"]:  # "All Other Segments"
        return words[1]
    if len(words) > 1 and words[-1] == "other" and words[-2] not in _JOINING:
        return words[-1]
    return next(iter(words), "")


def _ranked(got: _Scores, text: str, runs: set[str],
            labels: FactLabels) -> list[tuple[str, str]]:
    """The members named, best first. "Compute & Networking" names the segment, not also
    the Compute product line whose words it holds. Of members equally well named: the one
    named by a word the question capitalizes ("Prolia product sales" names Amgen's Prolia,
    not its ProductMember printed "Product sales"); the one naming more of the question's
    words ("outside the U.S." over "the U.S."); the one more of whose own name, else of all
    its words, the question names ("United States" is printed for both country:US and
    "United States and Puerto Rico"); the one whose longest whole name the question says
    ("Americas" is srt:AmericasMember, not a member with a generic word more; "Walmart US"
    is the Walmart U.S. segment, not country:US)."""
    full = [m for m, c in got.overall.items() if c == 1.0]
    kept = {m: c for m, c in got.scored.items()
            if not any(labels.members[m] < labels.members[o] for o in full)}
    proper = _proper_words(text)

    def said_whole(m: tuple[str, str]) -> int:
        joined = labels.compact.get(m, "")
        return len(joined) if joined in runs else 0

    # "DPEP" names Disney's Parks, Experiences and Products by its initials, not the DMED
    # member a row printed "DPEP" holds a fact of
    return sorted(kept, key=lambda m: (-kept[m], m not in got.initialed,
                                       not got.named[m] & proper, -len(got.named[m]),
                                       -got.overall[m], -said_whole(m),
                                       -len(labels.members[m]), m))


def asked_parts(words: set[str], distinctive: set[str], text: str, labels: FactLabels,
                measure_label: Callable[[], frozenset[str]] = frozenset) -> Parts:
    """The members of `labels` the question (`text`) names. `words`: its content words
    (less the company's name); `distinctive`: those that may name a part (less the
    measure's and the statements' words). A member's name run together also matches the
    question's words run together ("iPhone" of aapl:IPhoneMember, split "I Phone").
    `measure_label`: the words of the label naming the measure best (read only when needed),
    which say no part is asked when they are all a part's name holds of the question."""
    runs = word_runs(text)
    got = _scores(words, distinctive, text, runs, labels)
    ranked = _ranked(got, text, runs, labels)
    # A member named only by some of the words naming a better one is no fallback for it:
    # "United Kingdom" is country:GB, and where GB has no figure, never country:US's.
    ranked = [m for i, m in enumerate(ranked)
              if not any(got.named[m] < got.named[o] for o in ranked[:i])
              and not _name_said_more(got.named[m], text, distinctive,
                                      labels.members[m] | got.named[m],
                                      labels.compact.get(m, ""), labels)]
    options = [frozenset({m}) | labels.within.get(m, frozenset()) for m in ranked]
    axes = {a for a, _ in ranked}
    if len(axes) > 1:  # "Americas iPhone sales": one member of each axis together
        best = [next(m for m in ranked if m[0] == a) for a in sorted(axes)]
        # each named by a word of its own ("Google Services" names the segment, not also the
        # Google advertising product line); named in full, both qualify the figure, so one
        # alone (the Americas' sales of every product for "iPhone sales in the Americas") is
        # no answer
        if all(got.named[m] - STATEMENT_WORDS - {w for o in best if o != m
                                                  for w in got.named[o]} for m in best):
            # the members named in full qualify the figure together whatever else is named
            # in part ("U.S. government customers": the United States and the Government
            # segment, with or without a "Customer I"): no one of them alone stands in
            full = frozenset(m for m in best if got.scored[m] == 1.0)
            if len(full) == len(best):
                options = [frozenset(best)]
            elif len(full) > 1:
                options = [frozenset(best), full]
            else:
                options = [frozenset(best), *options]
    if options and _sole_class(options[0], labels):
        options.append(frozenset())
    cue = (SEGMENT_CUE.search(text) is not None or names_a_place(text)) and \
        not _ALL_PARTS.search(text)
    # A distinctive word of a part's name the question does not name well enough ("Asia" of
    # "Rest of Asia Pacific") says it asks for a part, not for the company's total. Only the
    # member's own name counts: the labels printed beside its facts ("Less: ...") may hold
    # any word.
    named = [member_words(m) & distinctive - STATEMENT_WORDS - _REMAINDER
             for _, m in labels.members] if not options else []
    partial = any(named) and bool(frozenset().union(*named) - measure_label())
    return Parts(tuple(options), (cue or partial) and not options,
                 {m: got.named.get(m, frozenset()) for o in options for m in o})


# A run of capitalized words: a name as the question writes it ("Financial Service").
_CAPITALIZED_RUN = re.compile(r"\b[A-Z][\w'’]*(?:[ &-]+[A-Z][\w'’]*)*")
_POSSESSIVE = re.compile(r"['’]s\b")
# A name as written, its lower-case "of" and "the" included ("Rest of Asia Pacific", "Rest
# of the World"); "and" and "or" join two names.
_WRITTEN_NAME = re.compile(r"\b[A-Z][\w'’]*(?:(?:[ &-]+|\s+(?:of|the|of the)\s+)[A-Z][\w'’]*)*")


def written_part(text: str, named: frozenset[str]) -> tuple[int, str] | None:
    """Where the question writes the name holding the words naming a part, and that name as
    written ("Compute & Networking", "iPhone"): the first capitalized run or camel-case name
    holding one of them; None where it writes none ("product line")."""
    text = _POSSESSIVE.sub(",", text)
    runs = sorted((*_WRITTEN_NAME.finditer(text), *_CAMEL_NAME.finditer(text)),
                  key=lambda m: m.start())
    found = next((m for m in runs if set(tokens(m.group(0))) & named), None)
    if found is None:
        return None
    # a question's first word ("Was Rest of Asia Pacific ...") is no word of the name
    words = found.group(0).split(" ")
    while len(words) > 1 and not tokens(words[0]):
        words.pop(0)
    name = " ".join(words)
    return found.end() - len(name), name.strip(" &-")


def _name_said_more(named: frozenset[str], text: str, distinctive: set[str],
                    mwords: frozenset[str], compact: str, labels: FactLabels) -> bool:
    """Whether the capitalized name that holds the words naming a member says more than the
    member's name (its words, or its name run together: "MarketsandCorporate"): "Boeing's
    Financial Service segment" names no Services member, whose figure would answer for a
    segment the filing does not have. Words after the name that only the filing's concepts
    hold are the measure written in capitals ("Theme Parks Adjusted EBITDA", "Packaging &
    Specialty Plastics Operating EBIT"), not more of the name."""
    for run in _CAPITALIZED_RUN.finditer(_POSSESSIVE.sub(",", text)):  # "Alphabet's | Google"
        said = tokens(run.group(0))
        if not set(said) & named:
            continue
        last = max(i for i, w in enumerate(said) if w in named)
        measure = set(said[last + 1:]) & labels.measure_vocabulary()
        if any(len(w) < MIN_COMPACT or w not in compact
               for w in set(said) & distinctive - mwords - measure):
            return True
    return False


def _proper_words(text: str) -> frozenset[str]:
    """The words of the names a question capitalizes inside its sentences ("Prolia"), and
    of those written with a capital inside ("iPhone")."""
    found = [m for m in NAME.finditer(text) if not SENTENCE_START.search(text[:m.start()])]
    return frozenset(w for m in (*found, *_CAMEL_NAME.finditer(text)) for w in tokens(m.group(0)))


def _initials(name: str) -> str:
    """The initials of a name, in capitals ("Frito Lay North America": "FLNA"; two words
    joined by "and": "Energy & Transportation", "ET", which only "E&T" writes)."""
    said = [w for w in re.findall(r"[A-Za-z]+", name.replace("&", " and "))
            if w.lower() not in _NO_INITIAL - {"and"}]
    words = [w for w in said if w.lower() != "and"]
    joined = len(words) == 2 and len(said) == 3 and said[1].lower() == "and"
    return "".join(w[0] for w in words).upper() if len(words) >= 3 or joined else ""


def _sole_class(option: frozenset[tuple[str, str]], labels: FactLabels) -> bool:
    """Whether `option` is a class of stock that is the filing's only one: its figure is
    the company's too ("shares of common stock" of a company with one class, whose cover
    tags the count without a member). The notes a cover lists beside its stock on the same
    axis are no class of stock, and the equity statement's plain "Common Stock" column is
    that one class (Mondelez: Class A, its notes due 2027-2045, CommonStockMember)."""
    return bool(option) and all(
        _CLASS_AXIS.search(axis) and
        sum(a == axis and not _NOT_ANOTHER_CLASS.search(m) for a, m in labels.members) == 1
        for axis, _ in option)


def _cover(mwords: frozenset[str], words: set[str],
           distinctive: set[str]) -> tuple[float, frozenset[str]] | None:
    """(share of `mwords` the question names, the words naming them) when that names the
    member: at least MEMBER_COVER, with a distinctive word that is no statement's."""
    hit = mwords & words
    # "non" negates the word it joins ("non-affiliates"): alone it names no "Non-DoD" member
    if not mwords or len(hit) / len(mwords) < MEMBER_COVER or \
            not hit & distinctive - STATEMENT_WORDS - _NEGATING:
        return None
    return len(hit) / len(mwords), hit
