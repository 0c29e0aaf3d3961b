"""The PDF reader on statements laid out as companies' own 10-K PDFs draw them (issue 51):
text set in a large font size scaled down by its matrix, amounts placed by the typesetter
(`tests/typeset_pdf.py`), not printed from HTML by Chromium."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from pipeline.rag.answers.filings.printed.statement_checks import failed_statements
from pipeline.rag.answers.filings.printed.statement_rows import StatementRow, statement_rows, statement_tables
from retriever_trt.documents import load_document
from retriever_trt.documents.pdf.pdf_statements import StatementKind
from retriever_trt.indexing.chunking import chunk_document
from tests.typeset_pdf import Text, table_rows, typeset_pdf

CHUNK_TOKENS = 120
COVER = [Text("FORM 10-K", 740, x=270),
         Text("For the fiscal year ended September 30, 2017", 720, x=200),
         Text("Acme Widgets, Inc.", 700, x=250)]
TITLE = [Text("CONSOLIDATED STATEMENTS OF OPERATIONS", 740, x=180),
         Text("(In millions, except per share amounts)", 728, x=210),
         Text("Years ended", 704, x=470),
         Text("2017", 692, right=420), Text("2016", 692, right=500), Text("2015", 692, right=580)]
INCOME = [("Net sales", "$ 229,234", "$ 215,639", "$ 233,715"),
          ("Cost of sales", "141,048", "131,376", "140,089"),
          ("Gross margin", "88,186", "84,263", "93,626"),
          ("Research and development", "11,581", "10,045", "8,067"),
          ("Operating income", "61,344", "60,024", "71,230"),
          ("Net income", "$ 48,351", "$ 45,687", "$ 53,394")]


def _read(tmp_path: Path, statement: list[Text]) -> list[StatementRow]:
    path = tmp_path / "acme-10-k-2017.pdf"
    path.write_bytes(typeset_pdf([COVER, statement]))
    doc = load_document(path, path.name)
    chunks, _ = chunk_document(doc, CHUNK_TOKENS, 0)
    return [r for st in statement_tables(chunks, doc.metadata) for r in statement_rows(st)]


def _values(rows: list[StatementRow], label: str) -> list[Decimal]:
    return [r.value for r in sorted(rows, key=lambda r: -r.period.end.year) if r.label == label]


def test_text_set_large_and_scaled_down_keeps_its_amounts_out_of_the_label(tmp_path: Path) -> None:
    """Set at 384 and scaled to 8 points: the gap between a label and its first amount is
    measured in the 8-point font's ems, so "Cost of sales" and "141,048" are two cells (read
    in the set size's ems, 1.1 em was 422 points and the label took the amount)."""
    rows = _read(tmp_path, TITLE + table_rows(INCOME, 680))
    assert {r.kind for r in rows} == {StatementKind.INCOME}
    million = Decimal(10) ** 6
    assert _values(rows, "Cost of sales") == [141_048 * million, 131_376 * million,
                                              140_089 * million]
    assert _values(rows, "Operating income") == [61_344 * million, 60_024 * million,
                                                 71_230 * million]
    assert not any(any(ch.isdigit() for ch in r.label) for r in rows)


BALANCE_TITLE = [Text("CONSOLIDATED BALANCE SHEETS", 740, x=220),
                 Text("January 29,", 716, right=420), Text("January 30,", 716, right=500),
                 Text("($ in millions)", 704, x=36),
                 Text("2022", 704, right=420), Text("2021", 704, right=500)]
ASSETS = [("Cash and cash equivalents", "$ 804", "$ 1,680"),
          ("Accounts receivable, less allowances of $230 (2020, $293)", "1,266", "923"),
          ("Total current assets", "2,070", "2,603"),
          ("Total assets", "$ 8,135", "$ 7,043")]


def test_a_heading_a_blank_line_above_the_first_rows_keeps_the_header_and_title(
        tmp_path: Path) -> None:
    """"ASSETS" set two line pitches above "Current assets:": the lines between the header
    and the first amounts are section rows however far apart body rows may be, so the dates
    above stay the header and the title the caption (the balance sheet is found)."""
    heading = [Text("ASSETS", 692, x=36), Text("Current assets:", 668, x=36)]
    rows = _read(tmp_path, BALANCE_TITLE + heading + table_rows(ASSETS, 656, rights=(420, 500)))
    assert {r.kind for r in rows} == {StatementKind.BALANCE}
    million = Decimal(10) ** 6
    assert _values(rows, "Total current assets") == [2_070 * million, 2_603 * million]
    assert {r.section for r in rows if r.label == "Cash and cash equivalents"} == {"Current assets"}


