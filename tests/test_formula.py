"""Metrics the question defines: the definition parsed into a formula of line items
(pipeline/rag/answers/vocabulary/formula.py), its words kept out of what is asked, and the formula computed
from a real filing's tagged facts with every operand in the derivation."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from paths import FILINGS

from pipeline.rag.answers.answer_checks import withheld
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.vocabulary.definitions import stated_definitions
from pipeline.rag.answers.vocabulary.formula import PHRASE, BinOp, Const, ItemMode, ItemTerm, Op
from retriever_trt.documents.model import Fact
from retriever_trt.indexing.ingest import ingest

DPO = ("What is Apple's FY2024 days payable outstanding (DPO)? DPO is defined as: 365 * "
       "(average accounts payable between FY2023 and FY2024) / (FY2024 COGS + change in "
       "inventory between FY2023 and FY2024). Round your answer to two decimal places.")


def test_a_definition_is_parsed_into_its_formula():
    q = parse_query(DPO)
    assert q.measure.expression() == BinOp(
        Op.DIV,
        BinOp(Op.MUL, Const(Decimal(365)), ItemTerm("accounts payable", ItemMode.AVERAGE)),
        BinOp(Op.ADD, ItemTerm("cost of revenue"), ItemTerm("inventory", ItemMode.CHANGE)))
    # "average" and "change" are the definition's words, not an average or a change asked.
    assert q.operation == Operation.LOOKUP and q.decimals == 2
    growth = parse_query("What is X's FY2024 revenue growth, defined as (FY2024 revenue - "
                         "FY2023 revenue) / FY2023 revenue, in percent?")
    assert growth.measure.expression() == BinOp(
        Op.DIV, BinOp(Op.SUB, ItemTerm("revenue"), ItemTerm("revenue", years_back=1)),
        ItemTerm("revenue", years_back=1))


def test_a_definition_without_arithmetic_is_not_a_formula():
    measure = parse_query("X's year-over-year revenue in 2024, defined as revenue?").measure
    assert measure is None or getattr(measure, "formula", None) is None


def test_an_operand_the_vocabulary_lacks_is_kept_for_the_filings_labels(apple):
    """"brand strength" is no line item: the formula keeps its words, and a filing whose
    labels name no such figure gives no number, saying which operand it lacks."""
    query = apple.parse("What was Apple's quality score, defined as brand strength / revenue, "
                        "in fiscal 2024?")
    assert query.measure.formula == BinOp(Op.DIV, ItemTerm(PHRASE + "brand strength"),
                                          ItemTerm("revenue"))
    got = apple.answer(query, apple.scope(query, None))
    assert got.short_answer is None and 'labelled "brand strength"' in got.missing


@pytest.fixture(scope="module")
def apple() -> FilingAnswerer:
    return FilingAnswerer(ingest(FILINGS / "aapl-10-k-2024-11-01.html")[0])


def _ask(answerer: FilingAnswerer, question: str):
    q = answerer.parse(question)
    return answerer.answer(q, answerer.scope(q, None))


def test_a_defined_metric_is_computed_from_the_facts_it_names(apple):
    # Apple's 10-K FY2024: accounts payable 68,960 and 62,611, cost of sales 210,352,
    # inventories 7,286 and 6,331 ($ millions): 365 * 65,785.5 / 211,307.
    short = _ask(apple, DPO)
    assert short.short_answer == "113.63"
    for operand in ("68960000000", "62611000000", "210352000000", "7286000000", "6331000000"):
        assert operand in short.derivation, short.derivation


def test_a_compound_annual_growth_rate_named_not_defined(apple):
    # Apple's 10-K FY2024: net sales 391,035 and, two years back, 394,328 ($ millions):
    # (391,035 / 394,328) ^ (1/2) - 1 = -0.42%.
    short = _ask(apple, "What was the compound annual growth rate of Apple's total net sales "
                        "from fiscal 2022 to fiscal 2024? Percent to one decimal.")
    assert short.short_answer == "-0.4", short.prose()
    assert "391035000000" in short.derivation and "394328000000" in short.derivation
    q = parse_query("What was Apple's two-year revenue CAGR from FY2022 to FY2024?")
    assert q.measure.name == "compound annual growth rate" and q.operation is Operation.LOOKUP


def test_an_aside_on_what_an_operand_holds_leaves_the_ratio(apple):
    # "(including ...)" says what the line holds: still capex over net sales (9,447 /
    # 391,035), not a descriptive question; an "(excluding ...)" aside would change the line.
    q = parse_query("Apple's fiscal 2024 capex intensity: capital expenditures (including "
                    "purchases of property) as a percent of total net sales, two decimals?")
    assert q.operation == Operation.PROPORTION
    assert _ask(apple, q.text).short_answer == "2.42"


def test_a_difference_in_parentheses_defines_the_amount(apple):
    # Apple's 10-K FY2024: total current assets 152,987, total current liabilities 176,392.
    got = _ask(apple, "What was Apple's working capital (total current assets minus total "
                      "current liabilities) at the end of fiscal 2024? USD millions.")
    assert (got.short_answer, got.scale) == ("-23405", "million"), got.prose()
    assert "152987000000 - 176392000000" in got.derivation
    # Inside a larger formula the parentheses are an operand: the ratio is still asked.
    q = parse_query("What was Apple's gross margin ((total net sales - cost of sales) / total "
                    "net sales) in fiscal 2024, in percent?")
    assert q.measure is not None and q.measure.name != "defined metric"


def test_an_average_balance_reads_the_years_the_definition_names(apple):
    # Net income 93,736; total assets 364,980 and 352,583: the FY2024 ratio needs no FY2022
    # balance, though the question names FY2023.
    short = _ask(apple, "What is Apple's FY2024 return on assets? ROA is defined as: FY2024 net "
                        "income / (average total assets between FY2023 and FY2024). Round your "
                        "answer to two decimal places.")
    assert short.short_answer == "0.26", short.prose()


def test_percent_units_and_year_ranges_are_what_is_asked(apple):
    # Net sales 391,035 against 383,285: +2.02%.
    short = _ask(apple, "What is Apple's year-over-year change in revenue from FY2023 to "
                        "FY2024 (in units of percents and round to two decimal places)?")
    assert (short.short_answer, short.scale) == ("2.02", "percent")
    # Capital expenditures 10,708 / 10,959 / 9,447 over net sales 394,328 / 383,285 / 391,035:
    # the three years' ratios averaged, not the range's two ends.
    short = _ask(apple, "What is Apple's three-year average of capital expenditures as a % of "
                        "revenue from FY2022 to FY2024? Answer in units of percents and round "
                        "to one decimal place.")
    assert (short.short_answer, short.scale) == ("2.7", "percent")
    assert short.derivation.count("months ended") == 3, short.derivation


@pytest.mark.parametrize("question, answer", [
    # DIO 365 * 6,808.5 / 210,352 + DSO 365 * 31,459 / 391,035 - DPO 113.63 (Apple: negative).
    ("What is the FY2024 cash conversion cycle (CCC) for Apple? CCC is defined as: DIO + DSO - "
     "DPO. DIO is defined as: 365 * (average inventory between FY2023 and FY2024) / (FY2024 "
     "COGS). DSO is defined as: 365 * (average accounts receivable between FY2023 and FY2024) "
     "/ (FY2024 Revenue). DPO is defined as: 365 * (average accounts payable between FY2023 "
     "and FY2024) / (FY2024 COGS + change in inventory between FY2023 and FY2024). Round your "
     "answer to two decimal places.", ("-72.46", "")),
    # (Operating income 123,216 + D&A 11,445) / net sales 391,035.
    ("What is the FY2024 unadjusted EBITDA % margin for Apple? Define unadjusted EBITDA as "
     "unadjusted operating income + depreciation and amortization from the cash flow "
     "statement. Answer in units of percents and round to two decimal places.",
     ("34.44", "percent")),
    ("What is the FY2024 working capital ratio for Apple? Define working capital ratio as total "
     "current assets divided by total current liabilities. Round your answer to two decimal "
     "places.", ("0.87", "")),
    # A definition without a division is an amount: 118,254 - 9,447, in the unit asked.
    ("Using only the cash flow statement, what is Apple's FY2024 free cash flow? Define free "
     "cash flow as cash from operations minus capital expenditures. Answer in USD millions.",
     ("108807", "million")),
    # "taken as" and "i.e." open a definition as "defined as" does
    ("Apple's FY2024 owner surplus, taken as cash from operations less capital "
     "expenditures? $ millions.", ("108807", "million")),
    ("Apple's FY2024 owner surplus, i.e. cash from operations less capital expenditures? "
     "$ millions.", ("108807", "million")),
    # an aside on how the average is taken is no part of the formula: 391,035 / avg(45,680, 43,715)
    ("What was Apple's fixed asset turnover in fiscal 2024, defined as revenue / average net "
     "PP&E (the average of the fiscal year's opening and closing balances)? Round to two "
     "decimals.", ("8.75", "")),
    ("What is Apple's FY2024 COGS % margin? Round to two decimal places.", ("53.79", "percent")),
    ("What is the FY2024 capital expenditure to revenue ratio for Apple (in percent)? Round to "
     "two decimal places.", ("2.42", "percent")),
    ("Answer by primarily using the balance sheet: what is the year end FY2024 net PPNE for "
     "Apple? Answer in USD billions.", ("45.68", "billion")),
    ("What is Apple's FY2024 total D&A (as shown in cash flow statement) as a percent of total "
     "revenue? Round to two decimal places.", ("2.93", "percent")),
    # A share count is a line item too, in the unit asked: 15,408,095 thousand shares.
    ("What was Apple's diluted weighted-average share count in fiscal 2024, in millions of "
     "shares?", ("15408.095", "million")),
])
def test_analysts_definitions_and_wordings(apple, question, answer):
    short = _ask(apple, question)
    assert (short.short_answer, short.scale) == answer, short.prose()


def test_a_definition_that_cannot_be_read_is_no_number_never_the_vocabularys(apple):
    """The question defines debt-to-equity with a term the filing has no label for: no
    number, saying so, never the vocabulary's own debt-to-equity (total liabilities 308,030
    over equity 56,950)."""
    short = _ask(apple, "What was Apple's debt-to-equity ratio at September 28, 2024, defined "
                        "as widget obligations (noncurrent) divided by total stockholders' "
                        "equity?")
    assert short.short_answer is None
    assert 'no tagged figure for a figure labelled "widget obligations noncurrent"' in \
        short.missing


def test_words_in_parentheses_after_an_operand_are_more_of_its_name(apple):
    """"long-term debt (noncurrent)" is Apple's "Term debt" under its non-current liabilities
    (85,750), over equity 56,950: the aside had made the formula unreadable."""
    short = _ask(apple, "What was Apple's debt-to-equity ratio at September 28, 2024, defined "
                        "as long-term debt (noncurrent) divided by total stockholders' equity?")
    assert short.short_answer == "1.51", short.prose()
    assert "85750000000 / 56950000000" in short.derivation


@pytest.mark.parametrize("question, answer", [
    # A ratio asked in percent is the percent: 308,030 / 56,950 * 100, not 5.41.
    ("What was Apple's debt-to-equity ratio at September 28, 2024? Answer in percent.",
     ("540.88", "percent")),
    ("What was Apple's current ratio at September 28, 2024?", ("0.87", "")),
    # A year named as such beside a year ended on a date: FY2024 against FY2023 (123,216 over
    # 114,301), not FY2023 against FY2022.
    ("By what percent did Apple's operating income change in FY24 compared with the fiscal "
     "year ended September 30, 2023? Round to one decimal.", ("7.8", "percent")),
])
def test_units_and_periods_a_ratio_or_change_is_asked_in(apple, question, answer):
    short = _ask(apple, question)
    assert (short.short_answer, short.scale) == answer, short.prose()


def test_a_typeset_minus_sign_is_a_minus(apple):
    """"(revenue \u2212 cost of sales) / revenue" had been read as one operand, "cost of sales",
    and answered 38.5% (cost over revenue) for a 61.5% margin."""
    short = _ask(apple, "What was Apple's fiscal 2024 gross margin, computed as (total net "
                        "sales \u2212 cost of sales) / total net sales?")
    assert short.short_answer == "0.46", short.prose()
    assert "(391035000000 - 210352000000) / 391035000000" in short.derivation
    # an en dash between spaces too; and an operand naming two items is never one of them
    q = parse_query("X's margin, computed as (revenue \u2013 cost of sales) / revenue?")
    assert q.measure.expression().left == BinOp(Op.SUB, ItemTerm("revenue"),
                                                ItemTerm("cost of revenue"))


def test_one_half_of_a_joined_item_is_that_half_and_one_figure_twice_is_no_answer(apple):
    """"depreciation plus amortization of intangibles" is two of the filing's figures, not
    "depreciation and amortization" plus more; where both halves read the same figure
    (Apple tags only "Depreciation and amortization"), the doubled 22,890 is no answer."""
    q = parse_query("X's D&A (depreciation plus amortization of intangibles) in 2025?")
    assert q.measure.expression() == BinOp(Op.ADD, ItemTerm(PHRASE + "depreciation"),
                                           ItemTerm(PHRASE + "amortization of intangibles"))
    short = _ask(apple, "What was Apple's fiscal 2024 D&A, computed as depreciation plus "
                        "amortization?")
    assert short.short_answer is None and "read the same figure" in short.missing


def test_an_operand_saying_more_than_its_item_reads_the_filings_label_first():
    """"net income attributable to common stock" is AT&T's row of that name (after preferred
    dividends), the vocabulary's net income only where no label holds its words."""
    q = parse_query("X's payout, computed as common dividends paid divided by net income "
                    "attributable to common stock?")
    assert q.measure.expression().right == ItemTerm(
        PHRASE + "net income attributable to common stock", fallback="net income")
    plain = parse_query("X's margin, computed as net income divided by total revenue?")
    assert plain.measure.expression().left == ItemTerm("net income")


