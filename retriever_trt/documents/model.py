"""What a loader makes of a file: a `Document` of paragraphs and tables in reading order, the
tagged facts it carries (inline XBRL), and its metadata (company, form, fiscal year).

Loaders (one a format, `loaders.py` picks by suffix) only read; chunking (`indexing/chunking.py`)
and stores (`store/`) are apart, and the answer rules read `Table`s and `Fact`s, never a
loader.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any


class DocumentError(ValueError):
    """A file that cannot be read as a document; the message names the file and the problem."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = str(path), problem


class Form(str, Enum):
    """The kind of filing or report a document is; OTHER for anything else."""

    TEN_K = "10-K"
    TEN_Q = "10-Q"
    EIGHT_K = "8-K"
    TWENTY_F = "20-F"
    FORTY_F = "40-F"
    EARNINGS = "earnings"
    ANNUAL_REPORT = "annual report"
    OTHER = "other"

    @property
    def is_annual(self) -> bool:
        """A report of a whole fiscal year (its fiscal_year is the year it covers)."""
        return self in (Form.TEN_K, Form.TWENTY_F, Form.FORTY_F, Form.ANNUAL_REPORT)

    @classmethod
    def parse(cls, text: str) -> Form:
        """"10-K", "10-K/A", "10K", "Form 10-Q" and the like; OTHER when unknown."""
        t = text.upper().replace("FORM", "").replace(" ", "").split("/")[0].strip()
        for form in cls:
            if t == form.value.upper().replace(" ", "") or t == form.value.upper().replace("-", ""):
                return form
        return cls.OTHER


class CoverField(str, Enum):
    """A fact about the registrant that the cover page of an SEC form states, beyond the
    name, symbol and period that `DocumentMetadata` has fields of. The value is its key in
    the saved metadata."""

    INCORPORATION = "incorporation"    # state or other jurisdiction of incorporation
    TAX_ID = "tax_id"                  # I.R.S. employer identification number
    CITY = "city"                      # of the principal executive offices
    STATE = "state"                    # of the principal executive offices
    POSTAL_CODE = "postal_code"        # the ZIP or postal code of the principal executive offices
    STREET = "street"                  # the street address of the principal executive offices
    EXCHANGE = "exchange"              # where the first class of securities is registered
    FILE_NUMBER = "file_number"        # Commission file number
    PHONE = "phone"                    # the registrant's telephone number
    AUDITOR = "auditor"                # the independent registered public accounting firm
    AUDITOR_LOCATION = "auditor_location"  # where the auditor signed its report
    FISCAL_YEAR_END = "fiscal_year_end"    # the month and day the fiscal year ends
    SYMBOLS = "symbols"                # every trading symbol registered, ", "-joined
    SECURITIES = "securities"          # every class of securities registered, "; "-joined
    FORMER_NAME = "former_name"        # the registrant's name before a change ("Square, Inc.")
    # the other registrants of a combined report, "; "-joined ("PACIFIC GAS AND ELECTRIC
    # COMPANY" under PG&E Corporation): read off printed covers only
    CO_REGISTRANTS = "co_registrants"
    # the short name the filing defines for the registrant, in capitals ("references to
    # “BXP” mean Boston Properties, Inc."): read off printed filings only
    SHORT_NAME = "short_name"

    @property
    def concepts(self) -> tuple[str, ...]:
        """The `dei:` concepts an inline-XBRL cover tags it with, in the order shown."""
        return _DEI_CONCEPTS[self]


# The fields every cover page prints, which a PDF's cover is read for too (cover_page.py);
# the others are tagged where the filing states them (the auditor in a 10-K's report).
PRINTED_COVER_FIELDS = (CoverField.INCORPORATION, CoverField.TAX_ID, CoverField.CITY,
                        CoverField.STATE, CoverField.EXCHANGE, CoverField.FILE_NUMBER,
                        CoverField.PHONE)

_DEI_CONCEPTS = {
    CoverField.INCORPORATION: ("dei:EntityIncorporationStateCountryCode",),
    CoverField.TAX_ID: ("dei:EntityTaxIdentificationNumber",),
    CoverField.CITY: ("dei:EntityAddressCityOrTown",),
    CoverField.STATE: ("dei:EntityAddressStateOrProvince",),
    CoverField.POSTAL_CODE: ("dei:EntityAddressPostalZipCode",),
    CoverField.STREET: ("dei:EntityAddressAddressLine1",),
    CoverField.EXCHANGE: ("dei:SecurityExchangeName",),
    CoverField.FILE_NUMBER: ("dei:EntityFileNumber",),
    CoverField.PHONE: ("dei:CityAreaCode", "dei:LocalPhoneNumber"),
    CoverField.AUDITOR: ("dei:AuditorName",),
    CoverField.AUDITOR_LOCATION: ("dei:AuditorLocation",),
    CoverField.FISCAL_YEAR_END: ("dei:CurrentFiscalYearEndDate",),
    CoverField.SYMBOLS: ("dei:TradingSymbol",),
    CoverField.SECURITIES: ("dei:Security12bTitle",),
    CoverField.FORMER_NAME: ("dei:EntityInformationFormerLegalOrRegisteredName",),
    # inline XBRL tags each registrant's name in its own context; one fact a concept is read
    CoverField.CO_REGISTRANTS: (),
    CoverField.SHORT_NAME: (),
}


