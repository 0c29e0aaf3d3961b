"""Facts read off printed statement tables, where a PDF tags none: each column's period
from the statement headers, each row's line item from its label, and the facts the table
shows, on small tables laid out as real filings print them."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.rag.answers.filings.printed.table_facts import facts_from_tables, is_statement
from pipeline.rag.answers.question_words import stems, tokens
from pipeline.rag.answers.tables.column_periods import ColumnPeriod, column_periods, period_length
from pipeline.rag.answers.tables.row_items import match_row
from pipeline.rag.answers.vocabulary.line_items import BY_NAME
from retriever_trt.documents import Form
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.documents.tables import parse_table
from retriever_trt.store.document_store import Chunk, DocumentInfo

REVENUE = BY_NAME["revenue"].concepts[0]


def test_spanning_period_labels_cover_their_columns() -> None:
    # Tesla's layout: each length over two years, the month and day in the same label.
    table = parse_table([["", "Three Months Ended June 30,", "", "Six Months Ended June 30,", ""],
                         ["", "2025", "2024", "2025", "2024"],
                         ["Total revenues", "22,496", "25,500", "41,831", "46,801"]])
    assert column_periods(table) == [None, ColumnPeriod(date(2025, 6, 30), 3),
                                     ColumnPeriod(date(2024, 6, 30), 3),
                                     ColumnPeriod(date(2025, 6, 30), 6),
                                     ColumnPeriod(date(2024, 6, 30), 6)]
    # Visa's: one centred label over three years; a "% of sales" column has no period.
    table = parse_table([["", "", "For the Years Ended", "", ""],
                         ["", "", "September 30,", "", ""],
                         ["", "2024", "2023", "2022", "% of sales"],
                         ["Net revenue", "$ 35,926", "$ 32,653", "$ 29,310", "100 %"]])
    periods = column_periods(table)
    assert [p.end if p else None for p in periods] == [
        None, date(2024, 9, 30), date(2023, 9, 30), date(2022, 9, 30), None]
    assert {p.months for p in periods if p} == {12}


def test_balance_dates_and_the_filings_own_day() -> None:
    table = parse_table([["", "June 29, 2025", "December 29, 2024"],
                         ["Total assets", "$193,389", "180,104"]])
    assert column_periods(table)[1:] == [ColumnPeriod(date(2025, 6, 29), None),
                                         ColumnPeriod(date(2024, 12, 29), None)]
    assert column_periods(table, "", DocumentMetadata(form=Form.TEN_Q))[1].months is None
    # An annual report's bare fiscal years: flows for the year, balances at its end, which
    # the filing's own year end places (Home Depot's fiscal 2024 ended February 2, 2025).
    home_depot = DocumentMetadata(form=Form.TEN_K, fiscal_year=2024, period_end=date(2025, 2, 2))
    fiscal = parse_table([["", "Fiscal", "Fiscal"], ["in millions", "2024", "2023"],
                          ["Net sales", "$ 159,514", "$ 152,669"]])
    assert column_periods(fiscal, "", home_depot)[1:] == [
        ColumnPeriod(date(2025, 2, 2), 12, fiscal_year=True),
        ColumnPeriod(date(2024, 2, 2), 12, fiscal_year=True)]
    years_only = parse_table([["", "2024", "2023"], ["Total assets", "10", "9"]])
    assert column_periods(years_only, "for the years ended September 30")[1] == \
        ColumnPeriod(date(2024, 9, 30), 12)
    # A quarterly report's bare years are calendar years, on the filing's month and day; a
    # row of day numbers under "Three Months Ended March" is still the header.
    quarter = DocumentMetadata(form=Form.TEN_Q, fiscal_year=2025, period_end=date(2025, 3, 31))
    split = parse_table([["", "Three Months Ended March", "", "Nine Months Ended March", ""],
                         ["", "", "31", "", "31"], ["in millions", "2025", "2024", "2025", "2024"],
                         ["NET SALES", "$ 19,776", "$ 20,195", "$ 63,395", "$ 63,507"]])
    assert column_periods(split, "", quarter)[2:4] == [ColumnPeriod(date(2024, 3, 31), 3),
                                                       ColumnPeriod(date(2025, 3, 31), 9)]
    assert [period_length(t) for t in ("Fiscal Second Quarter Ended", "26 weeks ended",
                                       "Nine months ended", "Years ended", "June 30")] == \
        [3, 6, 9, 12, None]


@pytest.mark.parametrize(("label", "section", "item"), [
    ("Total net sales", "Net sales:", "revenue"),
    ("Sales to customers (Note 9)", "", "revenue"),
    ("Total cost of revenues", "Cost of revenues", "cost of revenue"),
    ("Purchases of property, equipment and technology", "Investing Activities",
     "capital expenditures"),
    ("Purchases of property and equipment excluding finance leases, net of sales", "",
     "capital expenditures"),
    ("Net cash flows from operating activities", "", "operating cash flow"),
    ("Total shareholders’ equity", "Shareholders’ equity:", "total shareholders' equity"),
    ("Total liabilities", "Current liabilities:", "total liabilities"),
    ("Total", "Current liabilities", "total current liabilities"),
    ("Diluted", "Earnings per share:", "diluted eps"),
    ("Diluted", "Shares used in computing earnings per share:", "diluted weighted-average shares"),
    ("Net earnings per diluted share", "", "diluted eps"),
    ("Accounts receivable, trade, less allowances $185 (2024, $167)", "", "accounts receivable"),
    ("Marketable securities", "", None),
    # A one-word label is read with its section only when the item's name holds its word.
    ("Goodwill", "Current assets", None),
    ("Investments", "Current assets", None),
    # "earnings" is "income"; "taxes" is "tax"; a comprehensive income row is no other item.
    ("Operating earnings", "", "operating income"),
    ("Earnings before income tax expense", "", "pretax income"),
    ("Other comprehensive income/(loss), before tax", "", None),
    ("Income tax (expense)/benefit related to items of other comprehensive income", "", None),
    # A current liability is no long-term debt, unless its label says long-term.
    ("Term debt", "Current liabilities", None),
    ("Current portion of long-term debt", "Current liabilities", None),
    ("Term debt", "Non-current liabilities", "long-term debt"),
    ("Long-term debt", "Current liabilities", "long-term debt"),
    # A statement's "Gross margin" row of dollars is gross profit (Apple's, Intel's).
    ("Total gross margin", "", "gross profit"),
    # Intel's capex row; a balance item names no flow row.
    ("Additions to property, plant and equipment", "", "capital expenditures"),
    # AbbVie's; Tesla's supplemental row of what was not paid is no payment
    ("Acquisitions of property and equipment", "", "capital expenditures"),
    ("Acquisitions of property and equipment included in liabilities", "", None),
    # Coca-Cola's buybacks; Salesforce's and UnitedHealth's long-term debt
    ("Purchases of stock for treasury", "", "share repurchases"),
    ("Debt, noncurrent", "", "long-term debt"),
    ("Long-term debt, less current maturities", "", "long-term debt"),
    # eBay's "Sales and marketing" under "Operating expenses:" is no revenue; a label naming
    # an item whole stands under a section read too far (Amcor's prints no total of it).
    ("Sales and marketing", "Operating expenses", None),
    ("Marketing and sales", "Operating expenses (1)(2):", None),
    ("Net income attributable to Amcor plc", "Operating expenses", "net income"),
    # cash received is no payment
    ("Dividends received from affiliated companies", "Adjustments to reconcile", None),
    ("Dividends paid", "Cash flows from financing activities", "dividends paid"),
])
def test_row_labels_read_as_line_items(label: str, section: str, item: str | None) -> None:
    found = match_row(label, section)
    assert (found.item.name if found else None) == item


def test_statement_captions_and_notes_that_mention_one() -> None:
    assert is_statement("CONSOLIDATED STATEMENTS OF OPERATIONS (In millions, except ...)")
    assert is_statement("Johnson & Johnson and subsidiaries consolidated balance sheets")
    assert is_statement("VISA CONSOLIDATED STATEMENTS OF CASH FLOWS")
    assert not is_statement("Our total cash ... as presented in the consolidated statements of "
                            "cash flows, was as follows (in millions):")


def _statement_facts(name: str, rows: list[list[str]], caption: str, form: Form = Form.TEN_K,
                     end: date = date(2024, 12, 31)) -> DocumentInfo:
    """The facts the answer rules read off one printed statement table of a filing `name`."""
    chunk = Chunk(f"{name}.pdf#table0/0", f"{name}.pdf", name.upper(), "",
                  {"table": "0", "caption": caption}, rows)
    meta = DocumentMetadata(form=form, fiscal_year=end.year, period_end=end)
    return facts_from_tables(DocumentInfo(f"{name}.pdf", name.upper(), meta), [chunk])


def test_facts_from_a_statement_table() -> None:
    rows = [["", "Three Months Ended", "", "Six Months Ended", ""],
            ["", "June 30,", "June 30,", "June 30,", "June 30,"],
            ["", "2025", "2024", "2025", "2024"],
            ["Net income", "$ 3,125", "$ 2,147", "$ 6,015", "$ 4,479"],
            ["Purchases of property and equipment", "(31)", "(24)", "(60)", "(41)"],
            ["Total stockholders' equity, beginning balances", "$ 24,028", "$ 21,365",
             "$ 24,743", "$ 20,588"],
            ["Total stockholders' equity, ending balances", "$ 24,951", "$ 22,112", "$ 24,951",
             "$ 22,112"]]
    caption = "Consolidated Statements of Stockholders’ Equity (in thousands)"
    info = _statement_facts("x", rows, caption, Form.TEN_Q, date(2025, 6, 30))
    by = {(f.concept.split(":")[1], f.start, f.end): f.value for f in info.facts}
    assert by[("NetIncomeLoss", date(2025, 1, 1), date(2025, 6, 30))] == 6015000
    assert by[("PaymentsToAcquirePropertyPlantAndEquipment", date(2024, 4, 1),
               date(2024, 6, 30))] == 24000  # a payment, unsigned
    # The closing row is the balance at each column's end; the opening row is none.
    equity = [f for f in info.facts if f.concept == "us-gaap:StockholdersEquity"]
    assert {(f.start, f.end, f.value) for f in equity} == {
        (None, date(2025, 6, 30), 24951000), (None, date(2024, 6, 30), 22112000)}
    assert info.fact_cells[equity[0].fact_id][0] == "x.pdf#table0/0"


def test_income_tax_printed_as_a_deduction_is_an_expense() -> None:
    rows = [["", "For the Years Ended December 31,", "", ""],
            ["(in millions)", "2024", "2023", "2022"],
            ["Earnings before income taxes", "20,071", "29,112", "100"],
            ["Provision for income taxes", "(4,829)", "(5,968)", "(10)"],
            ["Net earnings", "15,242", "23,144", "110"]]  # 2022: a benefit, added
    caption = "Consolidated Statements of Operations"
    info = _statement_facts("u", rows, caption)
    tax = {f.end.year: f.value for f in info.facts if f.concept == "us-gaap:IncomeTaxExpenseBenefit"}
    assert tax == {2024: 4829000000, 2023: 5968000000, 2022: -10000000}


def test_a_sections_total_row_and_a_deduction_under_other_income() -> None:
    """Union Pacific's layout: "Freight revenues" and "Total operating revenues" both read as
    revenue, and the total is the revenue figure; "Other income, net" half-names net income,
    but the tax deduction's arithmetic ends on the "Net income" row."""
    rows = [["", "2024", "2023"],
            ["Operating revenues:", "", ""],
            ["Freight revenues", "$ 22,811", "$ 22,571"],
            ["Other revenues", "1,439", "1,548"],
            ["Total operating revenues", "24,250", "24,119"],
            ["Operating income", "9,713", "9,082"],
            ["Other income, net (Note 6)", "350", "491"],
            ["Interest expense", "(1,269)", "(1,340)"],
            ["Income before income taxes", "8,794", "8,233"],
            ["Income tax expense (Note 7)", "(2,047)", "(1,854)"],
            ["Net income", "$ 6,747", "$ 6,379"]]
    caption = "CONSOLIDATED STATEMENTS OF INCOME Millions, for the Years Ended December 31,"
    info = _statement_facts("r", rows, caption)
    revenue = next(f for f in info.facts if f.concept == REVENUE and f.end.year == 2024)
    assert revenue.value == 24250000000
    tax = {f.end.year: f.value for f in info.facts if f.concept == "us-gaap:IncomeTaxExpenseBenefit"}
    assert tax == {2024: 2047000000, 2023: 1854000000}


