"""The PDF loader on PDFs Chromium prints here, on real filings (tests/data/filings/pdf, cut
to their covers and statements), and on bad PDFs made here (corrupt, encrypted, scanned
with no text layer, empty)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from document_errors import one_line_error
from PIL import Image

from retriever_trt.documents import Form, TableBlock, load_document
from retriever_trt.documents.tables import parse_table
from tests import prereqs
from tests.paths import FILINGS

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"]
CHROMIUM_TIMEOUT_S = 120
STYLE = ("body { font-family: Arial, sans-serif; font-size: 10pt; margin: 0.5in }"
         "td { padding: 1pt 4pt; vertical-align: bottom } .r { text-align: right }"
         ".c { text-align: center } .break { page-break-before: always }")
COVER = """<p class="c">FORM 10-K</p>
<p class="c">ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934</p>
<p class="c">For the fiscal year ended September 28, 2024</p>
<p class="c">Acme Widgets, Inc.</p>
<p class="c">(Exact name of Registrant as specified in its charter)</p>
<p>Acme makes widgets. This paragraph is prose that runs across the page and ends with a period.</p>"""
STATEMENT_ROWS = [("Net sales", "$", "391,035", "$", "383,285"),
                  ("Cost of sales", "", "210,352", "", "214,137"),
                  ("Other income/(expense), net", "", "(1,234)", "", "—"),
                  ("Net income", "$", "93,736", "$", "96,995")]


def _row(cells: tuple[str, ...]) -> str:
    label, *rest = cells
    tds = "".join(f'<td class="{"r" if k % 2 else ""}">{c}</td>' for k, c in enumerate(rest))
    return f'<tr><td style="width:60%">{label}</td>{tds}</tr>'


def _statement(rows: list[tuple[str, ...]]) -> str:
    header = ('<tr><td></td><td colspan="4" class="c">Years ended</td></tr>'
              '<tr><td></td><td colspan="2" class="c">September 28,</td>'
              '<td colspan="2" class="c">September 30,</td></tr>'
              '<tr><td></td><td colspan="2" class="c">2024</td><td colspan="2" class="c">2023</td></tr>')
    return ('<p class="c break"><b>CONSOLIDATED STATEMENTS OF OPERATIONS</b></p>'
            '<p class="c">(In millions, except per-share amounts)</p>'
            f'<table style="width:100%">{header}{"".join(_row(r) for r in rows)}</table>'
            '<p>See accompanying Notes to Consolidated Financial Statements.</p>')


def _print_pdf(html: str, out: Path) -> Path:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        prereqs.missing("chromium not found", prereqs.CHROMIUM)
    page = out.with_suffix(".html")
    page.write_text(f"<html><head><style>{STYLE}</style></head><body>{html}</body></html>")
    subprocess.run([chromium, *CHROMIUM_ARGS, f"--print-to-pdf={out}", str(page)],
                   check=True, capture_output=True, timeout=CHROMIUM_TIMEOUT_S)
    return out


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-page 10-K: the cover, then an income statement on page 2."""
    out = tmp_path_factory.mktemp("pdf") / "acme-10-k-2024-11-01.pdf"
    return _print_pdf(COVER + _statement(STATEMENT_ROWS), out)


def test_printed_statement_comes_out_as_a_table_with_its_caption_and_page(printed: Path) -> None:
    doc = load_document(printed, "acme.pdf")
    [table] = doc.tables()
    assert table.page == 2
    assert table.caption == ("CONSOLIDATED STATEMENTS OF OPERATIONS "
                             "(In millions, except per-share amounts)")
    assert table.rows[:3] == [["", "Years ended", ""], ["", "September 28,", "September 30,"],
                              ["", "2024", "2023"]]
    assert table.rows[3:] == [["Net sales", "$ 391,035", "$ 383,285"],
                              ["Cost of sales", "210,352", "214,137"],
                              ["Other income/(expense), net", "(1,234)", "—"],
                              ["Net income", "$ 93,736", "$ 96,995"]]
    parsed = parse_table(table.rows, [table.caption])
    assert parsed.scale == "million"
    other = next(c for c in parsed.cells if c.row == "Other income/(expense), net" and c.column_index == 1)
    assert other.value is not None and other.value.number == -1234
    assert 2024 in parsed.column_years[1]