@dataclass(frozen=True)
class CoverEntry:
    """A cover field as the cover shows it ("Delaware", not the tagged code "DE"), with
    where it stands: the `dei:` facts tagging it (inline XBRL; (id, shown text) each, in
    `CoverField.concepts`' order), else the page whose text it was read from."""

    value: str
    facts: tuple[tuple[str, str], ...] = ()
    page: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"value": self.value, "facts": [{"id": i, "text": t} for i, t in self.facts],
                "page": self.page}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CoverEntry:
        page = d.get("page")
        return cls(str(d.get("value") or ""),
                   tuple((str(f["id"]), str(f["text"])) for f in d.get("facts") or ()),
                   int(page) if page is not None else None)


@dataclass
class DocumentMetadata:
    """Who and which period a document is about. `company` is the registrant's name as the
    filing writes it ("Apple Inc."); `fiscal_period` is "FY", "Q1".."Q4" or ""; `cover`
    holds the other cover fields the filing states."""

    company: str = ""
    ticker: str = ""
    form: Form = Form.OTHER
    fiscal_year: int | None = None
    fiscal_period: str = ""
    period_end: date | None = None
    pages: int | None = None
    cover: dict[CoverField, CoverEntry] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"company": self.company, "ticker": self.ticker, "form": self.form.value,
                "fiscal_year": self.fiscal_year, "fiscal_period": self.fiscal_period,
                "period_end": self.period_end.isoformat() if self.period_end else None,
                "pages": self.pages,
                "cover": {f.value: e.to_dict() for f, e in self.cover.items()}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DocumentMetadata:
        """The inverse of `to_dict`; metadata saved before a field existed reads it as empty
        (no `cover`: none), and a cover field this version does not know is left out."""
        end = d.get("period_end")
        known = {f.value: f for f in CoverField}
        cover = {known[k]: CoverEntry.from_dict(v)
                 for k, v in (d.get("cover") or {}).items() if k in known}
        return cls(str(d.get("company") or ""), str(d.get("ticker") or ""),
                   Form(d.get("form") or Form.OTHER.value),
                   int(d["fiscal_year"]) if d.get("fiscal_year") is not None else None,
                   str(d.get("fiscal_period") or ""),
                   date.fromisoformat(str(end)) if end else None,
                   int(d["pages"]) if d.get("pages") is not None else None, cover)


@dataclass(frozen=True)
class Paragraph:
    """A run of prose; `page` is 1-based where the format has pages (PDF), else None."""

    text: str
    page: int | None = None


@dataclass(frozen=True)
class TableBlock:
    """A table as laid out: rows of cell texts (header rows first, a row label in column 0),
    the caption or heading above it ("Consolidated Statements of Operations (in millions)"),
    and, for inline XBRL, the id of the fact each cell shows (same shape as `rows`, None
    where a cell shows none); for a PDF, each row's label indentation level (0 leftmost),
    which says which heading a row is under."""

    rows: list[list[str]]
    caption: str = ""
    page: int | None = None
    fact_ids: list[list[str | None]] | None = None
    levels: list[int] | None = None
    # a cell's fact id -> the facts nested inside it, which show in that cell too
    nested_facts: dict[str, tuple[str, ...]] | None = None


Block = Paragraph | TableBlock


@dataclass(frozen=True)
class Fact:
    """A tagged number (inline XBRL `ix:nonFraction`): `value` is signed and in the unit
    (dollars, not millions: `scale` and `sign` already applied); `shown` is the text the
    page shows. A duration has `start` and `end`; an instant has `end` only."""

    fact_id: str
    concept: str                 # "us-gaap:Revenues"
    value: Decimal
    unit: str                    # "USD", "shares", "USD/shares", "pure"
    end: date
    start: date | None = None
    dimensions: tuple[tuple[str, str], ...] = ()
    decimals: int | None = None  # as tagged: -6 is "to the million"
    scale: int = 0               # the page shows value / 10**scale
    shown: str = ""

    @property
    def months(self) -> int:
        """The length of a duration in whole months (0 for an instant)."""
        if self.start is None:
            return 0
        return round((self.end - self.start).days / 30.44)


@dataclass
class Document:
    """One file read: `doc_id` is its path relative to the corpus folder."""

    doc_id: str
    title: str
    metadata: DocumentMetadata = field(default_factory=DocumentMetadata)
    blocks: list[Block] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    def tables(self) -> list[TableBlock]:
        return [b for b in self.blocks if isinstance(b, TableBlock)]

    def paragraphs(self) -> list[Paragraph]:
        return [b for b in self.blocks if isinstance(b, Paragraph)]
