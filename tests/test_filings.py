"""Filings in, right numbers out: an inline-XBRL filing's tables, facts and metadata, the
question's scope (company, period), metadata filters, and answers computed from facts."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from ixbrl_sample import write_filing
from paths import FILINGS

from pipeline.rag.answers.answer_checks import withheld
from pipeline.rag.answers.filings.fact_answer import Asked, answer_from_facts
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.periods import PeriodKind
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.vocabulary.formula import BinOp, ItemTerm, Op
from pipeline.rag.answers.vocabulary.line_items import Kind, LineItem
from retriever_trt.documents import DocumentError, Form, load_document
from retriever_trt.documents.model import DocumentMetadata, Fact
from retriever_trt.indexing.ingest import ingest
from retriever_trt.search.filters import MetadataFilter, within_tenant
from retriever_trt.store.document_store import DocumentInfo


@pytest.fixture
def shelf(tmp_path):
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35)
    write_filing(tmp_path, "Gadget Holdings, Inc.", "GDGT", 2024, 5000, 4000, 900, 10)
    write_filing(tmp_path, "Gadget Holdings, Inc.", "GDGT", 2023, 4000, 3500, 800, 5)
    return ingest(tmp_path)[0]


def test_inline_xbrl_table_facts_and_metadata(tmp_path):
    doc = load_document(write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35))
    m = doc.metadata
    assert (m.company, m.ticker, m.form, m.fiscal_year, m.fiscal_period) == \
        ("Widget Corp", "WDGT", Form.TEN_K, 2024, "FY")
    assert m.period_end.isoformat() == "2024-12-31"  # from the facts: no dei period end
    table = doc.tables()[0]
    # "$" and ")" cells join their numbers; spacer columns are gone.
    assert table.rows[2:] == [["Revenue", "$1,234", "$1,000"], ["Cloud revenue", "7", "—"],
                              ["Operating income (loss)", "200", "(35)"]]
    assert table.fact_ids[4] == [None, "oi-1", "oi-0"]
    assert "(In millions)" in table.caption and table.page == 2
    facts = {f.fact_id: f for f in doc.facts}
    assert facts["rev-1"].value == Decimal("1234000000")
    assert facts["oi-0"].value == Decimal("-35000000")  # sign="-"
    assert facts["cloud-1"].dimensions and facts["rev-0"].months == 12


def test_a_number_tagged_twice_shows_in_its_cell_as_each_fact():
    """Johnson Controls wraps its NetIncomeLoss ("Net income attributable to Johnson
    Controls") in a ProfitLoss of its equity statement: both facts show in that cell, so
    the company's own figure is read as shown in a table, not the wrapper's."""
    from lxml import etree

    from retriever_trt.documents.html.html_tables import table_block
    from retriever_trt.documents.model import Document
    from retriever_trt.indexing.chunking import chunk_document

    ix = "http://www.xbrl.org/2013/inlineXBRL"
    table = etree.fromstring(
        f'<table xmlns:ix="{ix}"><tr><td></td><td>2023</td><td>2022</td></tr>'
        '<tr><td>Net income attributable to Acme</td><td>$</td><td>'
        '<ix:nonFraction name="us-gaap:ProfitLoss" id="outer">'
        '<ix:nonFraction name="us-gaap:NetIncomeLoss" id="inner">1,049</ix:nonFraction>'
        '</ix:nonFraction></td><td>379</td></tr></table>')
    block = table_block(table, "", 1)
    assert block.fact_ids[1][1] == "outer" and block.nested_facts == {"outer": ("inner",)}
    doc = Document("acme.htm", "Acme", DocumentMetadata(), [block])
    _, cells = chunk_document(doc, 256, 0)
    assert cells["inner"] == cells["outer"] == ("acme.htm#table0/0", 1, 1)


def test_bad_html_names_the_file(tmp_path):
    empty = tmp_path / "empty.html"
    empty.write_text("")
    with pytest.raises(DocumentError, match="empty.html: empty file"):
        load_document(empty)
    nobody = tmp_path / "nobody.html"
    nobody.write_text("<html><head><title>x</title></head></html>")
    with pytest.raises(DocumentError, match="nobody.html: "):
        load_document(nobody)


def test_question_scoped_to_company_and_period(shelf):
    answerer = FilingAnswerer(shelf)
    q = answerer.parse("What was Gadget's operating income in fiscal 2023?")
    assert q.company == "gadget" and q.periods[0].kind is PeriodKind.YEAR
    scope = answerer.scope(q, None)
    assert scope.doc_ids[0] == "gdgt-10-k-2024-02-01.htm"  # its own year's report first
    short = answerer.answer(q, scope)
    assert (short.short_answer, short.scale) == ("800", "million")
    assert short.citations[0]["row"] == "Operating income (loss)"
    # A caller's filter bounds the scope: the 2024 report alone still shows 2023 (there,
    # as the sample writes it, a loss of 10).
    only = MetadataFilter.from_dict({"fiscal_year": 2024})
    scope = answerer.scope(q, only)
    assert scope.doc_ids == ["gdgt-10-k-2025-02-01.htm"]
    assert answerer.answer(q, scope).short_answer == "-10"


def test_a_company_the_caller_may_not_read_scopes_to_nothing(shelf):
    """Gadget is indexed, but in a collection this caller's key cannot read: the question
    about it is not answered from Widget's filing, the one the caller can read."""
    answerer = FilingAnswerer(shelf)
    q = answerer.parse("What was Gadget's operating income in fiscal 2023?")
    tenant = within_tenant(MetadataFilter(doc_id=("wdgt-10-k-2025-02-01.htm",)),
                           frozenset({"default"}))
    scope = answerer.scope(q, tenant)
    assert scope.doc_ids == [] and len(shelf.rows_where(scope.filter)) == 0
    assert answerer.answer(q, scope).short_answer is None


def test_computed_from_facts_with_derivation(shelf):
    answerer = FilingAnswerer(shelf)
    for question, value, scale in [
        ("What was Widget Corp's operating margin in 2024?", "16.21", "percent"),
        ("What was the percentage change in Widget revenue from 2023 to 2024?", "23.40", "percent"),
        ("How much did Widget's operating income change from 2023 to 2024, in millions?", "235",
         "million"),
        ("What was WDGT revenue in fiscal 2024 in billions?", "1.234", "billion"),
    ]:
        q = answerer.parse(question)
        short = answerer.answer(q, answerer.scope(q, None))
        assert (short.short_answer, short.scale) == (value, scale), question
    q = answerer.parse("What was Widget's operating margin in 2024, to one decimal?")
    assert answerer.answer(q, answerer.scope(q, None)).short_answer == "16.2"


def test_missing_operand_gives_no_number(shelf):
    answerer = FilingAnswerer(shelf)
    q = answerer.parse("What was Widget Corp's free cash flow in 2024?")
    short = answerer.answer(q, answerer.scope(q, None))
    assert short.short_answer is None
    assert "operating cash flow" in short.prose() and "cannot give a number" in short.prose()
    # A year the filing does not show is missing, not the nearest year's value.
    q = answerer.parse("What was Widget Corp's revenue in fiscal 2019?")
    assert answerer.answer(q, answerer.scope(q, None)).short_answer is None


def test_metadata_filter_validation_and_rows(shelf):
    with pytest.raises(ValueError, match="filters: unknown field 'year'"):
        MetadataFilter.from_dict({"year": 2024})
    with pytest.raises(ValueError, match="filters.fiscal_year"):
        MetadataFilter.from_dict({"fiscal_year": "2024"})
    with pytest.raises(ValueError, match="filters.form: unknown form"):
        MetadataFilter.from_dict({"form": "10-X"})
    rows = shelf.rows_where(MetadataFilter.from_dict({"company": "GDGT", "fiscal_year": [2023]}))
    assert {shelf[i].doc_id for i in rows} == {"gdgt-10-k-2024-02-01.htm"}
    scores, ids = shelf.build_bm25().search(["widgets revenue"], 5, rows)
    assert {shelf[i].doc_id for i in ids[0] if i >= 0} <= {"gdgt-10-k-2024-02-01.htm"}


def test_real_filing_lookup_matches_cell_and_fact():
    store = ingest(FILINGS / "aapl-10-k-2024-11-01.html")[0]
    info = store.info["aapl-10-k-2024-11-01.html"]
    assert info.title == "Apple Inc. 10-K FY2024"
    answerer = FilingAnswerer(store)
    q = parse_query("What were Apple's total net sales in fiscal 2023?", answerer.aliases)
    result = answer_from_facts(q, info)
    assert (result.value, result.scale) == (Decimal("383285"), "million")
    short = answerer.answer(q, answerer.scope(q, None))
    cite = short.citations[0]
    assert cite["row"] == "Total net sales" and cite["value"] == "383,285"
    assert "2023" in cite["column"]


def test_query_periods_definitions_and_percent_change():
    q = parse_query("What was X's basic EPS in the first half of 2025?")
    assert (q.periods[0].kind, q.periods[0].months) == (PeriodKind.MONTHS, 6)
    q = parse_query("X's R&D expense for the quarter ended June 28, 2025, in millions?")
    assert (q.periods[0].months, q.periods[0].end.isoformat(), q.unit) == (3, "2025-06-28", "million")
    q = parse_query("X's current ratio (current assets / current liabilities) at the end of 2024?")
    assert q.measure.expression() == BinOp(Op.DIV, ItemTerm("total current assets"),
                                           ItemTerm("total current liabilities"))
    q = parse_query("X's research and development expense as a percentage of revenue in 2024?")
    assert q.measure.denominator == "revenue" and q.measure.scale.value == "percent"
    assert parse_query("By what percentage did X's gross profit change in 2025?").operation == \
        "percent_change"


@pytest.mark.parametrize(("question", "measure"), [
    # One half of a compound name is no measure of its own: "sales and marketing" is an
    # expense, not sales; the filing's labels resolve it (measure_match).
    ("X's sales and marketing expense in 2024?", None),
    ("X's marketing and sales expense in 2024?", None),
    # "accrued liabilities" is a name of its own: narrowed, not total liabilities (below)
    ("X's accounts payable and accrued liabilities at the end of 2024?", "total liabilities"),
    # Two measures joined are each a measure: the first named by its longest phrase stands.
    ("X's revenue and net income in 2024?", "net income"),
    ("X's net sales in 2024?", "revenue"),
    ("X's research and development expense in 2024?", "research and development expense"),
    # the verb as analysts write it
    ("How much did X spend buying back its common stock in 2024?", "share repurchases"),
])
def test_half_of_a_compound_name_is_no_measure(question, measure):
    got = parse_query(question).measure
    assert (got.name if got else None) == measure


@pytest.mark.parametrize(("question", "modifiers"), [
    ("X's deferred revenue at the end of 2024?", {"deferred"}),
    ("X's accounts payable and accrued liabilities at the end of 2024?", {"accrued"}),
    ("X's other non-current liabilities at the end of 2024?", {"noncurrent"}),
    ("X's non-GAAP net income in 2024?", {"non"}),
    # Words that leave the figure whole: a year, "total", "annual", the company, a segment cue.
    ("X's total net sales in fiscal 2024?", set()),
    ("What was the FY2024 revenue of X?", set()),
    ("X's annual revenue in 2024?", set()),
    ("X revenue in 2024?", set()),
    ("X's Latin America segment operating income for 2024?", set()),
    # A part's name is a modifier too: the filing's members or rows must name it.
    ("X's iPhone net sales in 2024?", {"iphone"}),
    # a part "within" the measure, and "gross" after its name (Marathon's construction in
    # progress and gross property had been its net property and equipment)
    ("Construction in progress within X's property and equipment at June 30, 2023?",
     {"construction", "progress"}),
    ("X's property and equipment, gross at December 31, 2023?", {"gross"}),
    # a balance's part "in" it; "in" after a change or a payment names none
    ("The carrying amount of X's mining rigs in property and equipment at December 31, 2023?",
     {"mining", "rig"}),
    ("How much did X invest in property and equipment in 2023?", set()),
    ("What was the increase in X's property and equipment in 2023?", set()),
    ("What was the increase in X's revenue in 2023?", set()),
])
def test_words_narrowing_the_measure(question, modifiers):
    assert parse_query(question, {"x": "x"}).modifiers == modifiers


def test_a_measure_narrowed_past_the_filings_labels_gets_no_number(shelf):
    answerer = FilingAnswerer(shelf)
    for question in ("What was Gadget's deferred revenue in fiscal 2024?",
                     "What were Gadget's accrued liabilities at the end of fiscal 2024?"):
        q = answerer.parse(question)
        got = answerer.answer(q, answerer.scope(q, None))
        assert got.short_answer is None and "has no figure labelled" in got.missing, got.prose()


def test_the_filing_named_after_its_form_and_units_written_short():
    q = parse_query("Per the five-year summary in X's 10-K for fiscal 2021, what was net "
                    "income in fiscal 2017? $M.")
    assert (q.filing_year, [p.year for p in q.periods]) == (2021, [2017])
    assert "m" not in q.measure_words
    q = parse_query("According to X's 10-K for 2021, what were its revenues in 2018? $ millions.")
    assert (q.filing_year, [p.year for p in q.periods], q.unit) == (2021, [2018], "million")
    q = parse_query("What was X's operating loss in 2022? Give USD billions to two decimals.")
    assert (q.unit, q.decimals) == ("billion", 2)
    q = parse_query("What was X's cash flow from operating activities in 2021? $ millions "
                    "(negative if cash was used).")
    assert "negative" not in q.measure_words
    # growth asked in percent, the unit its own sentence: a percent change
    q = parse_query("What was X's year-over-year revenue growth in 2022 versus 2021? Percent, "
                    "one decimal (negative for a decline).")
    assert q.operation is Operation.PERCENT_CHANGE
    assert parse_query("How much did X's revenue change from 2021 to 2022? $ millions."
                       ).operation is Operation.CHANGE


def test_an_operand_narrowing_its_item_is_the_filings_label():
    # "total automotive cost of revenues" is no cost of revenue; "total" narrows nothing;
    # "compute (A - B) / A" defines the ratio
    m = parse_query("X's automotive gross margin for 2019, computed as (total automotive "
                    "revenues - total automotive cost of revenues) / total automotive "
                    "revenues. Percent, one decimal.").measure
    assert m.expression().left.right == ItemTerm("phrase:total automotive cost of revenues")
    m = parse_query("For X's fiscal 2022, compute (total net revenue - total cost of revenue) "
                    "/ total net revenue. Percent, one decimal.").measure
    assert m.expression() == BinOp(Op.DIV, BinOp(Op.SUB, ItemTerm("revenue"),
                                                 ItemTerm("cost of revenue")),
                                   ItemTerm("revenue"))


def test_a_ratio_the_question_writes_out_with_operands_the_vocabulary_lacks():
    # "(A / B)" and an unbracketed "A divided by B" are the ask; an operand the vocabulary
    # lacks is a phrase the filing's labels read
    m = parse_query("What share of X's 2017 operating revenues was electric revenue "
                    "(electric / total operating revenues)? Percent, one decimal.").measure
    assert m.expression() == BinOp(Op.DIV, ItemTerm("phrase:electric"),
                                   ItemTerm("phrase:total operating revenues"))
    m = parse_query("X's 2017 interest coverage, operating income divided by interest "
                    "expense? Two decimals.").measure
    assert m.expression() == BinOp(Op.DIV, ItemTerm("operating income"),
                                   ItemTerm("phrase:interest expense"))
    # an operand naming a ratio of the vocabulary is the filing's line of that name, an
    # amount: "operating margin / total revenue" is no percentage divided by revenue again
    m = parse_query("X's operating margin as a share of total revenue in 2016 (operating "
                    "margin / total revenue), in percent to one decimal").measure
    assert m.expression() == BinOp(Op.DIV, ItemTerm("phrase:operating margin"),
                                   ItemTerm("revenue"))
    # a period in parentheses is no ratio, and a metric the question names stands
    m = parse_query("X's revenue plus Y's total net sales (both quarters ended in late "
                    "June/July 2025), combined?").measure
    assert m is None or m.name == "revenue"
    # "Inc." ends no definition
    m = parse_query("X's return on equity in fiscal 2021, defined as net income attributable "
                    "to X, Inc. divided by year-end total shareholders' equity?").measure
    assert m.expression() == BinOp(Op.DIV, ItemTerm("net income"),
                                   ItemTerm("total shareholders' equity"))
    m = parse_query("X's effective tax rate for 2025: provision for taxes on income divided "
                    "by earnings before provision for taxes, percent.").measure
    assert m.name == "effective tax rate"


def test_a_question_naming_a_filing_goes_to_retrieval(shelf):
    answerer = FilingAnswerer(shelf)
    assert answerer.names_a_filing(answerer.parse("Gadget's SG&A last year?"))
    assert answerer.names_a_filing(answerer.parse("What were the net sales in fiscal 2024?"))
    assert not answerer.names_a_filing(answerer.parse("What is the capital of Spain?"))
    assert not answerer.names_a_filing(answerer.parse("hi there, how are you?"))


def _year_fact(fact_id: str, concept: str, value: str) -> Fact:
    return Fact(fact_id, concept, Decimal(value), "USD", date(2024, 12, 31), date(2024, 1, 1),
                scale=6)


def test_a_loss_asked_is_its_size_and_a_printed_fact_wins_over_prose():
    """"How large was the net loss" is answered 648, as the statement prints it, though the
    tag is NetIncomeLoss -648e6; "net income" keeps the sign. A concept printed in a
    statement table wins over another the vocabulary lists first but only the prose tags."""
    meta = DocumentMetadata("Widget Corp", "WDGT", Form.TEN_K, 2024, "FY", date(2024, 12, 31))
    facts = [_year_fact("a", "us-gaap:NetIncomeLoss", "-648e6"),
             _year_fact("b", "us-gaap:DepreciationDepletionAndAmortization", "1e9"),
             _year_fact("c", "us-gaap:DepreciationAndAmortization", "3477e6")]
    info = DocumentInfo("w.htm", "Widget Corp 10-K FY2024", meta, facts,
                        {"a": ("w-1", 1, 1), "c": ("w-2", 1, 1)})

    def value(question: str) -> Decimal:
        return answer_from_facts(parse_query(question, {"widget": "widget"}), info).value

    assert value("How large was Widget's net loss in 2024, in millions?") == Decimal("648")
    assert value("What was Widget's net income in 2024, in millions?") == Decimal("-648")
    assert value("Widget's D&A in 2024, in millions?") == Decimal("3477")


def test_cash_burned_is_a_flow_and_its_size():
    """"How much cash did operations burn ... the operating cash outflow" is the operating
    cash flow's size (tagged -12,080); cash burned with no flow named is no cash balance."""
    meta = DocumentMetadata("Widget Corp", "WDGT", Form.TEN_K, 2024, "FY", date(2024, 12, 31))
    facts = [_year_fact("a", "us-gaap:NetCashProvidedByUsedInOperatingActivities", "-12080e6"),
             Fact("b", "us-gaap:CashAndCashEquivalentsAtCarryingValue", Decimal("13801e6"),
                  "USD", date(2024, 12, 31), scale=6)]
    info = DocumentInfo("w.htm", "Widget Corp 10-K FY2024", meta, facts, {})

    def result(question: str):
        return answer_from_facts(parse_query(question, {"widget": "widget"}), info)

    got = result("How much cash did Widget's operations burn in 2024? Give the operating cash "
                 "outflow in $ millions.")
    assert got.value == Decimal("12080")
    assert result("What was Widget's operating cash flow in 2024?").value == Decimal("-12080")
    burned = "How much cash did Widget burn in 2024?"
    balance = result(burned)
    assert [f.fact_id for f in balance.facts] == ["b"]
    assert withheld(burned, balance.scale, balance.facts, False) is not None
    assert withheld("What was Widget's cash at the end of 2024, from the cash flow statement?",
                    balance.scale, balance.facts, False) is None


def test_a_balance_date_asked_of_flows_alone_gets_no_number():
    """A balance's date asked where every candidate the labels give is a flow: no number,
    and what is missing said (the rules had raised on it)."""
    meta = DocumentMetadata("Widget Corp", "WDGT", Form.TEN_K, 2024, "FY", date(2024, 12, 31))
    info = DocumentInfo("w.htm", "Widget Corp 10-K FY2024", meta,
                        [_year_fact("a", "x:WidgetFlow", "5e6")], {})
    flow = LineItem("widget flow", ("x:WidgetFlow",), Kind.FLOW)
    got = answer_from_facts(parse_query("What was Widget's total assets as of December 31, 2024?",
                                        {"widget": "widget"}), info,
                            Asked(labelled=(flow,), vocabulary=False))
    assert got.value is None and got.missing == "a balance at the date asked"


def test_the_vocabularys_name_meets_a_concept_it_does_not_list(tmp_path):
    """Widget tags its R&D as ResearchAndDevelopmentExpenseSoftware...: "R&D" names the
    vocabulary's research and development expense, whose name meets that label."""
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35, rd=60)
    answerer = FilingAnswerer(ingest(tmp_path)[0])
    q = answerer.parse("What was Widget's R&D spend in fiscal 2024, in millions?")
    assert answerer.answer(q, answerer.scope(q, None)).short_answer == "60"