def test_printed_prose_keeps_its_page_and_the_cover_gives_metadata(printed: Path) -> None:
    doc = load_document(printed, "acme.pdf")
    first = doc.paragraphs()[0]
    assert first.page == 1 and "FORM 10-K" in first.text
    assert any(p.page == 2 and p.text.startswith("See accompanying Notes") for p in doc.paragraphs())
    meta = doc.metadata
    assert (meta.company, meta.form, meta.fiscal_year, meta.fiscal_period, meta.pages) == \
        ("Acme Widgets, Inc.", Form.TEN_K, 2024, "FY", 2)
    assert meta.period_end is not None and meta.period_end.isoformat() == "2024-09-28"
    assert meta.ticker == "ACME"  # from the file name: the cover names no trading symbol
    assert doc.title == "Acme Widgets, Inc. 10-K FY2024"


def test_a_table_running_onto_the_next_page_gets_its_header_and_caption(tmp_path: Path) -> None:
    rows = [(f"Line item {k}", "", f"{1000 + k:,}", "", f"{2000 + k:,}") for k in range(90)]
    doc = load_document(_print_pdf(_statement(rows), tmp_path / "long.pdf"))
    tables = doc.tables()
    assert len(tables) >= 2 and tables[1].page == tables[0].page + 1
    assert tables[1].rows[:3] == tables[0].rows[:3]
    assert tables[1].caption == tables[0].caption
    labels = [r[0] for t in tables for r in t.rows if r[0].startswith("Line item")]
    assert labels == [f"Line item {k}" for k in range(90)]


def test_day_numbers_under_a_month_are_header_not_amounts(tmp_path: Path) -> None:
    # Boeing's 10-Q: "Six months ended June" wraps its "30" onto the line of the unit note.
    spans = ('<tr><td></td><td colspan="4" class="c">Six months ended June</td>'
             '<td colspan="4" class="c">Three months ended</td></tr>'
             '<tr><td>(Dollars in millions)</td><td colspan="4" class="c">30</td>'
             '<td colspan="4" class="c">June 30</td></tr><tr><td></td>'
             + "".join(f'<td colspan="2" class="c">{y}</td>' for y in (2025, 2024, 2025, 2024))
             + "</tr>")
    body = "".join(_row((label, *[x for v in values for x in ("", v)]))
                   for label, values in (("Total revenues", ("42,245", "33,435", "22,749", "16,866")),
                                         ("Net loss", ("(643)", "(1,794)", "(612)", "(1,439)"))))
    html = ('<p class="c">Condensed Consolidated Statements of Operations</p>'
            f'<table style="width:100%">{spans}{body}</table>')
    table = load_document(_print_pdf(html, tmp_path / "days.pdf")).tables()[0]
    assert table.caption == "Condensed Consolidated Statements of Operations"
    assert ["(Dollars in millions)", "30", "", "June 30", ""] in table.rows
    assert table.rows[-3:-1] == [["", "2025", "2024", "2025", "2024"],
                                 ["Total revenues", "42,245", "33,435", "22,749", "16,866"]]


def test_one_row_tables_text_columns_and_nil_amounts(tmp_path: Path) -> None:
    years = "".join(f'<td colspan="2" class="c">{y}</td>' for y in (2025, 2026, 2027, "Thereafter"))
    payments = "".join(f'<td>$</td><td class="r">{v}</td>' for v in ("—", "5,513", "2,750", "11,728"))
    summary = ('<tr><td></td><td colspan="2" class="c">2024</td><td colspan="2" class="c">2023</td>'
               '<td class="c">Change</td></tr>'
               '<tr><td>Revenue</td><td>$</td><td class="r">130,497</td><td>$</td>'
               '<td class="r">60,922</td><td class="r">Up 114%</td></tr>'
               '<tr><td>Operating income</td><td>$</td><td class="r">81,453</td><td>$</td>'
               '<td class="r">32,972</td><td class="r">Up 147%</td></tr>')
    html = ('<p>Future principal payments were as follows (in millions):</p>'
            f'<table style="width:100%"><tr><td style="width:40%"></td>{years}</tr>'
            f'<tr><td>Future principal payments</td>{payments}</tr></table>'
            '<p>Fiscal Year Summary</p>'
            f'<table style="width:100%">{summary}</table>')
    doc = load_document(_print_pdf(html, tmp_path / "small.pdf"))
    payments_table, summary_table = doc.tables()
    assert payments_table.rows == [["", "2025", "2026", "2027", "Thereafter"],
                                   ["Future principal payments", "$ —", "$ 5,513", "$ 2,750",
                                    "$ 11,728"]]
    assert payments_table.caption == "Future principal payments were as follows (in millions):"
    assert summary_table.rows == [["", "2024", "2023", "Change"],
                                  ["Revenue", "$ 130,497", "$ 60,922", "Up 114%"],
                                  ["Operating income", "$ 81,453", "$ 32,972", "Up 147%"]]


