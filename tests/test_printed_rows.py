"""The filing's own row, named as the question names the measure, before the vocabulary's
concept printed on another row; an expense row printed without the word; a change told by
its verb; an amount asked "how many millions". Real 10-Qs of
tests/data/filings: J&J tags "Research and development expense" with
ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost and uses the vocabulary's
ResearchAndDevelopmentExpense for nothing on its statements (its 10-K puts it on the
in-process charges); Tesla prints "Net income" beside "Net income attributable to common
stockholders"."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from filing_shelf import ask, shelf_answerer

from pipeline.rag.answers.answer_checks import asks_count
from pipeline.rag.answers.company_names import owned_names
from pipeline.rag.answers.filings.fact_labels import FactLabels, qualifiers, split_name
from pipeline.rag.answers.filings.measure_match import (
    Preference,
    labelled_items,
    phrase_items,
    printed_as_named,
    quoted_rows,
    rows_named_as,
)
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question import operation
from pipeline.rag.answers.vocabulary.line_items import BY_NAME, Kind, LineItem
from retriever_trt.documents.model import Fact

SHELF = ("jnj-10-q-2025-07-24.html", "tsla-10-q-2025-07-24.html")


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return shelf_answerer(tmp_path_factory.mktemp("shelf"), SHELF)


@pytest.mark.parametrize("question, value, scale", [
    # the income statement's row of that name, not the in-process payments (369) that
    # "spend" would prefer
    ("How much did Johnson & Johnson spend on research and development in the six months "
     "ended June 29, 2025?", "6741", "million"),
    ("What was Johnson & Johnson's research and development expense for the fiscal second "
     "quarter of 2025?", "3516", "million"),
    # the vocabulary's row names net income too, whose share it is aside
    ("What was Tesla's net income in the second quarter of 2025?", "1172", "million"),
    # "a year earlier", "the year-ago quarter": the period named, a year back
    ("What were Tesla's total revenues in the same quarter a year earlier than the quarter "
     "ended June 30, 2025?", "25500", "million"),
    ("What was Tesla's revenue in the year-ago quarter of Q2 2025?", "25500", "million"),
    # "per common share" is the vocabulary's per share; "Inc.'s" is no word "s"
    ("What were Tesla Inc.'s diluted earnings per common share in the three months ended "
     "June 30, 2025?", "0.33", ""),
])
def test_the_row_named_as_asked(answerer, question, value, scale):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, scale), got.prose()


@pytest.mark.parametrize("question", [
    "By how much did Johnson & Johnson's sales to customers rise from 2024 to 2025?",
    "How much did Walmart's operating income grow from fiscal 2024 to fiscal 2025?",
    "How much did the company's debt fall between 2023 and 2024?",
])
def test_a_change_told_by_its_verb(question):
    assert operation(question).operation == Operation.CHANGE


@pytest.mark.parametrize("question", [
    "How much did J&J's sales to customers grow from the second quarter of 2024 to the second "
    "quarter of 2025?",
    # "how many millions of dollars" asks for an amount, not a count of things
    "By how many millions of dollars did J&J's sales to customers increase in the second "
    "quarter of 2025 from the second quarter of 2024?",
])
def test_a_change_told_by_its_verb_is_computed(answerer, question):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == ("1296", "million"), got.prose()


def test_how_many_of_a_unit_is_no_count():
    assert not asks_count("By how many millions of dollars did revenue rise?")
    assert not asks_count("How many times did operating income cover interest expense?")
    assert asks_count("How many stores did Home Depot operate?")


def test_the_business_a_company_owns_names_the_company():
    """"Google parent Alphabet": Google names Alphabet, not a segment of its figures."""
    assert owned_names("What was Google parent Alphabet's net income?") == {"google"}
    assert owned_names("Net income of Alphabet, the parent company of Google?") == {"google"}
    assert owned_names("What was Alphabet's Google Cloud revenue?") == set()


def _flow(concept: str, value: str) -> Fact:
    return Fact(concept, concept, Decimal(value), "USD", date(2025, 6, 30), date(2025, 4, 1))


def test_an_expense_a_statement_prints_without_the_word():
    """UNP prints "Fuel" under its operating expenses: "fuel expense" is that row. A
    balance ("Digital assets") or an income is no expense of that name."""
    facts = [_flow("us-gaap:FuelCosts", "576e6"), _flow("x:FuelSurchargeRevenue", "9e6"),
             Fact("x:DigitalAssets", "x:DigitalAssets", Decimal("1235e6"), "USD",
                  date(2025, 6, 30))]
    rows = {"us-gaap:FuelCosts": "Fuel", "x:FuelSurchargeRevenue": "Fuel surcharge",
            "x:DigitalAssets": "Digital assets"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2025"))
    found = labelled_items(frozenset({"fuel", "expense"}), labels, facts)
    assert [i.concepts for i in found] == [("us-gaap:FuelCosts",)]
    assert labelled_items(frozenset({"digital", "asset", "expense"}), labels, facts) == []


def test_a_statement_row_saying_only_the_measure_comes_first():
    """Travelers' balance sheet prints "Debt" (8,031) and "Fixed maturities, available for
    sale" (72,584), whose concept's name says "debt" too: "debt" had been the latter."""
    def balance(concept: str, value: str) -> Fact:
        return Fact(concept, concept, Decimal(value), "USD", date(2023, 9, 30))

    facts = [balance("us-gaap:AvailableForSaleSecuritiesDebtSecurities", "72584e6"),
             balance("us-gaap:DebtLongtermAndShorttermCombinedAmount", "8031e6")]
    rows = {facts[0].concept: "Fixed maturities, available for sale, at fair value",
            facts[1].concept: "Debt"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2023"), lambda f: True)
    found = labelled_items(frozenset({"debt"}), labels, facts)
    assert found[0].concepts == ("us-gaap:DebtLongtermAndShorttermCombinedAmount",)


def test_an_operand_the_filing_tags_otherwise_is_read_by_its_label():
    """Colgate tags its "Dividends paid" with no concept of the vocabulary's: its payout
    ratio, "dividends paid (cash flow) as a % of net income", had read no operand."""
    facts = [_flow("x:CashDividendsPaid", "1749e6"), _flow("us-gaap:NetIncomeLoss", "2300e6")]
    rows = {"x:CashDividendsPaid": "Dividends paid", "us-gaap:NetIncomeLoss": "Net income"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2025"), lambda f: True)
    query = parse_query("Dividend payout for Acme in 2025: dividends paid (cash flow) as a % of "
                        "net income. One decimal.")
    found = phrase_items(query.measure, labels, facts)
    assert found["dividends paid"].concepts == ("x:CashDividendsPaid",)
    assert "net income" not in found  # the vocabulary's own concept is tagged


def test_an_operand_tagged_only_in_a_note_is_read_by_its_statements_label():
    """Chevron tags us-gaap:LongTermDebt only with a fair-value note's dimension and prints
    its balance sheet's "Long-term debt" otherwise; JCI prints its dividends paid as "Payment
    of cash dividends", whose "cash" narrows nothing: both operands had read no figure."""
    def balance(concept: str, value: str, *dimensions: tuple[str, str]) -> Fact:
        return Fact(concept + str(len(dimensions)), concept, Decimal(value), "USD",
                    date(2023, 6, 30), dimensions=dimensions)

    note = ("us-gaap:FairValueByMeasurementBasisAxis", "us-gaap:CarryingReportedAmountMember")
    facts = [balance("us-gaap:LongTermDebt", "15300e6", note),
             balance("x:LongTermDebtIncludingCurrent", "20245e6"),
             _flow("us-gaap:PaymentsOfDividendsCommonStock", "1000e6")]
    rows = {"x:LongTermDebtIncludingCurrent": "Long-term debt", "us-gaap:LongTermDebt": "Debt",
            "us-gaap:PaymentsOfDividendsCommonStock": "Payment of cash dividends"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2023"), lambda f: True)
    query = parse_query("Acme leverage: long-term debt / payment of cash dividends, x")
    found = phrase_items(query.measure, labels, facts)
    assert found["long-term debt"].concepts == ("x:LongTermDebtIncludingCurrent",)
    assert found["phrase:payment of cash dividends"].concepts == \
        ("us-gaap:PaymentsOfDividendsCommonStock",)


def test_a_count_of_people_is_no_amount_of_money_shares_or_age():
    """Stryker tags "Employee related liabilities" in dollars, Home Depot its employees' age
    in "yearOld" and an employee stock purchase plan's shares, AT&T its cover's number of
    employees: "how many employees" is the count, in a unit of people, never the others."""
    count = "dei:EntityNumberOfEmployees"
    others = {"us-gaap:EmployeeRelatedLiabilitiesCurrent": "USD",
              "us-gaap:StockIssuedDuringPeriodSharesEmployeeStockPurchasePlans": "shares",
              "hd:AgeOfEmployeeAwardMayBecomeNonForfeitable": "yearOld"}
    facts = [Fact(c, c, Decimal("55"), unit, date(2024, 12, 31)) for c, unit in others.items()]
    facts.append(Fact(count, count, Decimal("140990"), "employee", date(2024, 12, 31)))
    labels = FactLabels.of(facts, lambda f: (split_name(f.concept), "2024"))
    people = frozenset({"employe"})
    found = labelled_items(frozenset({"employee"}), labels, facts, counted=people)
    assert [i.concepts for i in found] == [(count,)]
    alone = FactLabels.of(facts[:-1], lambda f: (split_name(f.concept), "2024"))
    assert labelled_items(frozenset({"employee"}), alone, facts[:-1], counted=people) == []
    # a count of anything: not the dollars nor the shares, the age as it may be
    assert [i.concepts[0] for i in labelled_items(frozenset({"employee"}), alone, facts[:-1],
                                                  counted=frozenset())] == \
        ["hd:AgeOfEmployeeAwardMayBecomeNonForfeitable"]
    assert len(labelled_items(frozenset({"employee"}), alone, facts[:-1])) == 3


def test_a_count_of_shares_is_tagged_in_shares_not_a_price_per_share():
    """Mondelez tags an investee's share price in euros per share: "how many shares were
    outstanding" is its cover's count."""
    price, count = "us-gaap:SharePrice", "dei:EntityCommonStockSharesOutstanding"
    facts = [Fact(price, price, Decimal("14"), "EUR/shares", date(2024, 12, 31)),
             Fact(count, count, Decimal("1293525167"), "shares", date(2025, 1, 31))]
    rows = {price: "Price per share of the investee's shares outstanding",
            count: "Shares outstanding"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2024"))
    words = frozenset({"share", "outstanding"})
    assert (price,) in [i.concepts for i in labelled_items(words, labels, facts)]
    found = labelled_items(words, labels, facts, counted=frozenset({"shar"}))
    assert [i.concepts for i in found] == [(count,)]


def test_a_cash_flow_s_payments_are_cash_though_the_label_says_not():
    """"Cash dividends" paid are Mondelez's "Dividends paid" (PaymentsOfDividends), not the
    equity statement's "Cash dividends declared"."""
    paid, declared = "us-gaap:PaymentsOfDividends", "us-gaap:DividendsCommonStockCash"
    facts = [_flow(paid, "2349e6"), _flow(declared, "2397e6")]
    rows = {paid: "Dividends paid", declared: "Cash dividends declared"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2024"))
    assert "cash" in labels.concept_stems()[paid]
    found = labelled_items(frozenset({"cash", "dividend"}), labels, facts, Preference.PAID)
    assert found[0].concepts == (paid,)


def test_a_weighted_average_is_no_count_at_a_date():
    """Boeing's printed "Weighted average diluted shares" is a year's average: no answer to
    "shares of common stock outstanding per its cover", one to a question saying average."""
    concept = "us-gaap:WeightedAverageNumberOfDilutedSharesOutstanding"
    facts = [Fact(concept, concept, Decimal("647.2e6"), "shares", date(2024, 12, 31),
                  date(2024, 1, 1))]
    labels = FactLabels.of(facts, lambda f: ("Weighted average diluted shares", "2024"))
    assert labelled_items(frozenset({"common", "outstanding", "share", "stock"}), labels,
                          facts) == []
    found = labelled_items(frozenset({"weighted", "average", "diluted", "share"}), labels, facts)
    assert [i.concepts for i in found] == [(concept,)]


def test_a_row_quoted_whole_names_its_figure_not_a_part():
    """TJX's "Cost of sales, including buying and occupancy costs": "buying" and
    "occupancy" quote the row, they name no segment."""
    facts = [_flow("us-gaap:CostOfGoodsAndServicesSold", "39112e6")]
    labels = FactLabels.of(facts, lambda f: (
        "Cost of sales, including buying and occupancy costs", "2025"), lambda f: True)
    quoted = quoted_rows("What was TJX's cost of sales, including buying and occupancy costs, "
                         "in fiscal 2025?", labels)
    assert {"buying", "occupancy"} <= quoted
    assert quoted_rows("What was TJX's cost of sales in fiscal 2025?", labels) == set()


def test_a_vocabulary_item_the_filing_does_not_tag_is_a_row_of_its_name_or_none():
    """Lilly prints no total liabilities: its "Total current liabilities" is not that; TJX
    tags its revenue with a concept the vocabulary lists, and its "Interest (income)
    expense, net" is no revenue."""
    liabilities = BY_NAME["total liabilities"]
    facts = [Fact("a", "us-gaap:LiabilitiesCurrent", Decimal("28376.6e6"), "USD",
                  date(2024, 12, 31)),
             _flow("us-gaap:InterestRevenueExpenseNet", "181e6"),
             _flow("x:CapitalExpendituresIncludingSoftware", "17090e6")]
    rows = {"us-gaap:LiabilitiesCurrent": "Total current liabilities",
            "us-gaap:InterestRevenueExpenseNet": "Interest (income) expense, net",
            "x:CapitalExpendituresIncludingSoftware":
                "Capital expenditures (including capitalized software)"}
    labels = FactLabels.of(facts, lambda f: (rows[f.concept], "2024"), lambda f: True)
    items = [LineItem(c, (c,), Kind.FLOW) for c in rows]
    assert rows_named_as(liabilities, labels, items) == []
    assert rows_named_as(BY_NAME["revenue"], labels, items) == []
    assert [i.concepts[0] for i in rows_named_as(BY_NAME["capital expenditures"], labels,
                                                 items)] == ["x:CapitalExpendituresIncludingSoftware"]


def test_the_segments_total_is_not_the_companys_figure():
    """A fact tagged with OperatingSegmentsMember alone is the segments' total (TJX's
    "Segment profit"); beside a segment's member it only places that member's figure."""
    total = Fact("a", "us-gaap:OperatingIncomeLoss", Decimal("7041e6"), "USD",
                 date(2025, 2, 1), date(2024, 2, 4),
                 dimensions=(("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember"),))
    segment = Fact("b", "us-gaap:OperatingIncomeLoss", Decimal("5e9"), "USD",
                   date(2025, 2, 1), date(2024, 2, 4),
                   dimensions=(("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember"),
                               ("us-gaap:StatementBusinessSegmentsAxis", "x:MarmaxxMember")))
    assert qualifiers(total) == frozenset(total.dimensions)
    assert qualifiers(segment) == {("us-gaap:StatementBusinessSegmentsAxis", "x:MarmaxxMember")}
    # so does the reportable subsegments' member the taxonomy pairs with it (Caterpillar's
    # segment profit had answered no question naming its segment)
    profit = Fact("c", "us-gaap:OperatingIncomeLoss", Decimal("1803e6"), "USD",
                  date(2023, 6, 30), date(2023, 4, 1),
                  dimensions=(*segment.dimensions, ("us-gaap:SubsegmentsConsolidationItemsAxis",
                                                    "us-gaap:ReportableSubsegmentsMember")))
    assert qualifiers(profit) == qualifiers(segment)


def test_the_row_named_as_asked_only_beside_the_vocabularys_own_row():
    """"Net sales" printed for another concept is taken over the vocabulary's revenue only
    where the statements print that revenue under another name ("Total revenues"); a
    concept of the vocabulary's printed on no statement is not known to be another row.
    "Total Walmart shareholders' equity" is the company's, before the total with its
    minority."""
    revenue, equity = BY_NAME["revenue"], BY_NAME["total shareholders' equity"]
    facts = [_flow("us-gaap:Revenues", "680985e6"),
             _flow("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", "674538e6"),
             Fact("c", "us-gaap:StockholdersEquity", Decimal("91013e6"), "USD", date(2025, 1, 31)),
             Fact("d", "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInt"
                       "erest", Decimal("97421e6"), "USD", date(2025, 1, 31))]
    rows = {"us-gaap:Revenues": "Total revenues",
            "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax": "Net sales",
            "us-gaap:StockholdersEquity": "Total Walmart shareholders' equity",
            "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest":
                "Total shareholders' equity"}
    printed = FactLabels.of(facts, lambda f: (rows[f.concept], "2025"), lambda f: True)
    got = printed_as_named("What were Walmart's net sales in fiscal 2025?", revenue, printed, facts)
    assert got is not None and got.concepts == (
        "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax",)
    assert printed_as_named("What was Walmart's total shareholders' equity?", equity, printed,
                            facts, frozenset({"walmart"})) is None
    notes_only = FactLabels.of(facts, lambda f: (rows[f.concept], "2025"),
                               lambda f: f.concept != "us-gaap:Revenues")
    assert printed_as_named("What were Walmart's net sales in fiscal 2025?", revenue,
                            notes_only, facts) is None
