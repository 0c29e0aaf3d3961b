"""Where the answer to a question about the text starts and ends inside its sentence.

The sentence holding an answer restates most of the question first ("Our ongoing involvement
is limited to | the remittance of customer payments ...") and often goes on past it ("...;
therefore, our sold trade receivables are not included"). A reader, and TAT-QA's graders,
want the words between: this module finds that span's start (past the words restating the
question, its verb and preposition) and its end (before a second clause, a contrast, a
note in brackets, or words restating the question again), the name a "who" or "which"
question asks for, and the items of a list a colon introduces.
"""

from __future__ import annotations

import re

from pipeline.rag.answers.text.span_words import Asked
from retriever_trt.documents.years import YEAR_DIGITS

# Content words the restating subject may hold that the question has not ("The minimum
# fixed payments in these agreements | have been classified as ..."): more and the sentence
# is saying something else before the question's words come back.
MAX_NEW_IN_OPENING = 2
# The opening restates the question only with at least this many of its words.
MIN_RESTATED = 2
# Words restating the question that end a span are cut with at least this many of them
# ("... licensees | to record its revenue"); one ("of impairment") may be the answer's own.
MIN_RESTATED_TAIL = 2
# What is left of a span cut at its end has at least this many words.
MIN_KEPT_WORDS = 2
# A line of this many words or fewer that does not end as a sentence does is a heading.
HEADING_WORDS = 8
# Leading adverbial phrases ("As further described in Note 2, effective October 1, 2018,
# ...") set aside before the subject: at most this many, each of at most INTRO_WORDS words.
MAX_INTROS = 3
INTRO_WORDS = 8

# A verb or auxiliary: where a sentence's subject ends.
_AUXILIARIES = {"is", "are", "was", "were", "be", "been", "being", "has", "have", "had",
                "can", "could", "may", "might", "will", "would", "should", "must", "shall"}
# Words the verb group after the subject may hold besides auxiliaries, adverbs and the
# question's words: "has | an | investment arrangement".
_DETERMINERS = {"a", "an", "the", "its", "our", "their", "not"}
_ARTICLES = _DETERMINERS - {"not"}
_COPULAS = {"is", "are", "was", "were", "be", "been"}
_WH_WORDS = {"what", "which", "who", "whom", "when", "where", "why", "how"}
# A sentence opening with its own clause puts the answer first: "To assess X, we analyse".
_CLAUSE_OPENERS = {"to", "by", "if", "because", "although", "though", "unless", "despite",
                   "while", "whereas"}
# Words between the restatement and the answer: auxiliaries, modals, hedges, "that".
_LINKING = _AUXILIARIES | {"which", "that", "primarily", "mainly", "largely", "significantly",
                           "generally", "also"}
_DEFINING = {"represents", "represent", "refers", "refer", "means", "mean"}
_PREPOSITIONS = {"of", "by", "to", "on", "as", "in", "into", "within", "from", "with",
                 "through", "at", "over", "that"}
# A "how", "where" or "why" question's preposition is part of its answer ("by adding back
# ...", "within note 35"); a "what" question's is not ("limited to | the remittance").
_KEEPS_PREPOSITION = re.compile(r"^\s*(?:how|where|why)\b", re.I)
# A passive verb's participle, skipped with the preposition after it ("is performed by |
# comparing ...").
_PARTICIPLE = re.compile(r"^[a-z]+(?:ed|en)$")
# Sentence openers that connect to what came before and are no part of any answer.
_CONNECTIVE = re.compile(r"^(?:therefore|however|additionally|accordingly|furthermore|"
                         r"moreover|consequently|in addition|as a result|in particular|"
                         r"similarly|also),\s+", re.I)
# The first opens with a preposition ("In 2019, 2018 and 2017, the Company's ..."), the
# others go on from it.
_INTRO = re.compile(rf"^((?:as|in|on|at|during|for|effective|following|after|before|since|"
                    rf"under|with|from|through|based|to the extent)\s+(?:[^,\s]+\s+)"
                    rf"{{0,{INTRO_WORDS - 2}}}[^,\s]+),\s+", re.I)
_MORE_INTRO = re.compile(rf"^((?:[^,\s]+\s+){{0,{INTRO_WORDS - 1}}}[^,\s]+),\s+")

