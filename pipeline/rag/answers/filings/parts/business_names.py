"""A company named by one of its businesses: "What were Optum's total revenues in 2024?"
names no registrant, but UnitedHealth tags a segment Optum. A question that names no
company, and capitalizes a name every distinctive word of which is one business segment's,
product line's or brand's of exactly one company's filings, is that company's question
(and the part is then matched as any segment a question names). A name two companies
share, or a word in lower case ("product revenue"), names no company.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pipeline.rag.answers.filings.fact_labels import member_words
from pipeline.rag.answers.question_words import tokens
from retriever_trt.documents.model import Fact

# The axes whose members are businesses a company is known by; a region or a class of
# stock is no company's name.
BUSINESS_AXES = re.compile(r"BusinessSegments|Segment|ProductOrService|Brand|Division", re.I)
# A capitalized word: a name (a sentence's first word too: "Optum's revenue in 2024?").
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9&]*\b")


def businesses(facts: Iterable[Fact]) -> frozenset[frozenset[str]]:
    """The distinctive words of each business member the facts are tagged with."""
    out = set()
    for f in facts:
        for axis, member in f.dimensions:
            if BUSINESS_AXES.search(axis) and (words := member_words(member)):
                out.add(words)
    return frozenset(out)


def company_of_business(question: str,
                        known: dict[str, frozenset[frozenset[str]]]) -> str | None:
    """The company key whose businesses alone hold a name the question capitalizes; None
    when no company's or several companies' do."""
    words = set(tokens(question))
    names = {w for m in _NAME.finditer(question) for w in tokens(m.group(0))}
    found = {company for company, parts in known.items()
             if any(part <= words and part & names for part in parts)}
    return found.pop() if len(found) == 1 else None