def _labelled(info: DocumentInfo) -> dict[tuple[str, int], object]:
    """(concept, year) -> value of the facts read under their rows' own labels (`pdf:`)."""
    return {(f.concept, f.end.year): f.value for f in info.facts if f.concept.startswith("pdf:")}


def test_rows_no_item_names_give_facts_under_their_labels() -> None:
    """A balance sheet's "Goodwill" (no vocabulary item) is pdf:Goodwill; a negative cell
    (treasury stock: tagged positive), a row of shares and a label printed twice (each a
    part of what its name asks: current and non-current) give none."""
    rows = [["", "December 31, 2024", "December 31, 2023"],
            ["Total current assets", "25,582", "33,002"],
            ["Goodwill", "34,956", "32,293"],
            ["Accrued compensation", "1,200", "1,100"],
            ["Total assets", "$ 135,161", "$ 134,711"],
            ["Accrued compensation", "300", "250"],
            ["Common stock, $0.01 par value, 4,000 shares authorized", "18", "18"],
            ["Treasury stock, at cost", "(38,208)", "(36,500)"],
            ["Total liabilities and equity", "$ 135,161", "$ 134,711"]]
    caption = "Consolidated Balance Sheets (in millions)"
    info = _statement_facts("b", rows, caption)
    labelled = _labelled(info)
    assert labelled == {("pdf:Goodwill", 2024): 34956000000, ("pdf:Goodwill", 2023): 32293000000}
    assert info.facts[-1].concept == "pdf:Goodwill"  # after every item's facts