# The words opening a sentence that, said again after an "and", open a second clause.
SUBJECT_WORDS = 2
# Where one clause of a sentence ends and another starts: ";", ", while", ", whereas".
_CLAUSES = re.compile(r";\s+|,?\s+(?:while|whereas)\s+", re.I)
# "but" before a verb starts a second clause too ("annually | but are removable").
_BUT = re.compile(r"\s+but\s+(?:is|are|was|were|has|have|had|may|can|will|could|would|do|does|"
                  r"did|not)\b", re.I)
# A closing note in brackets: the prior period's figure ("(2018: n/a)"), a reference
# ("(see ...)"), a unit ("(in thousands)"), nil for another year.
_TRAILING_NOTE = re.compile(rf"\s*\((?:[^()]*?\b{YEAR_DIGITS}(?:/\d\d)?\s*:|see\s|in (?:thousands|"
                            r"millions|billions)|nil\b|none\b)[^()]*\)\s*$", re.I)
_AS_FOLLOWS = re.compile(r"\s+(?:were|are|was|is)\s+as\s+follows\s*$", re.I)
# An appositive after a name: "Automated Packaging Systems, Inc., a manufacturer of ...",
# to the span's end or before the list's next item.
_APPOSITIVE = re.compile(r"(\S+),\s+an?\s+[a-z][^,;]*(?:,(?=\s+and\s)|$)")
# A trailing time phrase a question naming the year already fixes ("not material | at
# December 31, 2019, 2018 and 2017").
_TRAILING_TIME = re.compile(r"\s+(?:at|as of|as at|in|for|during|on)\s+(?:(?:fiscal|the year "
                            r"ended|the years ended)\s+)?(?:[A-Z][a-z]+\.?\s+\d{1,2},?\s+|"
                            r"\d{1,2}\s+[A-Z][a-z]+\s+)?"
                            rf"{YEAR_DIGITS}(?:(?:,\s*|\s+and\s+|,\s+and\s+){YEAR_DIGITS})*\s*$")
# "Was there a material bad debt expense in 2019?": the sentence that says so answers whole.
_YES_NO = re.compile(r"^\s*(?:is|are|was|were|do|does|did|has|have|had|can|will)\b", re.I)
# "Who approved ...", "Which market ...": a name answers.
_ASKS_NAME = re.compile(r"^\s*(?:who|which)\b(?!\s+(?:years?|periods?|months?|quarters?)\b)",
                        re.I)
_ASKS_WHO = re.compile(r"^\s*who\b", re.I)
_LEADING_PREPOSITION = re.compile(r"^(?:by|on|at|in|to|with|from|under)\s+", re.I)
_NAME_WORD = r"[A-Z0-9][\w.&’'-]*"
_NAME = re.compile(rf"^(?:the\s+)?{_NAME_WORD}(?:\s+(?:(?:of|and|&|for|the)\s+)*{_NAME_WORD})*")
# A list a colon introduces ("seven geographic regions: United States, China, ..."): short
# items, at least three.
MIN_LIST_ITEMS = 3
MAX_ITEM_WORDS = 6
_LIST_SPLIT = re.compile(r",\s+(?:and\s+)?|\s+and\s+")


def clean(span: str) -> str:
    """A span without a footnote mark and the sentence's punctuation around it."""
    span = re.sub(r"^\s*\(\d{1,2}\)\s*", "", span)  # a footnote's "(1)"
    # Closing punctuation is the sentence's, not the span's: "... 2019.", "... 2019.”"
    return span.strip(" ,;:-–—").rstrip(".;:,\"” ").strip()


def _opening(asked: Asked, words: list[str], intro: int = 0) -> int:
    """How many of `words` restate the question: a subject of its words (and up to
    MAX_NEW_IN_OPENING others) with the verb group after it ("Goodwill | is considered
    impaired"), or, with no verb met, the words up to the first the question does not
    have; 0 when fewer than MIN_RESTATED restate it (with the `intro` restated in the
    phrases before it: "In 2019, | the Company acquired") or the sentence opens with a clause of its own
    ("To assess ...", "If ...")."""
    if not words or words[0].lower() in _CLAUSE_OPENERS:
        return 0
    restated, new = intro, 0
    verb_at = None
    for i, w in enumerate(words):
        if w.lower().strip(",") in _AUXILIARIES and restated:
            verb_at = i
            break
        if w.lower() == "that" and i and _PARTICIPLE.match(words[i - 1].lower()) and \
                asked.restates(words[i - 1]):
            return i + 1  # "The Group has assumed that | mortality will ...": its clause
        said = asked.restates(w)
        restated += bool(said)
        new += said is False
        if new > MAX_NEW_IN_OPENING:
            break
    if verb_at is None:
        return _contiguous(asked, words, intro)
    cut = verb_at
    for j in range(verb_at, len(words)):  # "is | considered impaired", "have been | classified"
        low = words[j].lower().strip(",")
        said = asked.restates(words[j])
        if said:
            restated, cut = restated + 1, j + 1
        elif low in _ARTICLES and words[j - 1].lower() in _COPULAS:
            break  # "Liquidity risk is | the risk that ...": what it is, the answer
        elif low in _AUXILIARIES or low in _DETERMINERS or low.endswith("ly") or (
                said is None and j + 1 < len(words) and asked.says_before(low, words[j + 1])):
            continue  # "entered | into with | different counterparties", as the question has
        else:
            break
    return cut if restated >= MIN_RESTATED else 0


