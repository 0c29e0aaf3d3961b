"""A spreadsheet or Word table cell's value as the text a `TableBlock` row holds."""

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal

# Decimal places kept of a float cell (binary floats print 0.1 + 0.2 as 0.30000000000000004).
FLOAT_DIGITS = 10


def cell_text(value: object, percent: bool = False) -> str:
    """"" for empty; numbers without float noise ("1234.5", "1235" for 1235.0); a
    percentage-formatted number as "12.5%"; dates as ISO text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).upper()
    if isinstance(value, (int, float, Decimal)):
        number = Decimal(str(round(value, FLOAT_DIGITS))) if isinstance(value, float) else Decimal(value)
        if percent:
            number *= 100
        text = format(number.normalize(), "f") if number != number.to_integral() else str(int(number))
        return f"{text}%" if percent else text
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time() else value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return " ".join(str(value).split())


def trim(rows: list[list[str]]) -> list[list[str]]:
    """Rows without the empty rows, and cut to the widest non-empty column."""
    rows = [r for r in rows if any(r)]
    width = max((max(j for j, c in enumerate(r) if c) + 1 for r in rows), default=0)
    return [(r + [""] * width)[:width] for r in rows]
