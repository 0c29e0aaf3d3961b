"""The .xlsx, .csv and .docx loaders on files written here with openpyxl and python-docx,
and on bad ones: corrupt, not a zip, a zip bomb, a sheet too large to read."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import docx
import openpyxl
from document_errors import one_line_error

from retriever_trt.documents import Form, Paragraph, TableBlock, load_document
from retriever_trt.documents.limits import DEFAULT_MAX_STREAM_BYTES
from retriever_trt.documents.tables import parse_table

MIB = 1024 * 1024


def test_xlsx_each_sheet_is_a_table_captioned_with_its_name(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    income = book.active
    income.title = "Income statement"
    income.append(["(in millions)", "2024", "2023"])
    income.append(["Revenue", 391035, 383285])
    income.append(["Other income (expense)", -1234.5, None])
    income.append(["Gross margin", 0.462, 0.441])
    for cell in ("B4", "C4"):
        income[cell].number_format = "0.0%"
    income.append([])
    book.create_sheet("Empty")
    notes = book.create_sheet("Notes")
    notes["B2"] = "Acme Widgets 10-K"
    path = tmp_path / "acme-10-k-2024-11-01.xlsx"
    book.save(path)

    doc = load_document(path, "acme.xlsx")
    assert [t.caption for t in doc.tables()] == ["Income statement", "Notes"]
    income_table = doc.tables()[0]
    assert income_table.rows == [["(in millions)", "2024", "2023"],
                                 ["Revenue", "391035", "383285"],
                                 ["Other income (expense)", "-1234.5", ""],
                                 ["Gross margin", "46.2%", "44.1%"]]
    assert doc.tables()[1].rows == [["", "Acme Widgets 10-K"]]
    parsed = parse_table(income_table.rows, [income_table.caption])
    assert parsed.scale == "million" and parsed.column_years[1] == [2024]
    assert (doc.metadata.ticker, doc.metadata.form) == ("ACME", Form.TEN_K)


def _zip_bomb(path: Path, member: str, size: int) -> Path:
    """A zip whose one member inflates to `size` bytes of zeros, written in a few kB: one
    deflated MiB of zeros, ended with a full flush (so it decodes on its own), repeated."""
    chunk = bytes(MIB)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    data = block * (size // MIB) + deflate.flush()
    crc = 0
    for _ in range(size // MIB):
        crc = zlib.crc32(chunk, crc)
    name = member.encode()
    # zip local header, data, central directory, end record (APPNOTE 4.3.7, 4.3.12, 4.3.16)
    local = struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, 8, 0, 0x21, crc, len(data), size,
                        len(name), 0) + name
    central = struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 0, 20, 0, 0, 8, 0, 0x21, crc,
                          len(data), size, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    path.write_bytes(local + data + central + end)
    return path


def test_bad_workbooks_are_refused_with_one_line(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.xlsx"
    corrupt.write_bytes(b"PK\x03\x04 this is not really a workbook" * 10)
    one_line_error(corrupt, "not a valid .xlsx file")
    size = 2 * 1024 * MIB
    bomb = _zip_bomb(tmp_path / "bomb.xlsx", "xl/worksheets/sheet1.xml", size)
    assert bomb.stat().st_size < size // 100
    one_line_error(bomb, "expands to 2,048 MiB", f"{DEFAULT_MAX_STREAM_BYTES // MIB} MiB limit",
                   "document_max_stream_bytes")
    not_a_book = tmp_path / "zip.xlsx"
    with zipfile.ZipFile(not_a_book, "w") as archive:
        archive.writestr("readme.txt", "a zip, but no workbook in it")
    one_line_error(not_a_book, "not a readable .xlsx workbook")


def test_a_sheet_too_large_is_refused_before_it_is_read(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Dump"
    sheet["A1"] = "label"
    sheet["Z1000000"] = 1  # declares a sheet of 26 columns by a million rows
    path = tmp_path / "huge.xlsx"
    book.save(path)
    one_line_error(path, "sheet 'Dump' is 1,000,000 rows x 26 columns", "cell limit")


def test_csv_is_one_table_with_a_sniffed_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "segments.csv"
    path.write_text("Segment;2024;2023\nAmericas;167,045;162,560\nEurope;(1,234);—\n", encoding="utf-8")
    doc = load_document(path, "segments.csv")
    [table] = doc.tables()
    assert table.caption == "segments"
    assert table.rows == [["Segment", "2024", "2023"], ["Americas", "167,045", "162,560"],
                          ["Europe", "(1,234)", "—"]]
    tabbed = tmp_path / "tabbed.csv"
    tabbed.write_text("a\tb\n1\t2\n", encoding="utf-8")
    assert load_document(tabbed).tables()[0].rows == [["a", "b"], ["1", "2"]]
    latin = tmp_path / "latin.csv"
    latin.write_bytes("Caf\xe9,1\n".encode("latin-1"))
    one_line_error(latin, "not UTF-8 text")


def test_docx_keeps_body_order_and_captions_tables_with_their_heading(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Acme Widgets, Inc.", level=1)
    document.add_paragraph("Revenue grew in every segment.")
    document.add_heading("Net sales by segment", level=2)
    document.add_paragraph("(in millions)")
    table = document.add_table(rows=3, cols=3)
    header = table.rows[0].cells[1].merge(table.rows[0].cells[2])
    header.text = "Years ended"
    for r, values in enumerate((["Segment", "2024", "2023"], ["Americas", "167,045", "162,560"]), 1):
        for c, value in enumerate(values):
            table.cell(r, c).text = value
    document.add_paragraph("Closing remarks.")
    path = tmp_path / "report.docx"
    document.save(path)

    doc = load_document(path, "report.docx")
    kinds = [type(b).__name__ for b in doc.blocks]
    assert kinds == ["Paragraph", "Paragraph", "Paragraph", "Paragraph", "TableBlock", "Paragraph"]
    block = doc.blocks[4]
    assert isinstance(block, TableBlock)
    assert block.caption == "Net sales by segment (in millions)"
    assert block.rows == [["", "Years ended", ""], ["Segment", "2024", "2023"],
                          ["Americas", "167,045", "162,560"]]
    assert isinstance(doc.blocks[-1], Paragraph) and doc.blocks[-1].text == "Closing remarks."


def test_a_docx_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memo.docx"
    path.write_text("just text, saved with the wrong suffix")
    one_line_error(path, "not a valid .docx file (not a zip archive")
    bomb = _zip_bomb(tmp_path / "bomb.docx", "word/document.xml", 512 * MIB)
    one_line_error(bomb, "expands to 512 MiB")