def test_a_year_and_comma_in_a_labels_parenthesis_is_no_amount(tmp_path: Path) -> None:
    """"$230 (2020, $293)" in a label: "(2020," goes on the phrase (a word ending in a comma
    is no amount), so no column opens under the label and the amounts keep theirs."""
    rows = _read(tmp_path, BALANCE_TITLE + [Text("Current assets:", 692, x=36)]
                 + table_rows(ASSETS, 680, rights=(420, 500)))
    label = "Accounts receivable, less allowances of $230 (2020, $293)"
    assert _values(rows, label) == [1_266 * Decimal(10) ** 6, 923 * Decimal(10) ** 6]
    assert len({r.cell[2] for r in rows}) == 2


CASH_TITLE = [Text("CONSOLIDATED STATEMENTS OF CASH FLOWS", 740, x=180),
              Text("(in millions)", 728, x=260),
              Text("2016", 704, right=420), Text("2015", 704, right=500),
              Text("2014", 704, right=580)]
CASH_FLOWS = [("Depreciation and amortization", "1,176", "1,144", "1,245"),
              ("Net cash provided by operating activities", "2,884", "2,134", "1,791"),
              ("Proceeds from sale of businesses", "631", "138", "1,807"),
              ("Sale of short-term investments", "4,904", "4,851", "4,503"),
              ("Net cash used in investing activities", "(2,108)", "(2,366)", "(656)")]


def test_amounts_drawn_a_third_of_a_line_below_their_label_stay_in_its_row(tmp_path: Path) -> None:
    """AES draws some rows' amounts 4 points (a third of its 12-point line pitch) below the
    label, and some rows' columns at two heights: lines that close, side by side, are one
    line, so "(2,108)" is no label of its own and the row keeps all three years."""
    low = 4.0
    texts = CASH_TITLE + table_rows(CASH_FLOWS[:4], 680)
    texts += [Text("Capital expenditures", 632, x=36)]
    texts += [Text(a, 632 - low, right=r) for a, r in zip(("(2,345)", "(2,308)", "(2,016)"),
                                                          (420, 500, 580), strict=True)]
    texts += [Text("Net cash used in investing activities", 620, x=36),
              Text("(2,108)", 620 - low, right=420), Text("(2,366)", 620, right=500),
              Text("(656)", 620 - low, right=580)]
    rows = _read(tmp_path, texts)
    million = Decimal(10) ** 6
    assert _values(rows, "Capital expenditures") == [-2_345 * million, -2_308 * million,
                                                     -2_016 * million]
    assert _values(rows, "Net cash used in investing activities") == [
        -2_108 * million, -2_366 * million, -656 * million]
    assert not any(any(ch.isdigit() for ch in r.label) for r in rows)


def test_a_title_centred_over_the_columns_is_the_caption_not_a_header(tmp_path: Path) -> None:
    """The company's name over the title, the title centred over the columns, and a
    header of several lines: the title line ends the header, so the statement is found by
    it (as a header line, it left the company's name alone as the caption)."""
    title = [Text("Acme Widgets, Inc. and Subsidiaries", 752, x=36),
             Text("Consolidated Statements of Cash Flows", 740, x=380),
             Text("(in millions)", 728, x=440),
             Text("2016", 716, right=420), Text("2015", 716, right=500),
             Text("2014", 716, right=580)]
    rows = _read(tmp_path, title + table_rows(CASH_FLOWS, 704))
    assert {r.kind for r in rows} == {StatementKind.CASH_FLOWS}
    assert len(_values(rows, "Net cash provided by operating activities")) == 3


def test_a_total_printed_without_a_label_is_an_amount_not_a_label(tmp_path: Path) -> None:
    """Foot Locker prints "Total current assets" as its amounts alone; a total wider than
    the amounts above it starts left of their column, and is still that column's amount."""
    path = tmp_path / "totals.pdf"
    rows = [("Cash and cash equivalents", "804", "1,680"), ("Merchandise inventories", "923", "955"),
            ("Other current assets", "293", "232"), ("", "12,020", "12,867"),
            ("Property and equipment, net", "917", "788")]
    path.write_bytes(typeset_pdf([BALANCE_TITLE + table_rows(rows, 680, rights=(420, 500))]))
    table = next(b for b in load_document(path, path.name).tables() if len(b.rows) > 4)
    assert ["", "12,020", "12,867"] in table.rows