def test_gross_margin_of_a_filing_that_tags_no_gross_profit(tmp_path):
    """Widget prints revenue and cost of revenue, no gross profit (as Amazon, Alphabet and
    Walmart do): its gross margin is revenue less cost of revenue over revenue."""
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35, cost=500)
    answerer = FilingAnswerer(ingest(tmp_path)[0])
    q = answerer.parse("What was Widget's gross margin in fiscal 2024? Percent, one decimal.")
    got = answerer.answer(q, answerer.scope(q, None))
    assert (got.short_answer, got.scale) == ("59.5", "percent")  # 734 / 1,234
    assert {c["fact"]["concept"] for c in got.citations} == {"us-gaap:Revenues",
                                                           "us-gaap:CostOfRevenue"}
    # the amount is the filing's gross profit, which it does not report: no number
    q = answerer.parse("What was Widget's gross profit in fiscal 2024?")
    assert answerer.answer(q, answerer.scope(q, None)).short_answer is None


def test_several_quarters_each_with_its_year_in_order():
    q = parse_query("NVIDIA Q2 FY26 revenue plus Apple's fiscal Q3 2025 net sales?")
    assert [(p.quarter, p.year) for p in q.periods] == [(2, 2026), (3, 2025)]
    q = parse_query("How much did X's revenue change from Q2 2024 to the first quarter of 2025?")
    assert [(p.quarter, p.year) for p in q.periods] == [(2, 2024), (1, 2025)]


