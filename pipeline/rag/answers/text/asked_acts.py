"""The act a count question asks of, which the sentence answering it must state.

"How many bitcoin did Marathon sell in Q2 2023?" counts bitcoin sold; "the Company held
approximately 12,538 bitcoin" counts bitcoin held, and its figure is no answer. For acts
whose count differs from the count of the same things on hand (selling, buying, opening,
hiring...), a sentence answers only when it states the act, in any of its forms: "sold",
"the sale of approximately 1,854 bitcoin".
"""

from __future__ import annotations

import re

from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.text.span_words import is_form_of, word_stem

# Forms of a verb that its stem does not open, by the verb's stem: irregular pasts, and the
# sale that "sell" names ("the sale of approximately 1,854 bitcoin").
_IRREGULAR = {"sold": "sell", "sale": "sell", "bought": "buy", "held": "hold", "paid": "pay",
              "made": "make", "spent": "spend", "built": "build"}
# And nouns of an act that is one of the counted ones: a repurchase is a purchase ("bought
# back"). Sentences are not scored by these: "purchases" of property say nothing of shares
# repurchased.
_ACT_FORMS = {**_IRREGULAR, "purchas": "buy", "repurchas": "buy", "acquisit": "acquire"}
# Acts counted apart from what is on hand: a count of things sold, bought, opened or hired
# is a flow, and a sentence counting the stock (or another flow) answers none of them. What
# is held is what the company has ("we have more than 23,500 active patents"): no act; what
# it owns is not what it leases.
COUNTED_ACTS = ("sell", "buy", "acquire", "issue", "grant", "open", "close", "hire",
                "mine", "produce", "deliver", "ship", "own", "lease", "retire", "redeem",
                "exercise", "vest", "forfeit", "launch", "sign", "originate", "build", "add")
# After "how many <noun>", the auxiliary before its subject and verb ("did Marathon sell",
# "were repurchased").
_AUXILIARY = re.compile(r"\bhow many\b[^?]*?\b(?:did|do|does|will|would|has|have|had|were|was|"
                        r"are|is)\s+([^?]*)", re.I)
# Words between the auxiliary and the verb that are its subject, besides names (capitalized).
_SUBJECT = frozenset({"the", "a", "an", "company", "firm", "it", "they", "we", "its", "their",
                      "our", "business"})


def act_stem(word: str) -> str:
    """A word's stem, or the verb's whose irregular form it is ("sold" -> "sell")."""
    stem = word_stem(word)
    return _IRREGULAR.get(stem, stem)


def _is_act(word: str, verb: str) -> bool:
    """Whether `word` is a form of `verb`: inflected ("opened"), or one `_ACT_FORMS` lists."""
    return _ACT_FORMS.get(word_stem(word)) == verb or is_form_of(word, verb)


def counted_act(question: str) -> str | None:
    """The verb of the act a "how many" question counts ("sell" of "did Marathon sell");
    None when it names none of `COUNTED_ACTS` ("how many employees did it have")."""
    m = _AUXILIARY.search(question)
    if m is None:
        return None
    words = (w.strip(",.;:?\"“”") for w in m.group(1).split())
    verb = next((w.lower() for w in words if w and not w[0].isupper()
                 and w.lower() not in _SUBJECT), None)
    return next((act for act in COUNTED_ACTS if verb and _is_act(verb, act)), None)


def states_act(question: str, sentence: str) -> bool:
    """Whether `sentence` (or a fact's label) states the act the question counts, or the
    question names none."""
    act = counted_act(question)
    return act is None or any(_is_act(w, act) for w in tokens(sentence))
