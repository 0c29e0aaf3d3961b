"""Small PDFs laid out as a typesetter draws a company's 10-K, not as Chromium prints HTML:
each piece of text placed at its own point with its own text matrix, often set in a large
font size that the matrix scales down ("/F1 384 Tf  0.0211 0 0 0.0211 x y Tm": 8.1
points on the page), amounts right-aligned by their computed width.

`typeset_pdf(pages)` writes the PDF; each page is a list of `Text` (x of the left edge, or
`right` for a right-aligned amount, baseline y, in points from the page's bottom-left)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.hostile_files import pdf, stream

# Helvetica's advance widths (thousandths of an em) of the characters amounts use; letters
# are set left-aligned, so their width is not needed.
_WIDTHS = {**dict.fromkeys("0123456789$", 556), ",": 278, ".": 278, "(": 333, ")": 333,
           " ": 278, "—": 1000, "-": 333}
DEFAULT_WIDTH = 556
# The size the text is set in, and the matrix scale that brings it to `POINTS` on the page.
SET_SIZE = 384.0
POINTS = 8.0
PAGE = (612, 792)


@dataclass(frozen=True)
class Text:
    """One piece of text: left-aligned at `x`, or right-aligned with its right edge at
    `right` (an amount), on baseline `y`; `points`: its size on the page."""

    text: str
    y: float
    x: float = 0.0
    right: float | None = None
    points: float = POINTS


def text_width(text: str, points: float = POINTS) -> float:
    """The width of `text` set in Helvetica at `points`, as a right-aligned amount needs."""
    return sum(_WIDTHS.get(ch, DEFAULT_WIDTH) for ch in text) * points / 1000


def _escaped(text: str) -> bytes:
    raw = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return raw.encode("cp1252")


def _content(texts: list[Text]) -> bytes:
    ops = []
    for t in texts:
        x = t.x if t.right is None else t.right - text_width(t.text, t.points)
        scale = t.points / SET_SIZE
        ops.append(b"BT /F1 %.1f Tf %.6f 0 0 %.6f %.2f %.2f Tm (%s) Tj ET"
                   % (SET_SIZE, scale, scale, x, t.y, _escaped(t.text)))
    return b"\n".join(ops)


def typeset_pdf(pages: list[list[Text]]) -> bytes:
    """A PDF of `pages`, its text in Helvetica (WinAnsi: "—" is a dash)."""
    n = len(pages)
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    # objects: 1 catalog, 2 pages, 3 font, then a page and its content per page
    kids = b" ".join(b"%d 0 R" % (4 + 2 * k) for k in range(n))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n), font]
    for k, texts in enumerate(pages):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 3 0 R >> >> >>" % (*PAGE, 5 + 2 * k))
        objects.append(stream(_content(texts)))
    return pdf(objects)


def table_rows(rows: list[tuple[str, ...]], top: float, label_x: float = 36.0,
               rights: tuple[float, ...] = (420.0, 500.0, 580.0), pitch: float = 12.0
               ) -> list[Text]:
    """A statement's rows from `top` down: each row's label at `label_x` (indent it with
    leading spaces: two points a space) and its amounts right-aligned at `rights`; an empty
    amount is left out, and a "$" in front of an amount is drawn apart at the column's left."""
    out: list[Text] = []
    for k, (label, *amounts) in enumerate(rows):
        y = top - k * pitch
        indent = (len(label) - len(label.lstrip())) * 2.0
        if label.strip():
            out.append(Text(label.strip(), y, x=label_x + indent))
        for right, amount in zip(rights, amounts, strict=False):
            if amount.startswith("$ "):
                out.append(Text("$", y, x=right - 60))
                amount = amount[2:]
            if amount:
                out.append(Text(amount, y, right=right))
    return out