def test_a_row_of_an_item_with_a_narrowing_word_gives_its_labels_fact_too() -> None:
    """Tesla's "Total automotive revenues" is read as a row of revenue; its label names a
    part, so it also stands under its own concept for a question naming it so."""
    rows = [["", "2019", "2018"], ["Automotive sales", "19,952", "17,632"],
            ["Total automotive revenues", "20,821", "18,515"],
            ["Total revenues", "24,578", "21,461"], ["Net income", "(862)", "(976)"]]
    labelled = _labelled(_statement_facts(
        "t", rows, "Consolidated Statements of Operations (in millions)"))
    assert labelled[("pdf:TotalAutomotiveRevenues", 2019)] == 20821000000
    assert not any(concept == "pdf:TotalRevenues" for concept, _ in labelled)


def test_an_expense_printed_as_a_deduction_under_its_label() -> None:
    """An income statement's "(1,269)" interest expense is the expense 1,269 (tagged
    positive); "Other income (expense), net" printed negative is in doubt and gives none."""
    rows = [["", "2024", "2023"],
            ["Operating income", "9,713", "9,082"],
            ["Other income (expense), net", "(45)", "30"],
            ["Interest expense", "(1,269)", "(1,340)"],
            ["Income before income taxes", "8,399", "7,772"]]
    caption = "CONSOLIDATED STATEMENTS OF INCOME (Millions)"
    info = _statement_facts("e", rows, caption)
    labelled = _labelled(info)
    assert labelled[("pdf:InterestExpense", 2024)] == 1269000000
    assert labelled[("pdf:InterestExpense", 2023)] == 1340000000
    assert ("pdf:OtherIncomeExpenseNet", 2024) not in labelled


