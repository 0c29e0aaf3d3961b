"""The registrant's name and symbol as real 10-K covers print them
(`retriever_trt/documents/filing/registrant.py`), through `infer_metadata` as the loaders call
it; a former name over its caption and a name atop a stacked caption's column
(`cover_page.py`)."""

from __future__ import annotations

import pypdfium2 as pdfium

from retriever_trt.documents.filing.cover_page import printed_metadata, read_cover, stacked_name
from retriever_trt.documents.filing.metadata import infer_metadata
from retriever_trt.documents.filing.registrant import (
    co_registrants,
    registrant_name,
    short_name,
    trading_symbol,
)
from retriever_trt.documents.model import CoverField
from retriever_trt.documents.pdf.pdf_layout import Line, Segment, page_lines
from tests.typeset_pdf import Text, typeset_pdf

HEAD = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
For the fiscal year ended May 31, 2015
OR
For the transition period from to
"""


def test_the_name_above_the_caption_past_other_fields_values() -> None:
    # Oracle's 2015 layout: the state and tax id printed between the name and its caption
    cover = HEAD + ("Commission file number: 001-35992\nGadget Corporation\nDelaware 54-2185193\n"
                    "(Exact name of registrant as specified in its charter)\n")
    assert registrant_name(cover) == "Gadget Corporation"
    assert infer_metadata(cover).company == "Gadget Corporation"


def test_two_registrants_the_parent_first() -> None:
    cover = HEAD + ("Commission File Number: 1-13087 (Gadget Properties, Inc.)\n"
                    "GADGET PROPERTIES, INC.\nGADGET PROPERTIES LIMITED PARTNERSHIP\n"
                    "(Exact name of Registrants as specified in its charter)\n")
    assert registrant_name(cover) == "GADGET PROPERTIES, INC."
    assert co_registrants(cover) == ["GADGET PROPERTIES LIMITED PARTNERSHIP"]
    # one registrant: the nearest name line, not the file number's line above it
    one = cover.replace("Registrants", "Registrant")
    assert registrant_name(one) == "GADGET PROPERTIES LIMITED PARTNERSHIP"
    assert co_registrants(one) == []


def test_a_name_wrapped_over_two_lines() -> None:
    for first, second in (("THE GADGET WIDGET", "COMPANY"), ("GADGET WIDGETS,", "INC."),
                          ("Gadget &", "Widget Corporation")):
        cover = HEAD + (f"Commission File Number 1-1234\n{first}\n{second}\n"
                        "(Exact name of registrant as specified in its charter)\n")
        assert registrant_name(cover) == f"{first} {second}"


def test_the_name_in_a_row_under_a_column_caption() -> None:
    # PG&E's layout: the caption is a column header, on the line of the other headers
    cover = HEAD + (
        "Commission Exact Name of Registrant State or Other Jurisdiction of IRS Employer\n"
        "File Number as S pecified I n I ts C harter Incorporation or Organization "
        "Identification Number\n"
        "1-12609 GADGET & WIDGET CORPORATION California 94-3234914\n"
        "1-2348 PACIFIC GADGET AND ELECTRIC COMPANY California 94-0742640\n"
        "77 Gadget Street 77 Gadget Street\n(Address of principal executive offices)\n")
    assert registrant_name(cover) == "GADGET & WIDGET CORPORATION"
    # the other rows are the combined report's other registrants; the address ends them
    assert co_registrants(cover) == ["PACIFIC GADGET AND ELECTRIC COMPANY"]
    assert co_registrants(cover.replace("1-2348 PACIFIC GADGET AND ELECTRIC COMPANY "
                                        "California 94-0742640\n", "")) == []


def test_a_name_printed_as_an_image_is_the_one_the_text_writes_most() -> None:
    # Foot Locker's cover: nothing above the caption but the file number
    cover = HEAD + ("Commission File No. 1-10299\n"
                    "(Exact name of registrant as specified in its charter)\n"
                    "New York 13-3513936\n(State or other jurisdiction of\n")
    business = ("Item 1. Business\nGeneral\nGadget Shoes, Inc., incorporated in 1989, sells shoes.\n"
                "Gadget Shoes, Inc. buys most of them from Sneaker Brand, Inc.\n"
                "The Company reports one segment. Gadget Shoes, Inc. and its subsidiaries.\n")
    assert registrant_name(cover + business) == "Gadget Shoes, Inc."
    # with no name that clearly leads, none: a supplier must not become the registrant
    even = business.replace("Sneaker Brand", "Gadget Shoes", 1) + "Sneaker Brand, Inc. " * 3
    assert registrant_name(cover + even) == ""
    assert registrant_name("The Company sells shoes. " * 5) == ""


def test_the_symbol_in_small_capitals_and_from_the_text() -> None:
    table = ("Title of each class Trading Symbol(s) Name of each exchange on which registered\n"
             "Common Stock, par value $0.01 per share OrCL New York Stock Exchange\n")
    assert trading_symbol(table) == "ORCL"
    # Foot Locker's header: "Trading" on the line over "Symbol(s)"
    split = ("Trading\nTitle of each class Symbol(s) Name of each exchange on which registered\n"
             "Common Stock, par value $0.01 FL New York Stock Exchange\n")
    assert trading_symbol(split) == "FL"
    # words before the exchange are no symbol
    assert trading_symbol("Trading Symbol(s)\nCommon Stock The New York Stock Exchange") == ""
    # covers before 2019 print no symbol table: Item 5 names it
    item5 = "Our common stock is traded on the New York Stock Exchange under the symbol “BXP.”"
    assert trading_symbol(item5) == "BXP"
    assert trading_symbol("Shares of Gadget (NYSE: GDG) rose.") == "GDG"
    assert trading_symbol("under the symbol of our brand") == ""


def _line(y: float, *cells: tuple[str, float, float]) -> Line:
    return Line(y, 10.0, tuple(Segment(t, x0, x1) for t, x0, x1 in cells))


def test_a_former_name_over_its_caption_and_none_where_the_cover_has_none() -> None:
    caption = _line(600, ("(Former name, former address and former fiscal year, if changed "
                          "since last report)", 150, 460))
    address = _line(620, ("1455 Market Street, Suite 600, San Francisco, California 94103",
                          150, 460))
    renamed = [address, _line(610, ("Square, Inc.", 260, 320)), caption]
    assert read_cover([renamed])[CoverField.FORMER_NAME].value == "Square, Inc."
    # a blank over the caption: the address line above is no name
    assert CoverField.FORMER_NAME not in read_cover([[address, caption]])
    assert CoverField.FORMER_NAME not in read_cover(
        [[address, _line(610, ("Not Applicable", 260, 320)), caption]])


def test_no_cover_no_registrant() -> None:
    memo = "Apple Inc. sells phones. Apple Inc. sells watches. Apple Inc. sells laptops."
    assert registrant_name(memo) == ""
    assert infer_metadata(memo, "memo.docx").company == ""


def test_the_name_atop_a_column_that_one_caption_stacks_name_address_and_telephone() -> None:
    # Broadcom's layout: one caption under the name, the street, the city and the telephone
    # stacked in the middle column; the state, file number and tax id in columns beside
    # them; the transition line's "to" over the column. Page 2 writes another company's
    # legal name more often than the registrant's own (an acquisition).
    cover = [Text("FORM 10-K", 740, x=270),
             Text("For the fiscal year ended November 3, 2019", 720, x=97),
             Text("TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES "
                  "EXCHANGE ACT OF 1934", 700, x=108),
             Text("For the transition period from", 690, x=63), Text("to", 690, x=215),
             Text("Gadget Chips Inc.", 670, x=262),
             Text("Delaware", 660, x=70), Text("1 Circuit Drive", 660, x=262),
             Text("001-38449", 660, x=455), Text("35-2617337", 660, x=532),
             Text("(State or Other Jurisdiction of", 650, x=40),
             Text("Springfield, CA 95131", 650, x=255), Text("(Commission File", 650, x=450),
             Text("(I.R.S. Employer", 650, x=532),
             Text("Incorporation or Organization)", 642, x=40), Text("Number)", 642, x=460),
             Text("Identification No.)", 642, x=530),
             Text("(408) 433-8000", 630, x=275),
             Text("(Exact Name of Registrant as Specified in Its Charter", 620, x=215),
             Text("Address of Principal Executive Offices", 612, x=235),
             Text("Registrant's Telephone Number, Including Area Code)", 604, x=212)]
    story = [Text("We acquired Widget Holdings, Inc. in 2018. Widget Holdings, Inc. makes chips.",
                  700 - 12 * k, x=40) for k in range(3)]
    pdf = pdfium.PdfDocument(typeset_pdf([cover, story]))
    pages = [page_lines(pdf[k]) for k in range(len(pdf))]
    meta = printed_metadata(pages, "gadget.pdf")
    assert (meta.company, meta.fiscal_year) == ("Gadget Chips Inc.", 2019)
    assert meta.cover[CoverField.FILE_NUMBER].value == "001-38449"
    # the caption alone, with no other field's caption stacked under it: no column read
    assert stacked_name([[line for line in pages[0] if "Address" not in line.text
                          and "Telephone" not in line.text]]) == ""


def test_a_combined_reports_other_registrants_kept_on_the_cover() -> None:
    # PG&E's layout printed: the rows under the header are the report's registrants
    header = [Text("Commission", 700, x=40), Text("Exact Name of Registrant", 700, x=150),
              Text("State or Other Jurisdiction of", 700, x=330), Text("IRS Employer", 700, x=480),
              Text("File Number", 690, x=40), Text("as Specified In Its Charter", 690, x=150),
              Text("Incorporation or Organization", 690, x=330),
              Text("Identification Number", 690, x=480)]
    rows = [Text(text, y, x=x) for y, cells in (
        (675, ("1-12609", "GADGET & WIDGET CORPORATION", "California", "94-3234914")),
        (663, ("1-2348", "PACIFIC GADGET AND ELECTRIC COMPANY", "California", "94-0742640")))
        for text, x in zip(cells, (40, 150, 330, 480), strict=True)]
    address = [Text("77 Gadget Street", 645, x=40), Text("77 Gadget Street", 645, x=330)]
    pdf = pdfium.PdfDocument(typeset_pdf([[Text("FORM 10-K", 740, x=270),
                                           Text("For the fiscal year ended December 31, 2019",
                                                725, x=200), *header, *rows, *address]]))
    meta = printed_metadata([page_lines(pdf[0])], "gw.pdf")
    assert meta.company == "GADGET & WIDGET CORPORATION"
    entry = meta.cover[CoverField.CO_REGISTRANTS]
    assert (entry.value, entry.page) == ("PACIFIC GADGET AND ELECTRIC COMPANY", 1)


def test_the_short_name_a_filing_defines_for_its_registrant() -> None:
    """Boston Properties' 2015 10-K prints no symbol on its cover but defines "BXP" on its
    third page and writes it after; a heading's "(“PARENT”)" once, "the Parent" in lower case
    and another company's short name are none of the registrant's."""
    defined = ("Unless the context otherwise requires, references to “GDG” mean Gadget "
               "Properties, Inc., a Delaware corporation. GDG is the sole general partner. "
               "GDG’s stock option plans ...")
    assert short_name(defined, "GADGET PROPERTIES, INC.") == "GDG"
    assert short_name("Gadget Corp. (“GDG”) ... GDG sells; GDG buys.", "Gadget Corp.") == "GDG"
    assert short_name(defined, "Other Corp.") == ""
    heading = "SCHEDULE I - CONDENSED FINANCIAL INFORMATION OF GADGET CORP. (\"PARENT\")"
    assert short_name(heading, "Gadget Corp.") == ""
    lower = "Gadget Corp. (“PARENT”) ... the Parent's PARENT PARENT debt"
    assert short_name(lower, "Gadget Corp.") == ""


def test_a_cover_without_the_names_caption() -> None:
    """Abbott's and Procter & Gamble's covers print the name under the Commission file number
    with no "(Exact name of registrant ...)" caption; the name is the line there that the
    filing writes again, never an address written once."""
    abbott = (HEAD.replace("May 31, 2015", "December 31, 2024 Commission file number 1-2189")
              + "Gadget Laboratories\nAn Illinois Corporation 36-0698440\n100 Gadget Park Road\n"
              "Securities Registered Pursuant to Section 12(b) of the Act:\n"
              "Gadget Laboratories and its subsidiaries make gadgets.")
    assert registrant_name(abbott) == "Gadget Laboratories"
    pg = (HEAD + "Commission File No. 1-434\nTHE GADGET & WIDGET COMPANY\n"
          "One Gadget & Widget Plaza, Cincinnati, Ohio 45202\n"
          "Securities registered pursuant to Section 12(b) of the Act:\n"
          "The Gadget & Widget Company (the Company) makes gadgets.")
    assert registrant_name(pg) == "THE GADGET & WIDGET COMPANY"
    once = HEAD + "Commission File No. 1-434\nOne Gadget Plaza, Cincinnati\nSecurities registered"
    assert registrant_name(once) == ""
    assert registrant_name("Gadget Laboratories\nGadget Laboratories makes gadgets.") == ""
