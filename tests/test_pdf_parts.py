"""A part's figure (a region, a segment, a product line) read from a printed filing's
tables: under the section, column group or caption that names it, on small tables laid out
as real filings print them and on the cut filings of tests/data/filings/pdf."""

from __future__ import annotations

from datetime import date

import pytest
from filing_shelf import printed_answerer

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.filings.parts.part_rows import part_facts
from pipeline.rag.answers.question_words import tokens
from pipeline.rag.answers.vocabulary.line_items import BY_NAME
from retriever_trt.documents import Form
from retriever_trt.documents.model import DocumentMetadata
from retriever_trt.store.document_store import Chunk, DocumentInfo


@pytest.fixture(scope="module")
def shelf() -> FilingAnswerer:
    return printed_answerer()


def test_a_part_is_read_from_the_section_its_rows_are_under() -> None:
    # Apple's segment note: the region is the section, its rows are the line items.
    rows = [["", "2024", "2023"], ["Greater China:", "", ""], ["Net sales", "$ 66,952", "$ 72,559"],
            ["Operating income", "$ 27,082", "$ 30,328"], ["Japan:", "", ""],
            ["Net sales", "25,052", "24,257"], ["Operating income", "12,454", "11,888"]]
    chunk = Chunk("x.pdf#table0/0", "x.pdf", "X", "",
                  {"table": "0", "caption": "Segment operating performance (in millions)"}, rows)
    info = DocumentInfo("x.pdf", "X", DocumentMetadata(form=Form.TEN_K, fiscal_year=2024,
                                                       period_end=date(2024, 9, 28)))
    china = part_facts(info, [chunk], BY_NAME["operating income"], {"greater", "china"})
    assert [(f.end.year, f.value) for f in china.facts] == [(2024, 27082000000),
                                                            (2023, 30328000000)]
    japan = part_facts(info, [chunk], BY_NAME["revenue"], {"japan"})
    assert [f.value for f in japan.facts] == [25052000000, 24257000000]


def test_a_part_under_the_section_the_question_names() -> None:
    # Oracle's MD&A: "Asia Pacific" under the total's section and under a product line's;
    # the question naming neither product line means the total's.
    rows = [["(Dollars in millions)", "2023", "2022"], ["Total Revenues by Geography:", "", ""],
            ["Americas", "$ 31,226", "$ 23,679"], ["Asia Pacific", "6,619", "6,750"],
            ["Total revenues", "49,954", "42,440"], ["Hardware Revenues:", "", ""],
            ["Americas", "$ 1,702", "$ 1,558"], ["Asia Pacific", "639", "676"]]
    chunk = Chunk("o.pdf#table0/0", "o.pdf", "O", "", {"table": "0", "caption": ""}, rows)
    info = DocumentInfo("o.pdf", "O", DocumentMetadata(form=Form.TEN_K, fiscal_year=2023,
                                                       period_end=date(2023, 5, 31)))
    asked = frozenset(tokens("Oracle's total revenues from the Asia Pacific region"))
    got = part_facts(info, [chunk], BY_NAME["revenue"], {"asia", "pacific"}, asked)
    assert [f.value for f in got.facts] == [6619000000, 6750000000]


def test_a_part_named_by_its_column_group() -> None:
    # Pfizer's revenues by geography: one row, the regions centred over three years each,
    # then change columns headed by the regions again; a caption line over them all.
    rows = [["", "The following presents worldwide revenues by geography:", *[""] * 10],
            ["", "", "Worldwide", "", "", "U.S.", "", "", "International", "", "Worldwide", "U.S."],
            ["(MILLIONS OF DOLLARS)", "2020", "2019", "2018", "2020", "2019", "2018", "2020",
             "2019", "2018", "20/19", "20/19"],
            ["Total revenues", "$ 41,908", "$ 41,172", "$ 40,825", "$ 21,712", "$ 20,593",
             "$ 20,119", "$ 20,196", "$ 20,579", "$ 20,705", "2", "5"],
            ["Pfizer CentreOne", "1,342", "1,731", "926", "390", "524", "400", "952", "1,206",
             "526", "(22)", "(26)"]]
    chunk = Chunk("p.pdf#table0/0", "p.pdf", "P", "",
                  {"table": "0", "caption": "Revenues by Geography"}, rows)
    info = DocumentInfo("p.pdf", "P", DocumentMetadata(form=Form.TEN_K, fiscal_year=2020,
                                                       period_end=date(2020, 12, 31)))
    us = part_facts(info, [chunk], BY_NAME["revenue"], {"us"})
    assert [(f.end.year, f.value) for f in us.facts] == [
        (2020, 21712000000), (2019, 20593000000), (2018, 20119000000)]
    abroad = part_facts(info, [chunk], BY_NAME["revenue"], {"international"})
    assert [f.value for f in abroad.facts] == [20196000000, 20579000000, 20705000000]
    assert not part_facts(info, [chunk], BY_NAME["revenue"], {"europe"}).facts
    # a row's part in every column its group leaves whole: the worldwide ones
    centre = part_facts(info, [chunk], BY_NAME["revenue"], {"centreone"})
    assert [f.value for f in centre.facts] == [1342000000, 1731000000, 926000000]


