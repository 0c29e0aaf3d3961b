"""A stop on a repeated word n-gram, applied to the generated text as it streams.

A small model that has run out of things to say loops ("2019: 2019: 2019: ..."). The
engine's `repetition_penalty` would curb it, but it also penalises the prompt's tokens, and
an answer has to copy the passages' numbers and names; `frequency_penalty` bends every
later token. Stopping instead leaves the answer's own tokens as the model chose them and
ends it where it starts over: at the first word of the first n-gram seen twice.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\S+")


class RepeatGuard:
    """Feed the cumulative text; `safe` is how much of it can be shown for good.

    Only whole words count (the last one may still grow), and the last n-1 whole words are
    held back too: a repeat that ends later starts no earlier than there.
    """

    def __init__(self, n: int) -> None:
        if n < 2:
            raise ValueError(f"the repeated n-gram needs n >= 2, got {n}")
        self.n = n
        self.safe = 0
        self.cut: int | None = None  # where the text ends once a repeat was found

    def feed(self, text: str, final: bool = False) -> int:
        """How many characters of `text` are settled; sets `cut` when a repeat is found."""
        spans = [(m.start(), m.group()) for m in _WORD.finditer(text)]
        if not final and spans and spans[-1][0] + len(spans[-1][1]) == len(text):
            spans.pop()  # the last word may still grow
        seen: set[tuple[str, ...]] = set()
        words = [w.lower() for _, w in spans]
        for i in range(len(words) - self.n + 1):
            gram = tuple(words[i:i + self.n])
            if gram in seen:
                self.cut = len(text[:spans[i][0]].rstrip())
                self.safe = self.cut
                return self.safe
            seen.add(gram)
        if final:
            self.safe = len(text)
        else:
            held = len(spans) - (self.n - 1)
            self.safe = spans[held][0] if held >= 0 else 0
        return self.safe