def test_a_row_under_an_expenses_section_is_an_expense() -> None:
    """eBay's "Sales and marketing" under "Operating expenses:" is an expense, named as the
    taxonomy names it (pdf:SalesAndMarketingExpense); an income row under a section read too
    far is not made one."""
    rows = [["", "2019", "2018"],
            ["Net revenues", "$ 10,800", "$ 10,746"],
            ["Operating expenses:", "", ""],
            ["Sales and marketing", "3,194", "3,391"],
            ["Product development", "1,240", "1,285"],
            ["Interest income", "14", "22"]]
    info = _statement_facts("eb", rows, "CONSOLIDATED STATEMENT OF INCOME (In millions)",
                            end=date(2019, 12, 31))
    labelled = _labelled(info)
    assert labelled[("pdf:SalesAndMarketingExpense", 2018)] == 3391000000
    assert labelled[("pdf:ProductDevelopmentExpense", 2019)] == 1240000000
    assert ("pdf:InterestIncome", 2019) in labelled
    revenue = {f.end.year: f.value for f in info.facts if f.concept == REVENUE}
    assert revenue == {2019: 10800000000, 2018: 10746000000}


def test_the_groups_statement_before_a_segments_or_the_parents() -> None:
    """A segment note's table (Amcor's "Flexibles Segment") and the parent's own statements
    (AES's Schedule I) show the item's rows too; the consolidated statement's figure comes
    first, wherever it is printed."""
    def chunk(n: int, caption: str, value: str) -> Chunk:
        rows = [["", "2020", "2019"], ["Net sales", value, "9,000"],
                ["Capital expenditures", "(8)", "(9)"]]
        return Chunk(f"g.pdf#table{n}/0", "g.pdf", "G", "", {"table": str(n), "caption": caption},
                     rows)
    chunks = [chunk(0, "Segment Results of Operations Flexibles Segment (in millions)", "8,000"),
              chunk(1, "THE G CORPORATION SCHEDULE I CONDENSED FINANCIAL INFORMATION OF PARENT "
                       "STATEMENTS OF CASH FLOWS (in millions)", "1"),
              chunk(2, "Consolidated Statements of Income (in millions)", "10,000")]
    meta = DocumentMetadata(form=Form.TEN_K, fiscal_year=2020, period_end=date(2020, 12, 31))
    info = facts_from_tables(DocumentInfo("g.pdf", "G", meta), chunks)
    revenue = next(f for f in info.facts if f.concept == REVENUE and f.end.year == 2020)
    assert revenue.value == 10000000000