def _contiguous(asked: Asked, words: list[str], intro: int) -> int:
    """The words before the first the question does not have, when MIN_RESTATED of them
    (and the `intro`'s) restate it; else 0."""
    cut, restated = 0, intro
    for i, w in enumerate(words):
        said = asked.restates(w)
        if said is False:
            break
        if said:
            restated, cut = restated + 1, i + 1
    return cut if restated >= MIN_RESTATED else 0


def _question_s_own(asked: Asked, word: str) -> bool:
    """A function word the question says too ("related | to", "value | represents"), not an
    auxiliary, article or wh-word: those start the answer's own words."""
    low = word.lower()
    return low in asked.said and asked.restates(word) is None and \
        low not in _AUXILIARIES | _ARTICLES | _WH_WORDS


def _past_verb(asked: Asked, words: list[str], cut: int) -> int:
    """`cut` moved past what joins the restatement to the answer: the question's own "to"
    ("related | to"), "are comprised of" (the question's verb), "represents", "is performed
    by" (a passive), "is to"."""
    j = cut
    while j < len(words) and _question_s_own(asked, words[j]):
        j += 1
    linked = j
    while j < len(words) and words[j].lower() in _LINKING:
        j += 1
    verb = words[j].lower().strip(",") if j < len(words) else ""
    after = words[j + 1].lower() if j + 1 < len(words) else ""
    # The question's verb after an auxiliary ("is | to"), not the question's next noun
    # after the opening has taken its verb ("are comprised of | fees").
    if verb and (verb in _DEFINING or j > linked and (
            asked.has_verb(verb) or _PARTICIPLE.match(verb) and after in _PREPOSITIONS)):
        j += 1
        while j < len(words) and words[j].lower() in _LINKING:
            j += 1  # "impacted | primarily | by"
    if not _KEEPS_PREPOSITION.search(asked.text):
        while j < len(words) and words[j].lower() in _PREPOSITIONS:
            j += 1
    return j


def _without_intro(asked: Asked, words: list[str]) -> list[str]:
    """The words after leading phrases that name none of the question's words ("As further
    described in Note 2, | effective October 1, 2018, | the component ...")."""
    for i in range(MAX_INTROS):
        m = (_MORE_INTRO if i else _INTRO).match(" ".join(words))
        if m is None or any(asked.restates(w) and not w[:1].isdigit()
                            for w in m.group(1).split()):
            break
        words = words[len(m.group(1).split()):]
    return words


def _best_clause(asked: Asked, sentence: str) -> str:
    """The clause of a sentence that restates most of the question ("OEM are ..., while
    Distribution customers refers to ..."); the first on ties."""
    clauses = [c for c in _CLAUSES.split(sentence) if c.strip()] or [sentence]
    # "The Group operates X in A and the Group operates Y in B": "and" before the
    # sentence's own subject again starts a second clause.
    subject = " ".join(sentence.split()[:SUBJECT_WORDS])
    if len(subject.split()) == SUBJECT_WORDS:
        again = re.compile(rf",?\s+and\s+(?={re.escape(subject)}\b)", re.I)
        clauses = [part for c in clauses for part in again.split(c) if part.strip()]
    return max(clauses, key=lambda c: sum(bool(asked.restates(w)) for w in c.split()))


def beyond_question(asked: Asked, sentence: str) -> str | None:
    """What a sentence (or clause) says past its opening words that restate the question ("Goodwill is
    considered impaired | if the carrying value ..."), its end trimmed (`trim_end`); None
    when the sentence opens with something else or nothing is left."""
    words = _CONNECTIVE.sub("", clean(sentence)).split()
    intro = len(words)
    words = _without_intro(asked, words)
    intro = sum(bool(asked.restates(w)) for w in clean(sentence).split()[:intro - len(words)])
    cut = _opening(asked, words, intro)
    if not cut:
        return None
    rest = trim_end(asked, " ".join(words[_past_verb(asked, words, cut):]))
    if not any(asked.restates(w) is False for w in rest.split()):
        return None  # only the question's own words are left
    return rest


