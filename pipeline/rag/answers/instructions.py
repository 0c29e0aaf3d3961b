"""A question's directions to the answerer, told apart from what it asks.

Analysts' prompts wrap a question in directions: where to look ("Using the information
provided in the income statement, what ..."), from whose seat ("Respond by assuming the
perspective of an investment analyst who can only use the details shown within the statement
of cash flows.") and how to write the number ("Answer in USD millions. Round to two decimal
places."). Their words ("information", "item", "unit", "investment") name no figure; read as
the measure's words they asked for a part of a figure, or for a line no label holds.
`asked_part` is the question without them; the measure's words are read from it
(`query.parse_query`). Which statement the direction names is read from the whole question,
as before.
"""

from __future__ import annotations

import re

# Words by which a direction names its source or the answer's form: a clause or sentence
# holding none of them is part of the ask ("Calculate the gross margin as gross profit
# divided by revenue." defines the figure; it is kept).
_SOURCE = (r"(?:information|details|data|statements?|sheets?|line items?|items? shown|filing|"
           r"10-?k|10-?q|report|unit|units|decimals?|places?|perspective|judge?ments?|"
           r"conclusions?|millions|billions|thousands|percentages?|format)")
# Verbs a direction sentence starts with (after "Please"): how to answer, what to use.
_DIRECTION_VERBS = (r"(?:answer|respond|reply|round|express|give|provide|present|show|state|"
                    r"address|assume|utilize|use|base|rely|consider|focus|limit|calculate|"
                    r"compute|report|write|keep|ensure|do not|don't)")
_DIRECTION_SENTENCE = re.compile(
    rf"^\s*(?:please,?\s+|kindly\s+)?{_DIRECTION_VERBS}\b.*\b{_SOURCE}\b", re.I | re.S)
# "Using the information in ...,", "Based on its balance sheet,": a leading clause up to its
# comma; and the same words trailing the ask after a comma.
_LEADS = (r"(?:please\s+)?(?:using|use|based on|basing [\w\s]{0,20}? on|according to|"
          r"taking into account|by [a-z]+ing|relying on|referring to|with reference to|"
          r"in light of|considering|looking at|from|per)")
_LEADING_CLAUSE = re.compile(rf"^\s*{_LEADS}\b[^,?]*?\b{_SOURCE}\b[^,?]*,\s*", re.I)
_TRAILING_CLAUSE = re.compile(rf",\s*{_LEADS}\b[^,?]*?\b{_SOURCE}\b[^,?]*(?=[?.]?\s*$)", re.I)
# A sentence ends at ".", "?" or "!" before a capital: "U.S." mid-sentence rarely meets one.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'(])")


def asked_part(text: str) -> str:
    """The question without its directions. The sentence that asks (the one with "?", else
    the first) is always kept, less a leading or trailing direction clause."""
    sentences = _SENTENCE_END.split(text.strip())
    ask = next((i for i, s in enumerate(sentences) if "?" in s), 0)
    kept = []
    for i, sentence in enumerate(sentences):
        if i == ask:
            sentence = _TRAILING_CLAUSE.sub("", _LEADING_CLAUSE.sub("", sentence))
        elif _DIRECTION_SENTENCE.search(sentence):
            continue
        kept.append(sentence)
    return " ".join(kept)
