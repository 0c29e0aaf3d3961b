"""The auditor of a printed 10-K (a PDF: no `dei:AuditorName` tag), read off the signature
of its Report of Independent Registered Public Accounting Firm:

    /s/ Ernst & Young LLP
    We have served as the Company's auditor since 2009.
    San Jose, California
    November 1, 2024

A report is signed by its firm (a name ending in LLP, LLC, L.L.P. or P.C., kept as printed:
"/S/ DELOITTE & TOUCHE LLP" in capitals too) and dated, with the city and state it was signed in just
before the date; an officer's "/s/ Tim Cook" names no firm, and a signature with no date
under it (an exhibit index's "Consent of ... KPMG LLP") is no report. The first report in
page order is the financial statements' (the internal-control report that may follow is
the same firm's). Its name is the auditor; its city and state the auditor's location.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from retriever_trt.documents.model import CoverEntry, CoverField
from retriever_trt.documents.pdf.pdf_layout import Line

# How many lines under the signature the city and the date may stand (the tenure sentence
# may come between, or after them).
MAX_LINES_UNDER = 4
_SIGNATURE = re.compile(r"^/s/\s*(.+?\b(?:LLP|LLC|L\.L\.P\.|P\.C\.))\s*$", re.I)
_CITY_STATE = re.compile(r"^([A-Z][A-Za-z .'-]*,\s*[A-Z][A-Za-z .]*[A-Za-z])$")
_DATE = re.compile(r"^[A-Z][a-z]+\.?\s+\d{1,2},\s*\d{4}$")


def read_auditor(lines: Sequence[Line], page: int) -> dict[CoverField, CoverEntry]:
    """The auditor and its location from the first report signature on one page's lines;
    empty where the page has none."""
    texts = [line.text.strip() for line in lines]
    for k, text in enumerate(texts):
        signed = _SIGNATURE.match(text)
        if signed is None:
            continue
        under = texts[k + 1:k + 1 + MAX_LINES_UNDER]
        dated = [j for j, t in enumerate(under) if _DATE.match(t)]
        if not dated:
            continue
        places = [t for t in under[:dated[0]] if _CITY_STATE.match(t)]
        out = {CoverField.AUDITOR: CoverEntry(signed.group(1), page=page)}
        if places:
            out[CoverField.AUDITOR_LOCATION] = CoverEntry(places[-1], page=page)
        return out
    return {}

