"""A PDF page's text as lines of positioned segments, from PDFium's character boxes.

A printed filing draws each table cell as its own run of text at its own x position, with
no ruling lines, so a table can only be recovered from where its text sits. We read each
character's box once (one PDFium call a character: the cost that sets the loader's speed),
join characters drawn one after the other on the same baseline into runs, split a run
where a gap wider than a word space opens (a new cell), and group runs into lines by
their vertical centre. PDFium's own spaces (drawn or inferred) separate words.
"""

from __future__ import annotations

import ctypes
import math
import re
import statistics
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

# A gap between two characters wider than this many font sizes (on the page: `font_size`)
# starts a new segment (a table cell): word spaces are ~0.25-0.5 em, justified prose stays
# under 1 em, and the gaps between a filing's table columns are several em. A header's
# words centred over two narrow columns stay one cell: "Shares  Amount" under "Common
# Stock", 1.5 em apart in Tesla's statement of equity.
CELL_GAP_EM = 1.6
# After an amount, a gap this wide already starts a cell: prose puts one space (~0.3 em)
# after a number; a table's next column is further off.
AFTER_AMOUNT_GAP_EM = 0.6 * 4 / 3
# Gaps under this many points never split a segment: a cheap test before asking PDFium
# for the font size.
MIN_CELL_GAP = 4.0
CURRENCY_SIGNS = frozenset({"$", "€", "£", "¥"})
# Characters whose box centres differ by more than this fraction of the taller one's
# height are on different lines (commas and descenders sit lower but stay within it).
SAME_LINE_FRACTION = 0.6
MIN_SAME_LINE = 2.0
# Touching runs further apart than this are separate words.
WORD_GAP = 1.0
# Runs whose vertical centres are within this many points share a line.
LINE_TOLERANCE = 3.0
# Lines closer than this share of the page's usual line pitch, whose runs do not overlap
# side by side, are one line: a typesetter may draw a row's amounts a third of a line
# below its label (AES: "Capital expenditures" over "(2,345)  (2,308)  (2,016)"), and a
# row's columns at two heights ("Net income  $ 762  $ 1,147" over "(777)").
SAME_LINE_PITCH = 0.4
# A character drawn this far left of the previous one's right edge starts a new run.
BACKTRACK = 1.0


_WORD = re.compile(r"\S+")
# A word that is an amount: "134,987", "(1,234)", "$5,537", "12.5%".
_AMOUNT = re.compile(r"^[$(]*-?\d[\d,]*(\.\d+)?\)?%?$")


@dataclass(frozen=True)
class Segment:
    """A run of text on one line: a table cell or a stretch of prose."""

    text: str
    x0: float
    x1: float

    @property
    def center(self) -> float:
        return (self.x0 + self.x1) / 2


@dataclass(frozen=True)
class Line:
    """Segments left to right on one baseline; `y` is the vertical centre (PDF points,
    from the bottom of the page), `height` the tallest segment's."""

    y: float
    height: float
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments)

    @property
    def x0(self) -> float:
        return self.segments[0].x0

    @property
    def x1(self) -> float:
        return self.segments[-1].x1


@dataclass
class _Run:
    text: str
    x0: float
    x1: float
    bottom: float
    top: float
    centers: list[float]


def page_lines(page: pdfium.PdfPage) -> list[Line]:
    """The page's lines, top to bottom."""
    textpage = page.get_textpage()
    try:
        runs = _runs(textpage)
    finally:
        textpage.close()
    return _group_lines(runs)


def _runs(textpage: pdfium.PdfTextPage) -> list[_Run]:
    """Words (PDFium puts a space or line break between any two characters drawn apart)
    joined into runs. Only a word's first and last characters are measured: the gaps that
    split cells are between words, and it keeps the PDFium calls to two a word."""
    raw = textpage.raw
    n = pdfium_c.FPDFText_CountChars(raw)
    # PDFium writes U+FFFE for a hyphen where a word broke across lines
    text = textpage.get_text_range(0, n).replace("\ufffe", "-") if n else ""
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    get_box = pdfium_c.FPDFText_GetCharBox
    runs: list[_Run] = []
    run: _Run | None = None
    prev, prev_word = (0.0, 0.0, 0.0, 0.0), ""
    for word in _WORD.finditer(text):
        first, last = word.start(), word.end() - 1
        get_box(raw, first, left, right, bottom, top)
        x0, b0, t0 = left.value, bottom.value, top.value
        if last != first:
            get_box(raw, last, left, right, bottom, top)
        box = (x0, right.value, min(b0, bottom.value), max(t0, top.value))
        center = (box[2] + box[3]) / 2
        if run is not None and _continues(raw, first, prev, box, word.group(), prev_word):
            run.text += " " + word.group()
            run.x1 = box[1] if box[1] > run.x1 else run.x1
            run.bottom, run.top = min(run.bottom, box[2]), max(run.top, box[3])
            run.centers.append(center)
        else:
            if run is not None:
                runs.append(run)
            run = _Run(word.group(), box[0], box[1], box[2], box[3], [center])
        prev, prev_word = box, word.group()
    if run is not None:
        runs.append(run)
    return runs


