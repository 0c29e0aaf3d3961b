"""CSV (and other delimited text): one `TableBlock`, the file's name its caption; the
delimiter (",", ";", tab or "|") is sniffed from the first lines."""

from __future__ import annotations

import csv
from pathlib import Path

from retriever_trt.documents.filing.metadata import infer_metadata, title
from retriever_trt.documents.model import Document, DocumentError, TableBlock
from retriever_trt.documents.office.cells import trim

# Characters the dialect is sniffed from, and the delimiters considered.
SNIFF_CHARS = 64 * 1024
DELIMITERS = ",;\t|"
# Cells a file may hold (as for a spreadsheet's sheet: a larger file is a data dump).
MAX_CELLS = 1_000_000


def load(path: Path, doc_id: str) -> Document:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(path, f"not UTF-8 text ({exc})") from None
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:SNIFF_CHARS],
                                                                       delimiters=DELIMITERS)
    except csv.Error:
        dialect = csv.excel  # one column, or too irregular to tell: plain commas
    rows: list[list[str]] = []
    cells = 0
    try:
        for row in csv.reader(text.splitlines(), dialect):
            cells += len(row)
            if cells > MAX_CELLS:
                raise DocumentError(path, f"over {MAX_CELLS:,} cells")
            rows.append([" ".join(c.split()) for c in row])
    except csv.Error as exc:
        raise DocumentError(path, f"not readable as CSV ({exc})") from None
    rows = trim(rows)
    meta = infer_metadata("", path.name)
    return Document(doc_id, title(meta, path.stem), meta, [TableBlock(rows, path.stem)] if rows else [])
