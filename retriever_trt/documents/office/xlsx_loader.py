"""Excel workbooks (.xlsx) via openpyxl: one `TableBlock` a sheet, the sheet's name its
caption, the cached values of formulas (what Excel last showed), not the formulas.

A workbook is a zip of XML: it is checked before openpyxl opens it (`zip_guard.py`), and a
sheet is read in streaming mode only while its declared size and its cells read so far
stay under MAX_CELLS, so a huge or hostile file is refused with a line naming the problem
instead of filling memory.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from retriever_trt.documents.filing.metadata import infer_metadata, title
from retriever_trt.documents.model import Document, DocumentError, TableBlock
from retriever_trt.documents.office.cells import cell_text, trim

# Cells a sheet may hold: a financial workbook's sheets hold thousands; a million cells
# is a data dump, not a document to answer questions from.
MAX_CELLS = 1_000_000


def load(path: Path, doc_id: str) -> Document:
    import openpyxl  # a dependency, imported only when a workbook is read

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise DocumentError(path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") \
            from None
    try:
        blocks = [b for b in (_sheet(path, ws) for ws in book.worksheets) if b is not None]
        book_title = (book.properties.title or "").strip()
    finally:
        book.close()
    text = "\n".join(" ".join(r) for b in blocks[:1] for r in b.rows)
    meta = infer_metadata(text, path.name)
    return Document(doc_id, book_title or title(meta, path.stem), meta, blocks)


def _sheet(path: Path, ws: object) -> TableBlock | None:
    rows_declared, cols_declared = ws.max_row or 0, ws.max_column or 0  # type: ignore[attr-defined]
    name = ws.title  # type: ignore[attr-defined]
    if rows_declared * cols_declared > MAX_CELLS:
        raise DocumentError(path, f"sheet {name!r} is {rows_declared:,} rows x {cols_declared:,} "
                                  f"columns, over the {MAX_CELLS:,}-cell limit")
    rows: list[list[str]] = []
    seen = 0
    for row in ws.iter_rows():  # type: ignore[attr-defined]
        seen += len(row)
        if seen > MAX_CELLS:
            raise DocumentError(path, f"sheet {name!r} has over {MAX_CELLS:,} cells")
        rows.append([cell_text(getattr(c, "value", None), "%" in (getattr(c, "number_format", "")
                                                                  or "")) for c in row])
    rows = trim(rows)
    return TableBlock(rows, name) if rows else None
