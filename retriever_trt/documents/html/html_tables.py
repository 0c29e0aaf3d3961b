"""An HTML `<table>` as a `TableBlock`: logical columns out of SEC layout columns.

Filings lay a number out over several `<td>`s: "$" in one, the digits in the next, ")" or
"%" after, spacer cells between, and the period headers span them all with `colspan`.
Each cell is placed on the grid of physical columns, "$"/"(" cells join the cell after
them and ")"/"%" cells the cell before, and physical columns are then grouped left to
right so that no row has two different cells in one group: a group is a logical column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from retriever_trt.documents.model import Paragraph, TableBlock

_PREFIXES = {"$", "(", "$(", "($", "US$", "€", "£", "¥"}
_SUFFIXES = {")", "%", ")%", "%)", "pts", "bps"}
MAX_COLSPAN = 100
_BREAKS = {"br", "div", "p", "li", "tr"}


@dataclass
class _Cell:
    start: int
    end: int          # exclusive
    text: str
    fact_id: str | None
    nested: tuple[str, ...] = ()  # facts inside the cell's fact, showing its number too


def local_name(tag: Any) -> str:
    """An element's tag without its namespace, lower case ("ix:nonFraction" is
    "nonfraction"); "" for comments and processing instructions."""
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def element_text(el: Any) -> str:
    """The text of `el`, with a space where a line break or a block element breaks it
    ("September 28,<br/>2024" reads "September 28, 2024"), none inside a word."""
    parts: list[str] = []

    def visit(node: Any) -> None:
        breaks = local_name(node.tag) in _BREAKS
        if breaks:
            parts.append(" ")
        if node.text:
            parts.append(node.text)
        for child in node:
            visit(child)
            if child.tail:
                parts.append(child.tail)
        if breaks:
            parts.append(" ")

    visit(el)
    return " ".join("".join(parts).split())


def _cell_text_and_facts(td: Any) -> tuple[str, str | None, tuple[str, ...]]:
    """The cell's text, its fact's id, and the ids of the facts nested inside that one: a
    number tagged twice, one ix:nonFraction around another (Johnson Controls wraps its
    "Net income attributable to Johnson Controls", NetIncomeLoss, in a ProfitLoss of its
    equity statement's retained earnings), shows in the cell as each."""
    ids = [el.get("id") for el in td.iter() if local_name(el.tag) == "nonfraction"]
    ids = [i for i in ids if i]
    return element_text(td), (ids[0] if ids else None), tuple(ids[1:])


def _row_cells(tr: Any) -> list[_Cell]:
    cells, col = [], 0
    for td in tr:
        if local_name(td.tag) not in ("td", "th"):
            continue
        try:
            span = max(1, min(MAX_COLSPAN, int(td.get("colspan", "1") or 1)))
        except ValueError:
            span = 1
        text, fact, nested = _cell_text_and_facts(td)
        if text:
            cells.append(_Cell(col, col + span, text, fact, nested))
        col += span
    return _merge_fragments(cells)


def _merge_fragments(cells: list[_Cell]) -> list[_Cell]:
    """"$" | "1,234" | ")" as one cell "$1,234)" spanning the three."""
    out: list[_Cell] = []
    prefix: _Cell | None = None
    for c in cells:
        if c.text in _SUFFIXES and out:
            out[-1].text += c.text
            out[-1].end = c.end
            continue
        if c.text in _PREFIXES:
            prefix = c if prefix is None else _Cell(prefix.start, c.end, prefix.text + c.text, None)
            continue
        if prefix is not None:
            c = _Cell(prefix.start, c.end, prefix.text + c.text, c.fact_id, c.nested)
            prefix = None
        out.append(c)
    return out


def _groups(rows: list[list[_Cell]], width: int) -> list[tuple[int, int]]:
    """Physical columns grouped so that no row has two different cells in a group."""
    groups: list[tuple[int, int]] = []
    start = 0
    owner: list[dict[int, int]] = []  # per row: column -> index of the cell covering it
    for cells in rows:
        cover: dict[int, int] = {}
        for k, c in enumerate(cells):
            for j in range(c.start, c.end):
                cover[j] = k
        owner.append(cover)
    seen: list[int | None] = [None] * len(rows)
    for j in range(width):
        clash = any(j in cover and seen[r] is not None and cover[j] != seen[r]
                    for r, cover in enumerate(owner))
        if clash:
            groups.append((start, j))
            start = j
            seen = [None] * len(rows)
        for r, cover in enumerate(owner):
            if j in cover:
                seen[r] = cover[j]
    groups.append((start, width))
    return groups


def table_block(table: Any, caption: str, page: int) -> TableBlock | Paragraph | None:
    """The table's rows; a layout table of one column comes back as a paragraph."""
    rows = [_row_cells(tr) for tr in table.iter() if local_name(tr.tag) == "tr"]
    rows = [r for r in rows if r]
    if not rows:
        return None
    width = max(c.end for r in rows for c in r)
    groups = _groups(rows, width)
    grid: list[list[str]] = []
    facts: list[list[str | None]] = []
    for cells in rows:
        texts, ids = [], []
        for a, b in groups:
            inside = [c for c in cells if c.start < b and c.end > a]
            texts.append(inside[0].text if inside else "")
            ids.append(inside[0].fact_id if inside else None)
        grid.append(texts)
        facts.append(ids)
    used = [j for j in range(len(groups)) if any(row[j] for row in grid)]
    grid = [[row[j] for j in used] for row in grid]
    facts = [[row[j] for j in used] for row in facts]
    if len(used) < 2 or len(grid) < 2:
        text = " ".join(" ".join(c for c in row if c) for row in grid)
        return Paragraph(text, page) if text else None
    nested = {c.fact_id: c.nested for cells in rows for c in cells if c.fact_id and c.nested}
    return TableBlock(grid, caption, page, facts, nested_facts=nested or None)
