"""A part's figure read from a printed filing's table (a PDF has no dimensions): only from a
table of that measure, in the table's own scale, never a percentage. Tables as Chromium
prints Coca-Cola's, Boeing's and Johnson & Johnson's 10-K and 10-Q notes."""

from __future__ import annotations

from datetime import date

from pipeline.rag.answers.filings.parts.part_rows import part_facts
from pipeline.rag.answers.filings.printed.table_facts import facts_from_tables
from pipeline.rag.answers.vocabulary.line_items import BY_NAME
from retriever_trt.documents import Form
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.documents.tables import parse_table
from retriever_trt.store.document_store import Chunk, DocumentInfo

FY2024 = DocumentMetadata(form=Form.TEN_K, fiscal_year=2024, period_end=date(2024, 12, 31))


def _chunk(n: int, caption: str, rows: list[list[str]]) -> Chunk:
    return Chunk(f"x.pdf#table{n}/0", "x.pdf", "X", "", {"table": str(n), "caption": caption},
                 rows)


def test_a_columns_bare_figures_between_two_percentages_are_percentages():
    """Filings print "%" on a column's first and total rows only: Coca-Cola's 37.8 is Latin
    America's share of operating income, not 37.8 million of it."""
    rows = [["Year Ended December 31,", "2024", "2023"],
            ["Europe, Middle East & Africa", "41.3 %", "37.2 %"],
            ["Latin America", "37.8", "30.3"], ["Corporate", "(52.6)", "(32.7)"],
            ["Total", "100.0 %", "100.0 %"]]
    table = parse_table(rows, ["operating income contribution on a percentage basis"])
    assert all(c.value.percent for c in table.numeric_cells())
    chunk = _chunk(0, "Operating income by operating segment", rows)
    info = DocumentInfo("x.pdf", "X", FY2024)
    assert not part_facts(info, [chunk], BY_NAME["operating income"], {"latin", "america"}).facts
    # amounts printed "$" first and last keep their bare rows amounts
    money = parse_table([["", "2024"], ["Asia", "$ 11,994"], ["Europe", "8,734"],
                         ["Total", "$ 20,728"]])
    assert not any(c.value.percent for c in money.numeric_cells())


def test_a_table_naming_no_scale_takes_the_scale_its_total_has_in_a_statement():
    """Boeing's revenue by customer location names no scale; its "Total revenues" is the
    income statement's in millions, so Middle East's 4,635 is 4,635 million, not dollars."""
    statement = _chunk(0, "Consolidated Statements of Operations (Dollars in millions)",
                       [["Years ended December 31,", "2024", "2023"],
                        ["Total revenues", "$ 66,517", "$ 77,794"]])
    note = _chunk(1, "Revenues, including foreign military sales, are reported by customer "
                     "location and consisted of the following:",
                  [["Years ended December 31,", "2024", "2023"], ["Asia", "$11,994", "$10,013"],
                   ["Middle East", "4,635", "6,594"], ["Total revenues", "$66,517", "$77,794"]])
    info = facts_from_tables(DocumentInfo("x.pdf", "X", FY2024), [statement])
    got = part_facts(info, [statement, note], BY_NAME["revenue"], {"middle", "east"})
    assert sorted((f.end.year, f.value) for f in got.facts) == [(2023, 6594000000),
                                                                (2024, 4635000000)]


def test_a_share_of_sales_header_does_not_make_a_table_one_of_sales():
    """Johnson & Johnson's research and development expense by segment heads each amount
    "Amount % of Sales": its 5,417 is no Innovative Medicine sales; the segment sales table
    gives them."""
    meta = DocumentMetadata(form=Form.TEN_Q, fiscal_year=2025, fiscal_period="Q2",
                            period_end=date(2025, 6, 29))
    research = _chunk(0, "Research and development expense by segment of business was as "
                         "follows:",
                      [["", "Fiscal Six Months Ended", ""], ["", "June 29, 2025", "June 30, 2024"],
                       ["(Dollars in Millions)", "Amount % of Sales*", "Amount % of Sales*"],
                       ["Innovative Medicine", "$5,417", "$5,618"], ["MedTech", "1,324", "1,364"]])
    info = DocumentInfo("x.pdf", "X", meta)
    sales = BY_NAME["revenue"]
    assert not part_facts(info, [research], sales, {"innovative", "medicine"}).facts
    segment_sales = _chunk(1, "Sales by segment of business (in millions)",
                           [["", "Fiscal Six Months Ended", ""],
                            ["", "June 29, 2025", "June 30, 2024"],
                            ["Innovative Medicine", "$29,075", "$28,052"],
                            ["MedTech", "16,561", "15,778"]])
    got = part_facts(info, [research, segment_sales], sales, {"innovative", "medicine"})
    assert {f.value for f in got.facts} == {29075000000, 28052000000}