def test_cash_flows_with_discontinued_operations_add_up_by_their_totals(tmp_path: Path) -> None:
    """eBay and Pfizer print each activity's continuing and discontinued parts before its
    total, and Pfizer's "exchange-rate" with a hyphen: the check adds the totals (the last
    "Net cash ..." row of each activity) and the effect of exchange rates, and passes."""
    flows = [("Net cash provided by continuing operating activities", "3,093"),
             ("Net cash used in discontinued operating activities", "(436)"),
             ("Net cash provided by operating activities", "2,657"),
             ("Net cash used in continuing investing activities", "(1,417)"),
             ("Net cash provided by discontinued investing activities", "5,080"),
             ("Net cash provided by investing activities", "3,663"),
             ("Net cash used in financing activities", "(6,532)"),
             ("Effect of exchange-rate changes on cash", "24"),
             ("Net increase (decrease) in cash", "(188)")]
    path = tmp_path / "acme-10-k-2017.pdf"
    path.write_bytes(typeset_pdf([COVER, CASH_TITLE + table_rows(
        [(label, v, v, v) for label, v in flows], 680)]))
    doc = load_document(path, path.name)
    tables = statement_tables(chunk_document(doc, CHUNK_TOKENS, 0)[0], doc.metadata)
    assert [st.kind for st in tables] == [StatementKind.CASH_FLOWS]
    assert failed_statements(tables) == {}


def test_a_title_heading_the_page_far_above_the_table_is_its_caption(tmp_path: Path) -> None:
    """Pfizer sets "Consolidated Statements of Income" and the company's name at the head of
    the page, five line pitches above the table's header: the lines heading the
    page, when they name a statement, are its caption."""
    title = [Text("Consolidated Statements of Income", 756, x=36),
             Text("Acme Widgets, Inc. and Subsidiary Companies", 746, x=36),
             Text("Year Ended December 31,", 696, x=450),
             Text("2017", 691, right=420), Text("2016", 691, right=500), Text("2015", 691, right=580)]
    rows = _read(tmp_path, title + table_rows(INCOME, 680, pitch=10))
    assert {r.kind for r in rows} == {StatementKind.INCOME}
    assert len(_values(rows, "Net income")) == 3


def test_a_header_a_blank_line_above_a_section_heading_is_still_the_header(tmp_path: Path) -> None:
    """Verizon's statement of equity: "Shares  Amount" over the columns, a blank line, then
    the section "Common Stock" and its rows. The header may stand as far above a section
    heading as dates above a first row; else the header lines, the heading and the scale
    note filled the caption and pushed the title out (the statement was not found)."""
    rights = (300.0, 350.0, 400.0, 450.0)
    head = [Text("Consolidated Statements of Changes in Equity", 749, x=36),
            Text("Acme Widgets, Inc. and Subsidiaries", 737, x=36),
            Text("(dollars in millions, and shares in thousands)", 720, x=260),
            Text("Years Ended December 31,", 708, x=36),
            Text("2021", 708, right=350), Text("2020", 708, right=450),
            *[Text(w, 696, right=r) for w, r in zip(("Shares", "Amount") * 2, rights, strict=True)],
            Text("Common Stock", 671, x=36)]
    rows = [("Balance at beginning of year", "4,291,434", "$ 429", "4,291,434", "$ 429"),
            ("Balance at end of year", "4,291,434", "429", "4,291,434", "429"),
            ("Retained Earnings", "", "", "", ""),
            ("Balance at beginning of year", "", "60,464", "", "53,147"),
            ("Net income", "", "22,065", "", "17,801"),
            ("Balance at end of year", "", "82,380", "", "60,464")]
    path = tmp_path / "acme-10-k-2021.pdf"
    path.write_bytes(typeset_pdf([COVER, head + table_rows(rows, 659, rights=rights)]))
    doc = load_document(path, path.name)
    tables = statement_tables(chunk_document(doc, CHUNK_TOKENS, 0)[0], doc.metadata)
    assert [st.kind for st in tables] == [StatementKind.EQUITY]
    assert tables[0].table.rows[tables[0].table.n_header][0] == "Common Stock"


def test_a_total_printed_without_a_label_is_named_by_its_section_where_it_adds_up(
        tmp_path: Path) -> None:
    """Foot Locker's "Current assets:" rows end in their total's amounts alone: the sum of
    the section's rows in every column names it "Total current assets" (the row above
    that does not add up, in the test before, keeps no label)."""
    rows = [("Current assets:", "", ""), ("  Cash and cash equivalents", "$ 804", "$ 1,680"),
            ("  Merchandise inventories", "1,266", "923"), ("  Other current assets", "293", "—"),
            ("", "2,363", "2,603"), ("Property and equipment, net", "917", "788")]
    statement = _read(tmp_path, BALANCE_TITLE + table_rows(rows, 680, rights=(420, 500)))
    million = Decimal(10) ** 6
    assert _values(statement, "Total current assets") == [2_363 * million, 2_603 * million]