def test_where_an_operand_is_printed_is_no_word_of_it():
    q = parse_query("X's 2024 D&A, i.e. depreciation plus amortization of intangible assets as "
                    "listed in the cash flow statement?")
    assert q.measure.expression().right == ItemTerm(PHRASE + "amortization of intangible assets")


def test_a_sum_of_a_balance_and_a_flow_is_no_figure():
    """Danaher's "amortization of intangible assets" had been read as its intangible assets'
    balance (77,542) and added to a year's depreciation (721)."""
    flow = Fact("f1", "us-gaap:Depreciation", Decimal(721), "USD", date(2024, 12, 31),
                date(2024, 1, 1), ())
    balance = Fact("f2", "us-gaap:IntangibleAssetsNetExcludingGoodwill", Decimal(77542), "USD",
                   date(2024, 12, 31), None, ())
    assert "mix a balance" in withheld("X's D&A?", "million", [flow, balance], False)
    assert withheld("X's D&A?", "million", [flow, flow], False) is not None  # one figure twice
    # a ratio of a flow to a balance is a return on it: no objection
    assert withheld("X's return on assets?", "", [flow, balance], True) is None


@pytest.mark.parametrize("question, formula", [
    # a colon or a dash before a quotient introduces it; the unit and rounding after it, or
    # the bracket it sits in closing, end it
    ("Disney's effective income tax rate for the nine months ended July 1, 2023 — income "
     "taxes on continuing operations / pre-tax income from continuing operations, %, one "
     "decimal.", "income taxes on continuing operations / pre-tax income from continuing "
                 "operations"),
    ("Segment margin at Caterpillar, Q2 2023: segment profit / the segment's total sales "
     "(including inter-segment). %, 1 dp.", "segment profit / the segment's total sales"),
    ("General Dynamics' rate (each = income tax provision / pre-tax income), in percentage "
     "points, one decimal.", "income tax provision / pre-tax income"),
    ("Debt-to-equity for Travelers at September 30, 2023, defined as debt / total "
     "shareholders' equity (x, two decimals).", "debt / total shareholders' equity"),
    # the period in brackets after it, a double dash before the unit (Comcast's first half)
    ("Acme's effective tax rate for the first half of 2023, computed as income tax expense "
     "divided by income before income taxes (six months ended June 30, 2023) -- percent to "
     "one decimal?", "income tax expense divided by income before income taxes"),
])
def test_a_formula_introduced_by_a_colon_or_a_dash_ends_where_it_does(question, formula):
    assert [d.text for d in stated_definitions(question)] == [formula]
    # a colon before no quotient defines nothing
    assert stated_definitions("Net income for Q2 2023: in $ millions") == []