def _continues(raw: object, k: int, prev: tuple[float, ...], box: tuple[float, ...],
               word: str, prev_word: str) -> bool:
    """Whether `word`, starting at character `k` (box `box`), goes on the run whose last
    word, `prev_word`, has box `prev`. A currency sign set apart starts a cell (it leads
    an amount), and so does a word set apart after an amount (cells of a table: "134,987"
    then "3 years"), at a narrower gap than between words of prose; an amount or a currency
    sign after an amount starts a cell at any gap ("28 117 262": three columns set close).
    An amount ending in a comma is a date's day ("December 31, 2024"), not a cell."""
    gap = box[0] - prev[1]
    if gap < -BACKTRACK or (word in CURRENCY_SIGNS and gap >= MIN_CELL_GAP):
        return False
    if gap > 0 and _next_amount(prev_word, word):
        return False  # amounts of two columns set a word space apart ("$ 6,747 $ 6,379")
    height = max(prev[3] - prev[2], box[3] - box[2])
    if abs((box[2] + box[3]) / 2 - (prev[2] + prev[3]) / 2) > max(height * SAME_LINE_FRACTION,
                                                                   MIN_SAME_LINE):
        return False
    if gap < MIN_CELL_GAP:
        return True
    em = AFTER_AMOUNT_GAP_EM if _AMOUNT.match(prev_word) else CELL_GAP_EM
    return gap < em * font_size(raw, k)


def font_size(raw: object, k: int) -> float:
    """Character k's font size in page points. PDFium gives the size the text was set in
    (`Tf`), before the text and page matrices scale it: a filing printed by a typesetter sets
    its text at 384 and scales it by 0.021 (8.1 points), Chromium sets CSS pixels (16) and
    scales by 0.75; the size on the page is the set size times the matrix's scale."""
    matrix = pdfium_c.FS_MATRIX()
    size = pdfium_c.FPDFText_GetFontSize(raw, k)
    if not pdfium_c.FPDFText_GetMatrix(raw, k, matrix):
        return size
    return size * math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))


def _next_amount(prev_word: str, word: str) -> bool:
    """Whether `word`, after `prev_word`, is the next column's amount: an amount or a
    currency sign after an amount that is not a date's day ("December 31, 2024"). A word
    ending in a comma goes on a phrase ("allowances $230 (2020, $293)"): no amount."""
    return bool(_AMOUNT.match(prev_word)) and not prev_word.endswith(",") and (
        word in CURRENCY_SIGNS or (bool(_AMOUNT.match(word)) and not word.endswith(",")))


def _group_lines(runs: list[_Run]) -> list[Line]:
    placed = sorted(((statistics.median(r.centers), r) for r in runs), key=lambda p: -p[0])
    groups: list[list[tuple[float, _Run]]] = []
    for y, run in placed:
        if groups and abs(groups[-1][0][0] - y) <= LINE_TOLERANCE:
            groups[-1].append((y, run))
        else:
            groups.append([(y, run)])
    groups = _side_by_side(groups)
    lines = []
    for group in groups:
        group.sort(key=lambda p: p[1].x0)
        lines.append(Line(group[0][0], max(r.top - r.bottom for _, r in group),
                          _join_touching([r for _, r in group])))
    return lines


def _side_by_side(groups: list[list[tuple[float, _Run]]]) -> list[list[tuple[float, _Run]]]:
    """Groups of runs (top to bottom) with each one closer than `SAME_LINE_PITCH` line
    pitches below the one before, whose runs all sit beside the other's, joined to it."""
    ys = [g[0][0] for g in groups]
    gaps = sorted(a - b for a, b in zip(ys, ys[1:], strict=False))
    if not gaps:
        return groups
    near = gaps[len(gaps) // 2] * SAME_LINE_PITCH
    out = [groups[0]]
    for group in groups[1:]:
        above = out[-1]
        if above[0][0] - group[0][0] < near and not any(
                min(r.x1, s.x1) > max(r.x0, s.x0) for _, r in above for _, s in group):
            above.extend(group)
        else:
            out.append(group)
    return out


def _join_touching(runs: list[_Run]) -> tuple[Segment, ...]:
    """Segments of a line's runs, left to right; runs that PDFium drew apart but that touch
    (a quote mark, a footnote mark) join the segment before them."""
    segments: list[Segment] = []
    for r in runs:
        if segments and r.x0 - segments[-1].x1 < MIN_CELL_GAP and not (
                r.x0 > segments[-1].x1 and _next_amount(segments[-1].text.rsplit(" ", 1)[-1],
                                                        r.text.split(" ", 1)[0])):
            last = segments[-1]
            sep = " " if r.x0 - last.x1 > WORD_GAP else ""
            segments[-1] = Segment(last.text + sep + r.text, last.x0, max(last.x1, r.x1))
        else:
            segments.append(Segment(r.text, r.x0, r.x1))
    return tuple(segments)