def _restating_tail(asked: Asked, words: list[str]) -> int:
    """Where the words closing a span that only restate the question begin ("royalty
    reports received from third party licensees | to record its revenue"); len(words)
    when none do."""
    k = len(words)
    while k > 0 and asked.restates(words[k - 1]) is not False:
        k -= 1
    # The run opens with a joining word ("to", "are", "since"), not with a name's last word.
    while k < len(words) and asked.restates(words[k]):
        k += 1
    restated = sum(bool(asked.restates(w)) for w in words[k:])
    if restated < MIN_RESTATED_TAIL or k < MIN_KEPT_WORDS:
        return len(words)
    return k if any(asked.restates(w) is False for w in words[:k]) else len(words)


def _unless_common(m: re.Match) -> str:
    """An appositive's match dropped after a name (capitalised, or an abbreviation in
    brackets), kept after a common noun: "higher volume, a favorable mix" is a list."""
    before = m.group(1)
    return before if before[:1].isupper() or before.endswith(")") else m.group(0)


def first_clause(span: str) -> str:
    """A span without a second clause, a contrast, a closing note in brackets or "were as
    follows" after it."""
    span = clean(span)
    for clause_end in (_CLAUSES, _BUT):
        m = clause_end.search(span)
        if m and m.start() > 0:
            span = span[:m.start()]
    return clean(_AS_FOLLOWS.sub("", _TRAILING_NOTE.sub("", span)))


def trim_end(asked: Asked, span: str) -> str:
    """A span without what follows its answer: a second clause, a closing note (see
    `first_clause`), an appositive after a name, the question's own words, a time phrase
    when the question names the year."""
    span = _APPOSITIVE.sub(_unless_common, first_clause(span))
    if asked.years:
        span = _TRAILING_TIME.sub("", span)
    words = span.split()
    return clean(" ".join(words[:_restating_tail(asked, words)]))


def name_in(question: str, span: str) -> str | None:
    """The name a "who" or "which" question asks for, when the span opens with one and goes
    on ("by | the Board of Directors | on 6 June 2019", "Apple | represented 17.6% ...");
    None otherwise, or when the name is the first of a list ("Germany, Ghana, ...")."""
    if not _ASKS_NAME.search(question):
        return None
    rest = _LEADING_PREPOSITION.sub("", span)
    m = _NAME.match(rest)
    if m is None or m.end() == len(rest):
        return None
    if re.match(r",\s*[A-Z]", rest[m.end():]) and not _ASKS_WHO.search(question):
        return None  # a list; "who": a name and the title after it ("J. Doe, Treasurer")
    name = m.group(0).rstrip(".,")
    return name if name.lower() not in ("the", "we", "our") else None


def list_items(span: str) -> list[str] | None:
    """The items of a list after a colon ("... seven geographic regions: United States,
    China, Japan and Europe"), MIN_LIST_ITEMS or more of at most MAX_ITEM_WORDS words
    each; None for anything else (numbered steps "(1) ..." stay one span)."""
    _, colon, tail = span.partition(": ")
    if not colon or re.search(r"\(\w\)|\b\d+\)", tail):
        return None
    items = [clean(i) for i in _LIST_SPLIT.split(tail) if clean(i)]
    if len(items) < MIN_LIST_ITEMS or any(len(i.split()) > MAX_ITEM_WORDS for i in items):
        return None
    return items


def is_heading(sentence: str) -> bool:
    """A heading, not a sentence: HEADING_WORDS words or fewer without a closing stop."""
    text = sentence.strip()
    return len(text.split()) <= HEADING_WORDS and not text.endswith((".", "!", "?", ":", ".”"))


def span_of(asked: Asked, sentence: str) -> str | list[str]:
    """The span of a sentence that answers a question about the text: past the words
    restating the question and before what follows the answer; the name a "who" / "which"
    question asks for; the items of a list after a colon. The sentence, trimmed, when it
    does not open by restating the question; whole for a yes-or-no question."""
    if _YES_NO.search(asked.text):
        return clean(sentence)  # "Was there ...?": the sentence saying so, whole
    sentence = _best_clause(asked, clean(sentence))
    span = beyond_question(asked, sentence) or trim_end(asked, sentence) or clean(sentence)
    return name_in(asked.text, span) or list_items(span) or span
