"""Metadata filters, as a vector database has them: `{doc_id, collection, company, form,
fiscal_year}`, each a value or a list; a document passes when it matches every field given
(any of a field's values). Retrieval searches only the chunks of the documents that pass.

A filter may also carry the caller's tenant scope (`tenant`: the collections its API key
may read). It is not a request field: the server sets it, and no other field widens it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from retriever_trt.documents.model import Form

FILTER_FIELDS = ("doc_id", "collection", "company", "form", "fiscal_year")
# The collection of a document indexed without one (`finrag index`, the bundled corpus).
DEFAULT_COLLECTION = "default"
# Words a registrant's name carries that nobody says: "Apple Inc." is "Apple".
_LEGAL_WORDS = re.compile(
    r"\b(?:inc|incorporated|corp|corporation|co|company|companies|ltd|limited|plc|llc|lp|"
    r"holdings?|group|n\.?v|s\.?a|ag|se|the)\b\.?|/[a-z]{2}\b", re.I)


def without_accents(text: str) -> str:
    """`text` with each accented letter written as its base letter, one character for one
    (offsets into it are the original's): "Mondelēz" is "Mondelez", "Nestlé" "Nestle", as
    most people type them."""
    return "".join(_base_letter(c) for c in text) if not text.isascii() else text


def _base_letter(char: str) -> str:
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return base if len(base) == 1 else char


def company_key(name: str) -> str:
    """A company's name for matching: lower case, no legal words, accents or punctuation
    ("THE BOEING COMPANY" and "Boeing Co" are both "boeing"; "Coca-Cola" is "coca cola")."""
    name = _LEGAL_WORDS.sub(" ", without_accents(name).replace("&", " and ").replace("’", "'"))
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
    collection: tuple[str, ...] = ()
    company: tuple[str, ...] = ()
    form: tuple[Form, ...] = ()
    fiscal_year: tuple[int, ...] = ()
    tenant: frozenset[str] | None = None

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
        collection = info.collection if info is not None else DEFAULT_COLLECTION
        if self.tenant is not None and collection not in self.tenant:
            return False
        if self.collection and collection not in self.collection:
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
        return MetadataFilter(self.doc_id or other.doc_id, self.collection or other.collection,
                              self.company or other.company, self.form or other.form,
                              self.fiscal_year or other.fiscal_year,
                              _narrowest(self.tenant, other.tenant))

    def narrowed(self, doc_ids: tuple[str, ...]) -> MetadataFilter:
        """Only these documents, within this filter (its tenant scope kept)."""
        return replace(self, doc_id=doc_ids)


def within_tenant(filt: MetadataFilter | None,
                  collections: frozenset[str] | None) -> MetadataFilter | None:
    """`filt` limited to the collections an API key may read (None: every collection)."""
    if collections is None:
        return filt
    filt = filt or MetadataFilter()
    return replace(filt, tenant=_narrowest(filt.tenant, collections))


def _narrowest(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if a is None or b is None:
        return a if b is None else b
    return a & b