def test_a_count_no_fact_gives_is_left_to_the_prose(tmp_path):
    """A head count tagged for the prior year only: the year asked is refused by the facts
    with no reason that stops the text (Netflix's 302 million paid memberships, stated in its
    prose only, had been refused so), and the tagged year is the fact's."""
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35,
                 staff=(125665, 120000))
    answerer = FilingAnswerer(ingest(tmp_path)[0])

    def ask(question: str):
        query = answerer.parse(question)
        return answerer.answer(query, answerer.scope(query, None))

    got = ask("How many employees did Widget Corp have at the end of 2024?")
    assert (got.short_answer, got.missing) == (None, None)
    assert ask("How many employees did Widget Corp have at the end of 2023?").short_answer == \
        "120000"


def test_a_year_to_date_asked_is_the_quarterly_reports():
    """"Marathon's net loss per share for the first half of 2023" had gone to its 2023 10-K,
    which reports no six months, past the Q2 10-Q that does."""
    from types import SimpleNamespace

    from pipeline.rag.answers.filings.scope import choose_filings

    def info(form: Form, period: str, end: date) -> SimpleNamespace:
        return SimpleNamespace(metadata=DocumentMetadata(
            "Marathon Digital Holdings, Inc.", "MARA", form, 2023, period, end))

    docs = {"10-K": info(Form.TEN_K, "FY", date(2023, 12, 31)),
            "Q2": info(Form.TEN_Q, "Q2", date(2023, 6, 30)),
            "Q3": info(Form.TEN_Q, "Q3", date(2023, 9, 30))}
    aliases = {"marathon": "marathon digital"}
    for question, first in (("Marathon's net loss per share for the first half of 2023?", "Q2"),
                            ("Marathon's revenue for the first nine months of 2023?", "Q3"),
                            ("Marathon's revenue in 2023?", "10-K")):
        assert choose_filings(parse_query(question, aliases), docs)[0] == first, question