def test_a_column_group_narrows_a_parts_row_and_a_section_names_the_item() -> None:
    # A region's row under a segment's column is that segment's part of the region; rows
    # under "Franchised revenues:" are franchised revenues of their markets.
    info = DocumentInfo("a.pdf", "A", DocumentMetadata(form=Form.TEN_K, fiscal_year=2021,
                                                       period_end=date(2021, 6, 30)))
    rows = [["", "Year Ended June 30, 2021", "", ""], ["(in millions)", "Flexibles", "Rigid", "Total"],
            ["North America", "$ 3,719", "$ 2,319", "$ 6,038"], ["Net sales", "9,000", "3,000", "12,000"]]
    chunk = Chunk("a.pdf#table0/0", "a.pdf", "A", "",
                  {"table": "0", "caption": "Net sales by geography and segment"}, rows)
    groups = {f.value for f in part_facts(info, [chunk], BY_NAME["revenue"],
                                          {"north", "america"}).facts}
    assert 3719000000 not in groups and 2319000000 not in groups
    rows = [["Dollars in millions", "2022", "2021"], ["Company-operated sales:", "", ""],
            ["U.S.", "$ 2,836", "$ 2,617"], ["Franchised revenues:", "", ""],
            ["U.S.", "$ 6,585", "$ 6,094"], ["International", "5,985", "5,638"]]
    chunk = Chunk("m.pdf#table0/0", "m.pdf", "M", "", {"table": "0", "caption": "Revenues"}, rows)
    info = DocumentInfo("m.pdf", "M", DocumentMetadata(form=Form.TEN_K, fiscal_year=2022,
                                                       period_end=date(2022, 12, 31)))
    got = part_facts(info, [chunk], BY_NAME["revenue"], {"franchised", "us"})
    assert [f.value for f in got.facts] == [6585000000, 6094000000]


def test_a_caption_names_the_part_and_narrows_its_rows() -> None:
    # Verizon's segment tables: a caption naming the item with its own words ("Wireless
    # service revenue") names the part with each row, and narrows the row against a table
    # of the segment's whole revenue; a row of a sub-segment ("Small and Medium Business")
    # is no segment's figure.
    info = DocumentInfo("v.pdf", "V", DocumentMetadata(form=Form.TEN_K, fiscal_year=2021,
                                                       period_end=date(2021, 12, 31)))
    head = ["(dollars in millions) Years Ended December 31,", "2021", "2020"]
    whole = Chunk("v.pdf#table1/0", "v.pdf", "V", "", {"table": "1", "caption": "Consolidated Revenues"},
                  [head, ["Consumer", "$ 95,300", "$ 88,533"], ["Business", "31,042", "30,962"]])
    small = Chunk("v.pdf#table2/0", "v.pdf", "V", "",
                  {"table": "2", "caption": "Operating Revenues"},
                  [head, ["Small and Medium Business", "$ 11,774", "$ 11,132"]])
    wireless = Chunk("v.pdf#table3/0", "v.pdf", "V", "",
                     {"table": "3", "caption": "The following table provides Wireless service "
                                               "revenue for our reportable segments"},
                     [head, ["Consumer", "$ 56,103", "$ 53,605"], ["Business", "12,366", "11,805"],
                      ["Total Wireless service revenue", "$ 68,469", "$ 65,410"]])
    chunks = [whole, small, wireless]
    revenue = BY_NAME["revenue"]
    business = part_facts(info, chunks, revenue, {"business"}, frozenset({"business", "segment"}))
    assert [f.value for f in business.facts] == [31042000000, 30962000000]
    asked = frozenset({"wireless", "service", "consumer", "segment"})
    got = part_facts(info, chunks, revenue, {"wireless", "service", "consumer"}, asked)
    assert [f.value for f in got.facts] == [56103000000, 53605000000]


