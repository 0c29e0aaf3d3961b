"""Initials a question writes for a measure a filing spells out ("EBIT-adjusted" of GM's
"Earnings (loss) before interest and taxes-adjusted"): a question's word in capitals that no
label holds, but that the initials of one run of a label's words spell, stands for that
run's words."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pipeline.rag.answers.question import tokens

# Initials a measure is written in: three to six capitals ("EBIT", "EBITDA"); two are too
# few to tell one run of words from another.
_CAPITALS = re.compile(r"\b[A-Z]{3,6}\b")
_ASIDE = re.compile(r"\([^()]*\)")  # "(loss)" of "Earnings (loss) before ...": no initial
_WORD = re.compile(r"[a-z]+")
# Words initials may leave out: "EBIT" skips the "and" of "interest and taxes", though
# "COGS" keeps the "of" of "cost of goods sold" (both readings are tried).
_SKIPPED = frozenset({"and", "of", "the", "a", "an"})


def _runs(label: str, letters: str) -> Iterable[frozenset[str]]:
    """The words (`tokens`) of each run of the label's words whose initials are `letters`."""
    words = _WORD.findall(_ASIDE.sub(" ", label.lower()))
    for run in (words, [w for w in words if w not in _SKIPPED]):
        for start in range(len(run) - len(letters) + 1):
            chosen = run[start:start + len(letters)]
            # a run ends on no skipped word: "EBITDA" is not "... depreciation and"
            if "".join(w[0] for w in chosen) == letters and chosen[-1] not in _SKIPPED:
                yield frozenset(tokens(" ".join(chosen)))


def spelled_initials(words: frozenset[str], text: str, labels: Iterable[str],
                     known: frozenset[str]) -> frozenset[str]:
    """The measure's words with each initialism the question writes in capitals, that no
    label holds as a word (`known`), spelled out as the one run of label words it stands
    for; one that stands for two different runs, or none, stays as written."""
    asked = {m.group(0).lower() for m in _CAPITALS.finditer(text)}
    asked = {a for a in asked if a in words and a not in known}
    if not asked:
        return words
    labels = list(labels)
    out = set(words)
    for letters in asked:
        found = {run for label in labels for run in _runs(label, letters)}
        if len(found) == 1:
            out = (out - {letters}) | next(iter(found))
    return frozenset(out)


def with_initials(label: str, words: frozenset[str]) -> frozenset[str]:
    """The label's words (`tokens`), each run of them that one of `words` spells by its
    initials written as that word: "Adjusted Earnings Before Interest Taxes Depreciation And
    Amortization" with "ebitda" is {adjusted, ebitda}."""
    out = frozenset(tokens(label))
    for letters in words:
        run = next(iter(_runs(label, letters)), None) if len(letters) >= 3 else None
        if run is not None:
            out = out - run | {letters}
    return out