def _row_of(tables: list[TableBlock], caption_word: str, label: str) -> tuple[TableBlock, list[str]]:
    for table in tables:
        if caption_word.lower() in table.caption.lower():
            for row in table.rows:
                if row[0] == label:
                    return table, row
    raise AssertionError(f"no row {label!r} in a table captioned {caption_word!r}")


def test_apple_10k_income_statement() -> None:
    doc = load_document(FILINGS / "pdf" / "aapl-10-k-2024-11-01.pdf", "aapl.pdf")
    meta = doc.metadata
    assert (meta.company, meta.ticker, meta.form, meta.fiscal_year, meta.fiscal_period, meta.pages) \
        == ("Apple Inc.", "AAPL", Form.TEN_K, 2024, "FY", 7)  # the cut's pages: 1-2, 41-45
    table, row = _row_of(doc.tables(), "STATEMENTS OF OPERATIONS", "Total net sales")
    assert table.caption.startswith("CONSOLIDATED STATEMENTS OF OPERATIONS (In millions")
    parsed = parse_table(table.rows, [table.caption])
    cell = next(c for c in parsed.cells if c.row == "Total net sales" and 2024 in
                parsed.column_years[c.column_index])
    assert cell.value is not None and cell.value.number == 391035
    assert parsed.scale == "million"
    # printed page 29 of the 10-K, the whole PDF's 41st, is the cut's 3rd (after the cover's 2)
    assert table.page == 3


@pytest.mark.parametrize(("name", "caption", "label", "values"), [
    ("aapl-10-k-2024-11-01.pdf", "BALANCE SHEETS", "Total liabilities and shareholders’ equity",
     ["$ 364,980", "$ 352,583"]),
    ("aapl-10-k-2024-11-01.pdf", "CASH FLOWS", "Cash generated by operating activities",
     ["118,254", "110,543", "122,151"]),
    ("tsla-10-q-2025-07-24.pdf", "Statements of Operations", "Total revenues",
     ["22,496", "25,500", "41,831", "46,801"]),
    ("jnj-10-q-2025-07-24.pdf", "statements of earnings", "Net earnings",
     ["$5,537", "23.3 %", "$4,686", "20.9 %"]),
    ("v-10-k-2024-11-13.pdf", "STATEMENTS OF OPERATIONS", "Net income",
     ["$ 19,743", "$ 17,273", "$ 14,957"]),
])
def test_statement_rows_of_the_real_pdfs(name: str, caption: str, label: str,
                                           values: list[str]) -> None:
    doc = load_document(FILINGS / "pdf" / name, name)
    _, row = _row_of(doc.tables(), caption, label)
    assert row[1:] == values


def _scanned(path: Path) -> Path:
    """A page holding only an image, as a scanner makes it."""
    pdf = pdfium.PdfDocument.new()
    page = pdf.new_page(612, 792)
    image = pdfium.PdfImage.new(pdf)
    image.set_bitmap(pdfium.PdfBitmap.from_pil(Image.new("RGB", (200, 100), "white")))
    image.set_matrix(pdfium.PdfMatrix().scale(200, 100).translate(50, 600))
    page.insert_obj(image)
    page.gen_content()
    pdf.save(path)
    return path


def _minimal_pdf(encrypted: bool) -> bytes:
    """A one-page PDF written by hand; `encrypted` adds a standard security handler whose
    user password is not the empty one, so it cannot be opened without a password."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"]
    if encrypted:
        objects.append(b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P -4 /O <" + b"11" * 32
                       + b"> /U <" + b"22" * 32 + b"> >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    trailer = b"<< /Size %d /Root 1 0 R" % (len(objects) + 1)
    if encrypted:
        trailer += b" /Encrypt 4 0 R /ID [<" + b"33" * 16 + b"> <" + b"33" * 16 + b">]"
    out += b"trailer\n%s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(out)


def test_bad_pdfs_are_refused_with_one_line_naming_the_file(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.pdf"
    corrupt.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 4)
    one_line_error(corrupt, "not a readable PDF")
    encrypted = tmp_path / "encrypted.pdf"
    encrypted.write_bytes(_minimal_pdf(encrypted=True))
    one_line_error(encrypted, "encrypted PDF")
    one_line_error(_scanned(tmp_path / "scan.pdf"), "no text layer", "OCR")
    blank = tmp_path / "blank.pdf"
    blank.write_bytes(_minimal_pdf(encrypted=False))
    one_line_error(blank, "no text layer")
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    one_line_error(empty, "empty file")
