"""Which cells a question's operands are: a section added up, a total the table does not
print, one row across two named columns, a dash as nil, a deduction's share, and, among
reports that fit alike, the one whose row label the question quotes or whose column header
names the measure; a looked-up figure stays a plain number."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question import operation
from pipeline.rag.answers.short_answer import ShortAnswer, answer_question, choose
from pipeline.rag.answers.text.text_answer import answer_from_text, document_paragraphs
from retriever_trt.documents.tables import parse_table
from retriever_trt.store.document_store import Chunk

INTEREST = [["(in thousands)", "2019", "2018"],
            ["Interest expense", "$(2,085)", "(85)"],
            ["Interest income", "-12", "1,200"]]

CARRYFORWARDS = [["(dollars in thousands)", "Last Fiscal Year of Expiration", "Amount"],
                 ["Income tax net operating loss carryforwards:(1)", "", ""],
                 ["Domestic–state", "2039", "$57,299"],
                 ["Foreign", "2039 or indefinite", "$565,609"],
                 ["Tax credit carryforwards:(1)", "", ""],
                 ["Domestic–federal", "2029", "$39,784"],
                 ["Domestic–state", "2027", "$3,313"],
                 ["Foreign(2)", "2027 or indefinite", "$15,345"]]

AGEING = [["30 June 2019", "Current", "0 to 30 days past due", "More than 60 days past due",
           "Total"],
          ["", "$'000", "$'000", "$'000", "$'000"],
          ["Gross carrying amount", "23,762", "2,068", "1,703", "28,320"],
          ["Net receivables", "23,524", "1,965", "1,362", "27,579"]]

INTEREST_BRIDGE = [["($ in millions)", "2019", "2018"],
                   ["Interest expense", "$1,344", "$723"],
                   ["Acquisition-related charges", "(228)", "—"]]


def test_a_looked_up_figure_is_a_plain_number_whatever_its_print() -> None:
    # The /ask contract (api_models.Answer.short_answer): a plain decimal string, sign as
    # '-', though the table prints "(2,085)" and TAT-QA's gold quotes it so.
    table = parse_table(INTEREST)
    got = answer_question("What was the interest expense in 2019?", [table])
    assert got is not None and (got.short_answer, got.scale) == ("-2085", "thousand")
    got = answer_question("What was the interest expense in 2019 and 2018?", [table])
    assert got is not None and got.short_answer == ["-2085", "-85"]
    got = answer_question("What was the change in interest expense from 2018 to 2019?", [table])
    assert got is not None and got.short_answer == "-2000"


def test_the_sum_of_all_of_a_section_adds_its_rows_in_their_figures_column() -> None:
    table = parse_table(CARRYFORWARDS)
    got = answer_question("What was the sum of all Tax credit carryforwards?", [table])
    assert got is not None and (got.short_answer, got.scale) == ("58442", "thousand")
    assert got.derivation == "39,784 + 3,313 + 15,345 = 58442"
    q = operation("What is the total fair value of all the liabilities assumed?")
    assert q.operation.value == "sum" and not q.years and q.of_all
    # "total" with a year is still one row's figure, not a section's
    assert operation("What is the total revenue of all segments in 2019?").operation.value != "sum"


def test_one_row_in_the_two_columns_the_operands_name() -> None:
    table = parse_table(AGEING)
    got = answer_question("What was the difference between total net receivables and current "
                          "net receivables?", [table])
    assert got is not None and (got.short_answer, got.scale) == ("4055", "thousand")
    got = answer_question("How much was the percentage of current net receivables out of "
                          "total net receivables?", [table])
    assert got is not None and (got.short_answer, got.scale) == ("85.3", "percent")


def test_a_change_from_a_dash_is_from_nil() -> None:
    got = answer_question("What is the increase / (decrease) in Acquisition-related charges "
                          "from 2018 to 2019?", [parse_table(INTEREST_BRIDGE)])
    assert got is not None and (got.short_answer, got.scale) == ("-228", "million")
    assert got.derivation == "-228 - 0 = -228"


def test_among_tables_that_fit_alike_the_quoted_label_wins() -> None:
    first = parse_table([["", "2017", "2016"], ["Total Other (Expense) Income, Net", "7,134", "6,002"]])
    second = parse_table([["", "2017", "2016"], ["Total other (expense) income, net", "1,758", "1,100"]])
    q = "What was the Total other (expense) income, net in 2017?"
    got = answer_question(q, [first, second])
    assert got is not None and (got.short_answer, got.table_index) == ("1758", 1)
    # quoting neither, the retrieval order decides, and the other report is named as tied
    got = answer_question(q.lower().capitalize(), [first, second])
    assert got is not None and got.table_index == 0 and got.tied


def test_among_tables_that_fit_alike_the_one_whose_column_names_the_measure_wins() -> None:
    plain = parse_table([["(in millions)", "2019", "2018"],
                         ["Total monetary assets", "4,489", "3,895"]])
    by_currency = parse_table([["(in millions)", "USD denominated 2019", "USD denominated 2018"],
                               ["Total monetary assets", "28,101", "20,683"]])
    got = answer_question("What was the total USD denominated monetary assets in 2019?",
                          [plain, by_currency])
    assert got is not None and (got.short_answer, got.table_index) == ("28101", 1)
    # a header's period words say when, not what: the retrieval order decides
    dated = parse_table([["(in millions)", "December 31, 2019", "December 31, 2018"],
                         ["Total monetary assets", "28,101", "20,683"]])
    got = answer_question("What were the total monetary assets at December 31, 2019?",
                          [plain, dated])
    assert got is not None and (got.short_answer, got.table_index) == ("4489", 0)


def test_a_sentence_restating_a_cell_leaves_the_answer_to_the_table() -> None:
    sentence = "Net sales were $93,662 for the year ended December 31, 2019, a decrease of 9.4%."
    store = SimpleNamespace(document=lambda doc_id: [Chunk("p0/0", "d1", "", sentence)])
    passages = [SimpleNamespace(chunk_id="p0/0", doc_id="d1", score=0.5)]
    q = "What is the net sales for year ended December 31, 2019?"
    text = answer_from_text(parse_query(q), document_paragraphs(store.document("d1")))
    assert text is not None and (text.short_answer, text.scale) == ("93662", "")
    table = ShortAnswer("93662", "thousand", "span", match=0.82)
    assert choose(q, table, text, passages, store) is table
    other = ShortAnswer("103350", "thousand", "span", match=0.82)
    assert choose(q, other, text, passages, store).short_answer == "93662"


def test_a_deduction_s_share_of_its_whole_is_a_magnitude() -> None:
    table = parse_table([["$m", "F19", "F18"], ["EBITDA", "372", "350"],
                         ["Depreciation and amortisation", "(111)", "(100)"],
                         ["EBIT", "261", "250"]])
    got = answer_question("What is the percentage constitution of Depreciation and "
                          "Amortisation in EBITDA in F19?", [table])
    assert got is not None and (got.short_answer, got.scale) == ("29.84", "percent")
    assert got.derivation == "111 / 372 = 29.84%"


def test_a_total_the_table_does_not_print_adds_the_rows_that_name_its_measure() -> None:
    rows = [["", "USD denominated RMB’Million", "Non-USD denominated RMB’Million"],
            ["Monetary assets, current", "27,728", "2,899"],
            ["Monetary assets, non-current", "373", "–"],
            ["Monetary liabilities, current", "(4,273)", "(14,732)"]]
    q = "What was the total USD denominated monetary assets?"
    got = answer_question(q, [parse_table(rows)])
    assert got is not None and (got.short_answer, got.derivation) == ("28101", "27,728 + 373 = 28101")
    # a table that prints the total quotes it
    printed = [*rows, ["Total monetary assets", "28,101", "2,899"]]
    got = answer_question(q, [parse_table(printed)])
    assert got is not None and (got.short_answer, got.answer_type) == ("28101", "span")
    # a section's own row has no figure: its value rows are the parts
    section = [["", "As reported"], ["Assets", ""], ["Prepaid expenses and other current assets", "19,373"],
               ["Deferred income tax assets", "22,626"], ["Other assets", "22,510"]]
    got = answer_question("What were the total Assets as reported?", [parse_table(section)])
    assert got is not None and got.short_answer == "64509"