def test_a_parts_table_naming_no_scale_takes_the_one_its_figures_agree_with() -> None:
    info = DocumentInfo("m.pdf", "M", DocumentMetadata(form=Form.TEN_K, fiscal_year=2022,
                                                       period_end=date(2022, 12, 31)))
    rows = [["", "2022", "2021"], ["Reality Labs", "(13,717)", "(10,193)"]]
    scaled = Chunk("m.pdf#table1/0", "m.pdf", "M", "",
                   {"table": "1", "caption": "Income from operations (in millions)"}, rows)
    bare = Chunk("m.pdf#table2/0", "m.pdf", "M", "",
                 {"table": "2", "caption": "Segment income from operations"}, rows)
    got = part_facts(info, [bare, scaled], BY_NAME["operating income"], set(tokens("Reality Labs")))
    assert {f.value for f in got.facts} == {-13717000000, -10193000000}


def test_a_part_no_printed_row_names_gets_no_number(shelf: FilingAnswerer) -> None:
    # The shared Apple PDF is cut to its statements: no segment note, so no region's figure,
    # and never the company's total in its place.
    q = shelf.parse("What was Apple's Greater China segment operating income in fiscal 2024?")
    got = shelf.answer(q, shelf.scope(q, None))
    assert got.short_answer is None, got.prose()
    assert "no row of its printed tables names it" in got.missing
    q = shelf.parse("What was Apple's Greater China operating income in fiscal 2024?")
    got = shelf.answer(q, shelf.scope(q, None))
    assert got.short_answer is None and "names China" in got.missing, got.prose()
    # "other products" is the rest of a whole: neither the "Products" row (294,866) nor the
    # total answers it
    q = shelf.parse("What were Apple's other products net sales in fiscal 2024?")
    got = shelf.answer(q, shelf.scope(q, None))
    assert got.short_answer is None and "names other" in got.missing, got.prose()


def test_a_part_shown_in_a_statement_is_read_from_the_statement() -> None:
    # McDonald's: an analysis table sets a change beside the figure under a header a year is
    # read from; the income statement's row is the filing's own figure.
    info = DocumentInfo("m.pdf", "M", DocumentMetadata(form=Form.TEN_K, fiscal_year=2022,
                                                       period_end=date(2022, 12, 31)))
    analysis = Chunk("m.pdf#table1/0", "m.pdf", "M", "", {"table": "1", "caption": "Revenues"},
                     [["", "2022", "2021"], ["Revenues from franchised restaurants", "8", "22"]])
    statement = Chunk("m.pdf#table2/0", "m.pdf", "M", "",
                      {"table": "2", "caption": "Consolidated Statement of Income (in millions)"},
                      [["", "2022", "2021"],
                       ["Revenues from franchised restaurants", "$ 14,105.8", "$ 13,085.4"],
                       ["Total revenues", "23,182.6", "23,222.9"]])
    got = part_facts(info, [analysis, statement], BY_NAME["revenue"], {"franchised", "restaurant"})
    assert [f.value for f in got.facts] == [14105800000, 13085400000]
    assert {c[0] for c in got.fact_cells.values()} == {"m.pdf#table2/0"}


def test_a_parts_share_of_a_printed_statement(shelf: FilingAnswerer) -> None:
    # Apple's income statement: "Services" under "Net sales:", 96,169 of 391,035.
    q = shelf.parse("What share of Apple's fiscal 2024 net sales came from services? Percent, "
                    "two decimals.")
    got = shelf.answer(q, shelf.scope(q, None))
    assert (got.short_answer, got.scale) == ("24.59", "percent"), got.prose()
    assert [c["row"] for c in got.citations] == ["Services", "Total net sales"]