def test_a_rate_a_share_in_a_table_of_dollars_is_no_amount() -> None:
    """AES's five-year summary prints "Cash dividend $0.12": a rate a share, not the
    dividends paid, which a statement in millions prints as (290)."""
    rows = [["", "2016", "2015"], ["Cash dividend", "$0.12", "$0.11"]]
    info = _statement_facts("d", rows, "Selected Financial Data")
    assert not [f for f in info.facts if f.concept == "us-gaap:PaymentsOfDividends"]
    rows = [["", "2016", "2015"], ["Dividends paid", "(290)", "(276)"]]
    info = _statement_facts("d", rows, "Consolidated Statements of Cash Flows (in millions)")
    paid = {f.end.year: f.value for f in info.facts if f.concept == "us-gaap:PaymentsOfDividends"}
    assert paid == {2016: 290000000, 2015: 276000000}


def test_a_table_naming_no_scale_takes_the_one_its_figures_agree_with() -> None:
    """Apple's five-year summary names no scale; its 2019 net income (55,256) is the income
    statement's "in millions", so its 2016 figure is in millions too."""
    summary = Chunk("s.pdf#table0/0", "s.pdf", "S", "", {"table": "0", "caption": ""},
                    [["", "2020", "2019", "2016"], ["Net income", "$ 57,411", "$ 55,256",
                                                   "$ 45,687"]])
    statement = Chunk("s.pdf#table1/0", "s.pdf", "S", "",
                      {"table": "1", "caption": "CONSOLIDATED STATEMENTS OF OPERATIONS "
                                                "(In millions)"},
                      [["", "2020", "2019"], ["Net income", "$ 57,411", "$ 55,256"]])
    meta = DocumentMetadata(form=Form.TEN_K, fiscal_year=2020, period_end=date(2020, 9, 26))
    info = facts_from_tables(DocumentInfo("s.pdf", "S", meta), [summary, statement])
    net = {f.end.year: f.value for f in info.facts if f.concept == "us-gaap:NetIncomeLoss"}
    assert net[2016] == 45687000000 and net[2019] == 55256000000


def test_a_cash_flow_statement_adds_up_with_the_rows_before_its_net_change() -> None:
    """Amcor's: cash "classified as held for sale assets" printed beside the exchange rates'
    effect, between the net cash flows and the net change; the statement adds up and answers."""
    rows = [["", "2021", "2019"],
            ["Net cash provided by operating activities", "1,461", "776"],
            ["Net cash (used in) provided by investing activities", "(233)", "10"],
            ["Dividends paid", "(742)", "(680)"],
            ["Net cash used in financing activities", "(1,179)", "(765)"],
            ["Effect of exchange rates on cash and cash equivalents", "58", "1"],
            ["Cash and cash equivalents classified as held for sale assets", "—", "(41)"],
            ["Net increase (decrease) in cash and cash equivalents", "107", "(19)"]]
    info = _statement_facts("am", rows, "Consolidated Statements of Cash Flows (in millions)",
                            end=date(2021, 6, 30))
    assert not info.unread
    paid = {f.end.year: f.value for f in info.facts if f.concept == "us-gaap:PaymentsOfDividends"}
    assert paid == {2021: 742000000, 2019: 680000000}


def test_a_cash_flow_acquisition_is_a_payment_asked_by_its_verb() -> None:
    """Verizon's "Acquisitions of wireless licenses (3,896)" is a payment, read as the
    positive amount, and "acquiring wireless licenses" names it."""
    rows = [["", "2021", "2020"],
            ["Capital expenditures (including capitalized software)", "(20,286)", "(18,192)"],
            ["Acquisitions of wireless licenses", "(47,596)", "(3,896)"],
            ["Net cash used in investing activities", "(66,162)", "(21,560)"]]
    info = _statement_facts("vz", rows, "Consolidated Statements of Cash Flows (dollars in "
                            "millions)", end=date(2021, 12, 31))
    labelled = _labelled(info)
    assert labelled[("pdf:AcquisitionsOfWirelessLicenses", 2020)] == 3896000000
    assert stems(tokens("acquiring")) == stems(tokens("Acquisitions")) == stems(["acquired"])