def test_a_row_cut_to_a_place_the_question_does_not_name_is_no_answer():
    """AbbVie prints each product's name on its first row ("Skyrizi United States" above
    "International" and "Total"): asked for Skyrizi's revenue, that row is its U.S. part,
    not the product's revenue; asked for the United States, it is."""
    rows = [["(dollars in millions)", "2024", "2023"],
            ["Skyrizi United States", "$ 10,086", "$ 6,753"], ["International", "1,632", "1,010"],
            ["Total", "$ 11,718", "$ 7,763"]]
    chunk = _chunk(0, "The following table details AbbVie's worldwide net revenues:", rows)
    info = DocumentInfo("x.pdf", "X", FY2024)
    revenue = BY_NAME["revenue"]
    assert not part_facts(info, [chunk], revenue, {"skyrizi"},
                          frozenset({"skyrizi", "revenue"})).facts
    us = part_facts(info, [chunk], revenue, {"skyrizi"},
                    frozenset({"skyrizi", "united", "state", "revenue"}))
    assert sorted(f.value for f in us.facts) == [6753000000, 10086000000]


def test_parts_as_columns_over_blocks_of_rows_one_a_year():
    """Coca-Cola's operating segments note prints its segments across and a block of rows
    under each "Year Ended December 31, ..." heading: Latin America's operating income for
    2023 is the Latin America column's figure on that block's operating income row."""
    rows = [["", "Latin", "North", "", ""], ["", "America", "America", "Corporate", "Consolidated"],
            ["Year Ended December 31, 2024", "", "", "", ""],
            ["Net operating revenues:", "", "", "", ""],
            ["Total net operating revenues", "6,459", "18,649", "97", "47,061"],
            ["Operating income (loss)", "$ 3,780", "$ 4,336", "$ (5,252)", "$ 9,992"],
            ["Year Ended December 31, 2023", "", "", "", ""],
            ["Net operating revenues:", "", "", "", ""],
            ["Total net operating revenues", "5,830", "16,774", "126", "45,754"],
            ["Operating income (loss)", "$ 3,432", "$ 4,435", "$ (3,705)", "$ 11,311"]]
    chunk = _chunk(0, "Information about our Company's operations by operating segment and "
                      "Corporate is as follows (in millions):", rows)
    info = DocumentInfo("x.pdf", "X", FY2024)
    said = frozenset({"latin", "america", "operating", "income"})
    got = part_facts(info, [chunk], BY_NAME["operating income"], {"latin", "america"}, said)
    assert sorted((f.end.year, f.value) for f in got.facts) == [(2023, 3432000000),
                                                                (2024, 3780000000)]
    # "America" alone is said by no column whose header it holds all of
    assert not part_facts(info, [chunk], BY_NAME["revenue"], {"america"},
                          frozenset({"america", "revenue"})).facts


def test_a_payment_is_read_from_the_cash_flow_statement_first():
    """Home Depot prints "Repurchases of common stock" in its equity statement (599, the
    shares' value) before its cash flow statement (649, the cash paid): the payment is the
    cash flow statement's."""
    equity = _chunk(1, "CONSOLIDATED STATEMENTS OF STOCKHOLDERS' EQUITY (Amounts in millions)",
                    [["", "2024", "2023"], ["Repurchases of common stock", "(599)", "(8,074)"]])
    flows = _chunk(2, "CONSOLIDATED STATEMENTS OF CASH FLOWS (Amounts in millions)",
                   [["", "2024", "2023"], ["Cash Flows from Financing Activities:", "", ""],
                    ["Repurchases of common stock", "(649)", "(7,951)"],
                    ["Net cash used in financing activities", "(9,578)", "(16,334)"]])
    info = facts_from_tables(DocumentInfo("x.pdf", "X", FY2024), [equity, flows])
    first = next(f for f in info.facts if f.concept == "us-gaap:PaymentsForRepurchaseOfCommonStock"
                 and f.end.year == 2024)
    assert first.value == 649000000
