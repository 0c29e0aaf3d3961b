"""Table parsing: values, headers (multi-row, spanning), sections and the table's scale."""

from __future__ import annotations

from decimal import Decimal

import pytest

from retriever_trt.documents.tables import detect_scale, parse_table, parse_value, years_in
from retriever_trt.indexing.ingest import load_corpus


@pytest.mark.parametrize("text, number, percent", [
    ("$  1,452.4", "1452.4", False),
    ("(1,234)", "-1234", False),
    ("$(53)", "-53", False),
    ("$ (12.5)", "-12.5", False),
    ("-2,235", "-2235", False),
    ("12.5%", "12.5", True),
    ("(0.4) %", "-0.4", True),
    ("€ 3,000", "3000", False),
    ("£m 40", None, False),
    ("0.43", "0.43", False),
    (".5", "0.5", False),
    # a footnote mark after the figure is no part of it
    ("$130,000 (1)", "130000", False),
    ("(1,234) (a)", "-1234", False),
    ("12% (2)", "12", True),
])
def test_parse_value(text, number, percent) -> None:
    v = parse_value(text)
    if number is None:
        assert v is None
    else:
        assert v is not None and v.number == Decimal(number) and v.percent is percent


@pytest.mark.parametrize("text", ["", "-", "—", "–", "n/a", "Note 4", "Revenue", "2019 vs 2018"])
def test_empty_and_text_cells_have_no_value(text) -> None:
    assert parse_value(text) is None


def test_years_in_headers() -> None:
    assert years_in("Years Ended September 30, 2019") == [2019]
    assert years_in("2 0 1 8") == [2018]
    assert years_in("FY19") == [2019]
    assert years_in("Total") == []


@pytest.mark.parametrize("text, scale", [
    ("(in thousands)", "thousand"), ("$'000", "thousand"), ("USD ‘000", "thousand"),
    ("(In Millions)", "million"), ("in millions of euros", "million"),
    ("$ in billions", "billion"), ("(inthousands)", "thousand"), ("2019", ""),
    ("$ million", "million"), ("(in 000’s)", "thousand"), ("Number of shares (1,000)", "thousand"),
    ("a loss of $(1,000)", ""), ("$5 million", ""),
    # a rate's denominator is no scale
    ("emissions per $ million of revenue were down", ""), ("cost per thousand views", ""),
    ("cost per thousand views (in millions)", "million"),
])
def test_detect_scale(text, scale) -> None:
    assert detect_scale(text) == scale


def test_multi_row_headers_sections_and_scale() -> None:
    rows = [["", "", "Years Ended September 30,", ""],
            ["", "2019", "2018", "2017"],
            ["Current assets:", "", "", ""],
            ["Cash", "$ 1,452.4", "$ 1,146.2", "(12)"],
            ["Total", "1,496.5", "—", "5%"]]
    t = parse_table(rows, ["The table below presents net sales (in millions):"])
    assert t.n_header == 2
    assert t.column_years == [[], [2019], [2018], [2017]]
    assert "Years Ended September 30," in t.column_headers[2] and "2018" in t.column_headers[2]
    assert t.row_labels[3] == "Cash" and t.parents[3] == "Current assets"
    assert t.parents[4] == "Current assets"
    assert t.scale == "million"
    cash_2017 = t.cell(3, 3)
    assert cash_2017.value.number == Decimal(-12) and cash_2017.text == "(12)"
    assert t.cell(4, 2).value is None  # "—" is empty
    assert t.cell(4, 3).value.percent
    # The header's own scale wins over the paragraphs'.
    assert parse_table([["($ in thousands)", "2019"], ["A", "1"]], ["in millions"]).scale == \
        "thousand"


def test_a_text_row_under_the_years_names_the_scale() -> None:
    # Meta's segment table centres "(in millions, except percentages)" in a row of its own
    rows = [["", "Family of Apps", "", "Reality Labs", ""], ["", "2022", "2021", "2022", "2021"],
            ["", "", "(in millions, except percentages)", "", ""],
            ["Income (loss) from operations", "$ 42,661", "$ 56,946", "$ (13,717)", "$ (10,193)"]]
    assert parse_table(rows).scale == "million"


def test_spanning_header_covers_the_columns_under_it() -> None:
    rows = [["", "2019", "", "2018", ""],
            ["", "$", "%", "$", "%"],
            ["Revenue", "100", "50%", "80", "40%"]]
    t = parse_table(rows)
    assert t.n_header == 2
    assert t.column_years == [[], [2019], [2019], [2018], [2018]]


def test_store_keeps_each_table_on_its_chunks(tatqa_subset) -> None:
    store = load_corpus(tatqa_subset)
    table_chunks = [c for c in store if c.table]
    assert table_chunks and all("/table/" in c.chunk_id for c in table_chunks)
    doc = table_chunks[0].doc_id
    assert store.document(doc)[0].table == table_chunks[0].table
    assert any(not c.table for c in store.document(doc))  # its paragraphs too


def test_a_row_without_label_is_a_total_only_when_it_sums_the_rows_above() -> None:
    rows = [["", "2019", "2018"],
            ["Deposits", "2,338", "1,975"],
            ["Other", "3,197", "3,461"],
            ["", "5,535", "5,436"],
            ["Prepaid rent", "100", "90"],
            ["Prepaid tax", "5", "6"],
            ["", "7", "8"]]
    table = parse_table(rows)
    assert table.row_labels[3] == "Total" and table.cell(3, 1).row == "Total"
    assert table.row_labels[6] == ""  # 7 is not 105: a row that lost its label, not a total
