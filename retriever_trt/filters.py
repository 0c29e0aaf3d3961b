"""Metadata filters, as a vector database has them: `{doc_id, company, form, fiscal_year}`,
each a value or a list; a document passes when it matches every field given (any of a
field's values). Retrieval searches only the chunks of the documents that pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from retriever_trt.documents.model import Form

FILTER_FIELDS = ("doc_id", "company", "form", "fiscal_year")
# Words a registrant's name carries that nobody says: "Apple Inc." is "Apple".
_LEGAL_WORDS = re.compile(
    r"\b(?:inc|incorporated|corp|corporation|co|company|companies|ltd|limited|plc|llc|lp|"
    r"holdings?|group|n\.?v|s\.?a|ag|se|the)\b\.?|/[a-z]{2}\b", re.I)


def company_key(name: str) -> str:
    """A company's name for matching: lower case, no legal words or punctuation
    ("THE BOEING COMPANY" and "Boeing Co" are both "boeing"; "Coca-Cola" is "coca cola")."""
    name = _LEGAL_WORDS.sub(" ", name.replace("&", " and ").replace("’", "'"))
    words = re.sub(r"[^a-z0-9 ]+", " ", name.lower()).split()
    while words and words[-1] == "and":  # "Wells Fargo & Company": the "&" of a legal word
        words.pop()
    return " ".join(words)


def _values(name: str, raw: Any) -> tuple[Any, ...]:
    items = raw if isinstance(raw, list) else [raw]
    if not items:
        raise ValueError(f"filters.{name}: give a value or a non-empty list")
    if name == "fiscal_year":
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            raise ValueError("filters.fiscal_year: give a year as an integer (e.g. 2024) or a list")
        return tuple(items)
    if not all(isinstance(v, str) and v.strip() for v in items):
        raise ValueError(f"filters.{name}: give a non-empty string or a list of them")
    if name == "form":
        forms = tuple(Form.parse(v) for v in items)
        unknown = [v for v, f in zip(items, forms, strict=True)
                   if f is Form.OTHER and v.strip().lower() != "other"]
        if unknown:
            raise ValueError(f"filters.form: unknown form {unknown[0]!r}; one of "
                             f"{', '.join(f.value for f in Form)}")
        return forms
    return tuple(items)


@dataclass(frozen=True)
class MetadataFilter:
    doc_id: tuple[str, ...] = ()
    company: tuple[str, ...] = ()
    form: tuple[Form, ...] = ()
    fiscal_year: tuple[int, ...] = ()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> MetadataFilter | None:
        """The filter of a request's `filters` object; a ValueError names what to fix."""
        if not raw:
            return None
        unknown = sorted(set(raw) - set(FILTER_FIELDS))
        if unknown:
            raise ValueError(f"filters: unknown field {unknown[0]!r}; fields: "
                             f"{', '.join(FILTER_FIELDS)}")
        return cls(**{name: _values(name, value) for name, value in raw.items()})

    def matches(self, doc_id: str, info: Any) -> bool:
        """Whether a document passes; `info` is its `DocumentInfo` (None: no metadata, so
        only a doc_id filter can pass it)."""
        if self.doc_id and doc_id not in self.doc_id:
            return False
        if not (self.company or self.form or self.fiscal_year):
            return True
        if info is None:
            return False
        meta = info.metadata
        if self.company:
            names = {company_key(meta.company), meta.ticker.lower()}
            if not any(company_key(c) in names or c.lower() in names for c in self.company):
                return False
        if self.form and meta.form not in self.form:
            return False
        return not self.fiscal_year or meta.fiscal_year in self.fiscal_year

    def merged(self, other: MetadataFilter | None) -> MetadataFilter:
        """Both filters at once: a field the caller set is kept, an empty one is filled from
        `other` (the question's own scope never widens what the caller allowed)."""
        if other is None:
            return self
        return MetadataFilter(self.doc_id or other.doc_id, self.company or other.company,
                              self.form or other.form, self.fiscal_year or other.fiscal_year)