def test_a_word_of_the_segment_said_again_before_it_narrows_the_figure():
    """"Networking revenue within NVIDIA's Compute & Networking segment" had been the
    segment's whole revenue: "networking" names the segment, and, said again before "within"
    it, a part of its revenue, which NVIDIA does not tag (no number)."""
    store = ingest(FILINGS / "nvda-10-k-2025-02-26.html")[0]
    answerer = FilingAnswerer(store)
    whole = answerer.parse("What was the revenue of NVIDIA's Compute & Networking segment in "
                           "fiscal 2025?")
    assert answerer.answer(whole, answerer.scope(whole, None)).short_answer == "116193"
    part = answerer.parse("Networking revenue within NVIDIA's Compute & Networking segment in "
                          "fiscal 2025?")
    short = answerer.answer(part, answerer.scope(part, None))
    assert short.short_answer is None and short.missing
    # the one part named twice, no "within": still the part's whole (AT&T's "broadband
    # revenues (the Broadband service line)")
    twice = answerer.parse("NVIDIA's Compute & Networking revenue in fiscal 2025 (the Compute & "
                           "Networking segment)?")
    assert answerer.answer(twice, answerer.scope(twice, None)).short_answer == "116193"


def test_a_share_of_a_part_within_a_part_is_no_share_of_the_company():
    """"What percentage of Danaher's Biotechnology segment sales went to Western Europe" had
    been the crossed fact over the company's sales (9.62, a wrong number); the whole is the
    segment's, which the words alone do not tell from the region's: no number. A part alone
    is still its share of the company's whole."""
    from types import SimpleNamespace

    segment = ("us-gaap:StatementBusinessSegmentsAxis", "w:BiotechnologyMember")
    region = ("srt:StatementGeographicalAxis", "w:WesternEuropeMember")

    def revenue(fact_id: str, value: str, *dimensions) -> Fact:
        return Fact(fact_id, "us-gaap:Revenues", Decimal(value), "USD", date(2024, 12, 31),
                    date(2024, 1, 1), scale=6, dimensions=dimensions)

    facts = [revenue("t", "23875e6"), revenue("s", "6759e6", segment),
             revenue("g", "5457e6", region), revenue("sg", "2296e6", segment, region)]
    meta = DocumentMetadata("Widget Corp", "WDGT", Form.TEN_K, 2024, "FY", date(2024, 12, 31))
    info = DocumentInfo("w.htm", "Widget Corp 10-K FY2024", meta, facts, {})
    answerer = FilingAnswerer(SimpleNamespace(info={"w.htm": info}, document=lambda d: [],
                                              generation=0))

    def short(question: str):
        query = answerer.parse(question)
        return answerer.answer(query, answerer.scope(query, None)).short_answer

    assert short("What percentage of Widget's 2024 Biotechnology segment sales went to "
                 "customers in Western Europe?") is None
    assert short("What share of Widget's 2024 sales came from Western Europe?") == "22.86"


def test_a_part_named_before_within_is_the_part_not_a_narrower_figure():
    """JCI's "Fire & Security product revenue within its Global Products segment" names the
    member Global Products Fire & Security before "within": its "product", said again in
    "Global Products", narrows nothing (it had lost its number); WBA's "Pharmacy sales within
    the U.S. Retail Pharmacy segment" says nothing but "pharmacy" before "within"."""
    from pipeline.rag.answers.filings.asked import _said_again_within

    jci = frozenset({"fire", "security", "product", "global"})
    assert _said_again_within("Fire & Security product revenue within JCI's Global Products "
                              "segment for fiscal 2024?", jci) == set()
    wba = frozenset({"us", "retail", "pharmacy"})
    assert _said_again_within("Pharmacy sales within WBA's U.S. Retail Pharmacy segment in "
                              "fiscal 2024?", wba) == {"pharmacy"}
    assert _said_again_within("U.S. Retail Pharmacy segment sales in fiscal 2024?", wba) == set()
