"""Ways analysts write a question that the rules read into the typed query: "six months to
June 30", "S&M spend", "negative for a loss", "dividends paid", a company named in full in
a comparison, and the words of a stated definition (which name its operands, not a part of
the company)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from filing_shelf import ask, shelf_answerer

from pipeline.rag.answers.company_names import NameSpan, written_name
from pipeline.rag.answers.compose import coarser_than_asked
from pipeline.rag.answers.filings.asked import _outside_definition
from pipeline.rag.answers.filings.fact_answer import _asks_the_size
from pipeline.rag.answers.filings.fact_labels import FactLabels
from pipeline.rag.answers.filings.measure_match import _narrower
from pipeline.rag.answers.filings.parts.part_compare import asks_which_part, ranged_parts
from pipeline.rag.answers.periods import PeriodKind, parse_periods
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.question_words import label_stems, tokens
from pipeline.rag.answers.short_answer import ShortAnswer
from pipeline.rag.answers.vocabulary.line_items import BY_NAME
from retriever_trt.documents.model import Fact


def test_months_to_a_date_are_the_months_ended_then():
    (period,) = parse_periods("Net cash from operations, six months to June 30, 2022?")
    assert (period.kind, period.months, period.end) == (PeriodKind.MONTHS, 6, date(2022, 6, 30))
    (period,) = parse_periods("Revenue for the three months through March 31, 2025")
    assert (period.kind, period.months) == (PeriodKind.QUARTER, 3)


def test_a_letter_alone_is_no_word_of_a_label(tmp_path):
    """"S&M" leaves an "s" that no label holds: it had pulled "sales and marketing expense"
    under the labels' bar. A letter still names a class of stock ("Class C")."""
    answerer = shelf_answerer(tmp_path, ("aapl-10-k-2024-11-01.html",))
    got = ask(answerer, "Apple's S&M balance (vendor non-trade receivables) at September 28, "
                        "2024?")
    assert got.short_answer == "32833", got.prose()
    q = parse_query("How many shares of Alphabet's Class C common stock were outstanding?")
    assert "c" in q.measure_words  # the class's letter still names its member


def test_a_loss_has_its_sign_as_tagged_unless_its_size_is_asked():
    """Independent question writers give "Mullen's net loss" and "net loss per share" as the
    tagged, negative figure; "how large was the net loss", an outflow and what was lost are
    sizes."""
    assert not _asks_the_size(parse_query("What was Workiva's net loss in Q2 2022?"))
    assert not _asks_the_size(parse_query("Net loss per share reported by Mullen for the nine "
                                          "months ended June 30, 2023?"))
    for asked in ("How large was Boeing's net loss in 2024?",
                  "What was the size of Workiva's net loss in Q2 2022?",
                  "How much did Workiva lose in Q2 2022?",
                  "How much cash did Workiva burn in operations in 2022?"):
        assert _asks_the_size(parse_query(asked)), asked
    for asked in ("a loss is negative", "negative for a loss", "with its sign"):
        assert not _asks_the_size(parse_query(f"How large was Workiva's net loss in Q2 2022, "
                                               f"{asked}?"))


def test_paid_and_payments_are_one_stem():
    assert label_stems(tokens("common dividends paid")) <= \
        label_stems(tokens("Payments Of Dividends Common Stock"))
    # "common" is the concept's own word: it narrows nothing
    assert not _narrower("common dividends paid", "us-gaap:PaymentsOfDividendsCommonStock",
                         frozenset())


def test_the_company_s_name_narrows_no_operand():
    """"Total Danaher stockholders' equity" is Danaher's stockholders' equity; another word
    beside the name still narrows it."""
    equity = "us-gaap:StockholdersEquity"
    danaher = frozenset({"danaher"})
    assert not _narrower("total danaher stockholders' equity", equity, danaher)
    assert _narrower("total danaher stockholders' equity", equity, frozenset())
    assert _narrower("total european stockholders' equity", equity, danaher)


def test_the_vocabulary_reads_the_companys_own_figures_first():
    """Net income: the parent's, then what is available to common (Thermo Fisher's "Net income
    attributable to Thermo Fisher"), before ProfitLoss with the noncontrolling interests'.
    Operating cash flow: a company tagging only continuing operations' (AT&T) has one."""
    assert BY_NAME["net income"].concepts[:3] == (
        "us-gaap:NetIncomeLoss", "us-gaap:NetIncomeLossAvailableToCommonStockholdersBasic",
        "us-gaap:ProfitLoss")
    assert "us-gaap:NetCashProvidedByUsedInOperatingActivitiesContinuingOperations" in \
        BY_NAME["operating cash flow"].concepts


def test_a_company_is_named_as_the_question_writes_it():
    text = "Which held more cash: Thermo Fisher or AT&T Inc.?"
    thermo, att = text.index("Thermo"), text.index("AT&T")
    assert written_name(text, NameSpan("thermo fisher scientific", thermo, thermo + 6,
                                       thermo + 13)) == "Thermo Fisher"
    assert written_name(text, NameSpan("at&t", att, att + 4, att + 9)) == "AT&T"


def test_a_definitions_words_name_no_part_of_the_company():
    """"net income attributable to common stock" names AT&T's class of common stock only
    inside its definition: the payout is the company's, no class's. The name it defines
    stays ("NVIDIA's Compute & Networking operating margin, defined as ...")."""
    q = parse_query("AT&T's 2024 dividend payout, computed as common dividends paid divided by "
                    "net income attributable to common stock?", {"at&t": "at&t"})
    text, defining = _outside_definition(q)
    assert {"common", "stock", "paid"} <= defining and "dividend" not in defining
    assert "common" not in text and "payout" in text
    q = parse_query("What was NVIDIA's Compute & Networking operating margin in fiscal 2025, "
                    "defined as operating income divided by revenue?")
    text, defining = _outside_definition(q)
    assert "Compute & Networking" in text and defining == {"income", "divided", "revenue"}


def test_where_a_balance_sits_and_the_statement_it_is_shown_in_are_no_measure():
    """"Goodwill allocated to ... segment": "allocated" held the filing's goodwill labels under
    their bar. "As shown in its statement of stockholders' equity" names a statement, not
    the stockholders' equity the net loss had been read as."""
    q = parse_query("Goodwill allocated to Broadcom's infrastructure software segment at "
                    "November 2, 2025?")
    assert "allocat" not in " ".join(q.measure_words) and "goodwill" in q.measure_words
    q = parse_query("Workiva's net loss for the quarter ended March 31, 2022, as shown in its "
                    "statement of stockholders' equity?")
    assert q.measure.name == "net income" and "equity" not in q.measure_words


def test_a_percentage_printed_coarser_than_asked_is_no_answer():
    """Broadcom prints its segment's operating margin as 58%; asked to one decimal, that is
    a different number from the 57.6 its figures give."""
    q = parse_query("What was the semiconductor solutions segment's operating margin in fiscal "
                    "2025? %, one decimal.")
    assert coarser_than_asked(ShortAnswer("58", "percent", "span"), q)
    assert not coarser_than_asked(ShortAnswer("57.6", "percent", "span"), q)
    assert not coarser_than_asked(ShortAnswer("58", "percent", "arithmetic"), q)  # computed
    assert not coarser_than_asked(ShortAnswer("4004", "million", "span"), q)  # an amount
    assert not coarser_than_asked(ShortAnswer("58", "percent", "span"),
                                  parse_query("What was its operating margin in fiscal 2025?"))


def test_which_part_is_asked_only_of_a_comparison():
    assert asks_which_part("Which segment had the highest revenue at NVIDIA in fiscal 2025?")
    # a place the text states, no part's figure
    assert not asks_which_part("In which country is ParsePort, the company Workiva bought in "
                               "2022, based?")


def test_a_which_question_naming_its_alternatives_ranges_over_no_other_part():
    """"Which segment ...: Honeywell Building Technologies or Performance Materials and
    Technologies?" had been answered with Aerospace, the highest of all four, when one
    of the two named was not found."""
    axis = "us-gaap:StatementBusinessSegmentsAxis"
    facts = [Fact(f"f{m}", "us-gaap:OperatingIncomeLoss", Decimal(v), "USD", date(2023, 6, 30),
                  date(2023, 4, 1), dimensions=((axis, m),))
             for m, v in (("hon:AerospaceMember", "924"), ("hon:PmtMember", "622"))]
    labels = FactLabels.of(facts)
    assert len(ranged_parts("Which segment had the higher segment profit in Q2 2023?",
                            labels)) == 2
    assert ranged_parts("Which segment had the higher segment profit in Q2 2023: Building "
                        "Technologies or Performance Materials and Technologies?", labels) == []


def test_a_quarter_named_by_its_last_month():
    """"The March 2025 quarter" is the quarter ending that month (Apple's ended March 29)."""
    (period,) = parse_periods("Apple's top line for the March 2025 quarter")
    assert (period.kind, period.months, period.end) == (PeriodKind.QUARTER, 3, date(2025, 3, 31))
    (period,) = parse_periods("Revenue for the quarter ended in June 2024")
    assert period.end == date(2024, 6, 30)
    # a date named is the period asked: the quarter's opening balance, not its close
    (period,) = parse_periods("Total shareholders' equity as of December 28, 2024, the "
                              "opening balance of the March 2025 quarter?")
    assert (period.kind, period.end) == (PeriodKind.INSTANT, date(2024, 12, 28))


def test_where_a_figure_is_printed_names_no_measure():
    """"Additions to property, plant, and equipment in investing activities" is capital
    expenditures, printed among the investing activities; "cash used in investing
    activities" is that section's total."""
    capex = parse_query("Intel capex in 2024, i.e. additions to property, plant, and equipment "
                        "in investing activities?")
    assert capex.measure.name == "capital expenditures" and "ie" not in capex.measure_words
    assert parse_query("Net cash used in investing activities in 2024?").measure.name == \
        "investing cash flow"


def test_a_label_s_spellings_name_one_measure():
    """NVIDIA's "Sales, general and administrative" is SG&A, not sales; an Oxford comma and
    "non-current" are the labels' words too."""
    for text in ("NVIDIA SG&A (sales, general and administrative) for fiscal 2022?",
                 "NVIDIA sales, general, and administrative expense for fiscal 2022?"):
        assert parse_query(text).measure.name == "selling, general and administrative expense"
    assert tokens("Non-current term debt") == ["noncurrent", "term", "debt"]
    assert parse_query("Intel MG&A (marketing, general, and administrative) for 2024?"
                       ).measure.name == "selling, general and administrative expense"


def test_share_based_compensation_and_its_shorthands():
    for text in ("SBC at Apple (share-based compensation expense added back in the cash flow "
                 "statement), nine months ended June 29, 2024", "Apple's stock-based "
                 "compensation in fiscal 2024"):
        assert parse_query(text).measure.name == "share-based compensation", text
    # "through" a date is no word of the measure
    assert "through" not in parse_query("Cash dividends Apple paid year to date through June "
                                        "29, 2024?").measure_words


def test_a_balance_named_after_a_word_of_paying_is_the_payment_for_it():
    """"Capital spending on property and equipment in the quarter" had been read as the
    balance of property and equipment at the quarter's end (C3.ai's 88.7 million for an
    11.3 million outlay); named with no word of paying, it is still the balance."""
    capex = BY_NAME["capital expenditures"]
    for question in ("C3.ai capital spending on property and equipment in the quarter ended "
                     "July 31, 2023?",
                     "How much capex did Rocket report for 2023 (purchase and other additions "
                     "of property and equipment, net of disposals)?"):
        assert parse_query(question).measure is capex
    assert parse_query("What was C3.ai's property and equipment, net at July 31, 2023?"
                       ).measure is BY_NAME["property, plant and equipment"]


def test_net_loss_per_share_is_earnings_per_share():
    """"Basic and diluted net loss per share" had been read as the net loss, in thousands."""
    assert parse_query("Basic and diluted net loss per share for C3.ai in the quarter ended "
                       "July 31, 2023?").measure is BY_NAME["basic eps"]
    # said with its dilution, the diluted figure
    for question in ("Smucker diluted EPS (net income per share – assuming dilution) for the "
                     "year ended April 30, 2024?", "Diluted net loss per share in Q2 2023?"):
        assert parse_query(question).measure is BY_NAME["diluted eps"]


def test_a_range_of_months_is_the_months_it_spans():
    """"April-June 2023" had been read as the year 2023 (no number of a 10-Q, or the
    wrong period's)."""
    quarter, nine = (parse_periods(t)[0] for t in ("cost of revenue for April-June 2023",
                                                   "revenue for January through September 2024"))
    assert (quarter.kind, quarter.end, quarter.months) == (PeriodKind.QUARTER, date(2023, 6, 30), 3)
    assert (nine.kind, nine.end, nine.months) == (PeriodKind.MONTHS, date(2024, 9, 30), 9)


def test_a_year_earlier_set_off_by_a_colon_describes_the_date_named():
    """"And a year earlier: ... the three months ended July 31, 2022" had moved that date a
    year back again (2021, which the 10-Q does not hold)."""
    query = parse_query("And a year earlier: C3.ai total revenue for the three months ended "
                        "July 31, 2022, $ millions?")
    assert [p.end for p in query.periods] == [date(2022, 7, 31)]
    assert parse_query("Revenue in the year-ago quarter of Q2 2025?").periods[0].year == 2024
    # a bracket after it stating the period describes it too ("(three months ended June 30,
    # 2022)" had been read as 2021's quarter); one stating no period moves the year
    query = parse_query("Mullen's net loss in the year-ago quarter (three months ended "
                        "June 30, 2022), $ thousands?")
    assert [p.end for p in query.periods] == [date(2022, 6, 30)]
    assert parse_query("Revenue in the year-ago quarter of Q2 2025 (in $ millions)?"
                       ).periods[0].year == 2024


def test_the_year_ago_quarter_named_by_a_clause_or_by_nothing(tmp_path):
    """"In the year-ago quarter, the three months ended July 30, 2022" had moved that date a
    year back again; "the year-ago quarter" with no period named had answered the filing's
    own quarter (Tesla's 22,496 of Q2 2025 for its 25,500 of Q2 2024)."""
    query = parse_query("GameStop's software net sales in the year-ago quarter, the three "
                        "months ended July 30, 2022? $ millions.")
    assert [p.end for p in query.periods] == [date(2022, 7, 30)] and not query.year_earlier
    assert parse_query("Revenue in the year-ago quarter, in $ millions?").year_earlier
    answerer = shelf_answerer(tmp_path, ("tsla-10-q-2025-07-24.html",))
    assert ask(answerer, "What were Tesla's total revenues in the year-ago quarter?"
               ).short_answer == "25500"
    assert ask(answerer, "What were Tesla's total revenues in the quarter?").short_answer == \
        "22496"
    # "provided by operations" is the operating cash flow, not the cash balance
    assert ask(answerer, "What was Tesla's net cash provided by operations in the first half "
                         "of 2025?").short_answer == "4696"


def test_total_equity_is_after_the_noncontrolling_interests(tmp_path):
    """"Total equity" is the balance sheet's line after the noncontrolling interests
    (Tesla's 78,011 at June 30, 2025), "stockholders' equity" the company's own (77,314):
    GE's debt-to-total-equity had read the shareholders' 27,378 for its total 28,579."""
    answerer = shelf_answerer(tmp_path, ("tsla-10-q-2025-07-24.html",))
    assert ask(answerer, "What was Tesla's total equity as of June 30, 2025? $ millions."
               ).short_answer == "78011"
    assert ask(answerer, "What was Tesla's total stockholders' equity as of June 30, 2025? "
                         "$ millions.").short_answer == "77314"


def test_a_rows_other_sign_in_brackets_is_no_word_of_its_name():
    """Questions copy a statement's row ("Income (loss) before income taxes", "operating
    (loss) earnings"): the bracketed sign had split the name, read as income taxes, the net
    income, or nothing."""
    for question, name in (("Income (loss) before income taxes in 2023?", "pretax income"),
                           ("GameStop Europe: operating (loss) earnings for fiscal 2023?",
                            "operating income"),
                           ("What was net (loss) income in 2023?", "net income")):
        assert parse_query(question).measure is BY_NAME[name]


def test_how_many_dollars_is_an_amount_not_a_count():
    """"-- how many $ thousands?" had asked a count, so no concept in dollars answered."""
    from pipeline.rag.answers.answer_checks import asks_count

    assert not asks_count("Bitcoin Mining revenue in Q2 2023 -- how many $ thousands?")
    assert asks_count("How many employees did it have?")


def test_another_measure_as_a_percentage_of_a_parts_revenue_is_no_share_of_it():
    """"What contribution margin (as a percentage of segment revenue) did Palantir report
    for its Commercial segment" had been answered with Commercial's share of the company's
    revenue (45.07 for 52): the question names a measure of the filing's besides revenue."""
    from pipeline.rag.answers.filings.parts.part_share import asks_share_of_part

    measures = frozenset({"contribution", "margin", "revenue"})
    naming = frozenset({"commercial"})
    margin = parse_query("What contribution margin (as a percentage of segment revenue) did "
                         "Palantir report for its Commercial segment in 2023?")
    share = parse_query("What share of Palantir's 2023 revenue came from its Commercial segment?")
    assert not asks_share_of_part(margin, naming, measures)
    assert asks_share_of_part(share, naming, measures)


def test_a_unit_of_dollars_written_with_its_sign_asks_an_amount():
    """"What contribution margin did Rocket's Partner Network segment earn in 2023? $
    millions" had been withheld as a margin asked without its ratio read: "$ millions" asks
    an amount, as "in millions of dollars" does."""
    from pipeline.rag.answers.answer_checks import asks_amount, asks_ratio

    question = "What contribution margin did Rocket's Partner Network earn in 2023? $ millions."
    assert asks_amount(question) and not asks_ratio(question)
    assert asks_ratio("What was the operating margin in 2023, %?")


def test_the_unit_asked_after_a_formula_is_no_operand():
    """"free cash flow, taken as operating cash flow less capital expenditures, $ millions
    (negative if an outflow)" had read "capital expenditures, $ millions (negative if an
    outflow)" as one operand, so no number; and "as a multiple of" sets one company's
    figure over another's as "as a fraction of" does."""
    from pipeline.rag.answers.filings.companies import Combine, combination

    query = parse_query("GameStop's fiscal 2023 free cash flow, taken as operating cash flow "
                        "less capital expenditures, $ millions (negative if an outflow).")
    assert query.measure is not None and query.measure.formula is not None
    assert combination("C3.ai's operating loss for the quarter as a multiple of Riot's Q2 "
                       "2023 operating loss (x, two decimals).") is Combine.RATIO
    # "A was how many times B" divides too: each side is its own company's question
    times = parse_query("AMC's Q2 2023 total revenues were how many times Marathon Digital's "
                        "Q2 2023 total revenues? One decimal.", {"amc": "amc", "marathon": "mara"})
    assert combination(times.text) is Combine.RATIO
    assert [o.company for o in times.operands] == ["amc", "mara"]


def test_the_verb_of_a_charge_is_no_word_of_its_measure():
    """"the goodwill impairment Riot took" had looked for a label holding "took"."""
    assert "took" not in parse_query("How big was the goodwill impairment Riot took in the "
                                     "three months ended June 30, 2022?").measure_words


def test_an_average_of_one_periods_flow_is_no_figure_of_the_facts():
    """"The average revenue from Palantir's top twenty customers over the trailing twelve
    months" had been answered with that year's total revenue (2,225 million for 54.6): an
    average per customer no fact gives. An average over years, or of a measure that is an
    average itself, still reads the facts."""
    from pipeline.rag.answers.filings.fact_answer import _average_of_one
    from pipeline.rag.answers.filings.fact_targets import Target

    one = [Target(date(2023, 12, 31), 12)]
    per_customer = parse_query("What was the average revenue from Palantir's top twenty "
                               "customers over the trailing twelve months to December 31, 2023?")
    assert _average_of_one(per_customer, one)
    shares = parse_query("What was Palantir's average diluted share count in 2023?")
    assert not _average_of_one(shares, one)
    assert not _average_of_one(per_customer, [Target(date(2022, 12, 31), 12), *one])


def test_money_lost_or_made_is_the_bottom_line_and_a_loss_its_size():
    """"Which company lost less money ...: C3.ai or Riot?" had named no measure (no number);
    the loss it compares is each one's size, so the smaller loss is "less"."""
    query = parse_query("Which company lost less money in its latest reported quarter: C3.ai "
                        "or Riot Platforms?")
    assert query.measure is BY_NAME["net income"] and _asks_the_size(query)
    profit = parse_query("Which was more profitable in 2023, Palantir or Rocket?")
    assert profit.measure is BY_NAME["net income"] and not _asks_the_size(profit)


def test_which_company_compared_asks_no_name_of_the_prose():
    """"Which company had the bigger top line ...: Stryker or Danaher?" compares figures;
    "which company did Verizon agree to acquire?" asks a name only the prose gives."""
    from pipeline.rag.answers.answer_checks import asks_name

    assert not asks_name("Which company had the bigger top line in 2024: Stryker or Danaher?")
    assert not asks_name("Which company grew revenue faster in 2024, Stryker or Danaher?")
    assert asks_name("Which company did Verizon agree to acquire in September 2024?")
    # the company's own figure or cause is asked, not a name (TAT-QA dev, half a)
    assert not asks_name("What impacted the company's effective tax rate in 2019?")


def test_the_ratio_of_one_item_to_another_and_two_totals_set_against_each_other():
    """"Mullen's total liabilities to total stockholders' equity, two decimals" had been the
    equity itself; "the ratio of A to B" had no number. Each is A over B; "attributable to"
    sets no ratio."""
    from pipeline.rag.answers.vocabulary.definitions import named_metric

    for question in ("Mullen's total liabilities to total stockholders' equity (including "
                     "non-controlling interest) at June 30, 2023, two decimals?",
                     "Mullen's ratio of total liabilities to total stockholders' equity at "
                     "June 30, 2023?"):
        metric = named_metric(question)
        assert metric is not None and metric.denominator == "total shareholders' equity"
        assert metric.numerator == (("total liabilities", 1),)
    assert named_metric("Net income attributable to common stockholders in 2023?") is None


def test_a_dash_inside_a_quoted_label_is_no_operator():
    """"(the 'Operator - Transaction fees' revenue line)" had been read as Operator minus
    "transaction fees' revenue line" (no number); unquoted, the dash still subtracts."""
    quoted = parse_query("How much did Marathon earn in 2023 from transaction fees as a "
                         "mining-pool operator (the 'Operator - Transaction fees' revenue line)?")
    assert getattr(quoted.measure, "formula", None) is None
    working = parse_query("What was Marathon's working capital (total current assets - total "
                          "current liabilities) at December 31, 2023?")
    assert working.measure is not None and working.measure.formula is not None


def test_the_one_class_a_cover_registers_is_its_untagged_count_s():
    """GameStop registers Class A alone and tags its cover count with no class member:
    "Class A shares outstanding" had read "class" as a word of a balance sheet row (common
    stock's value) and got no number. Another class, or a cover of two, keeps the word."""
    from types import SimpleNamespace

    from pipeline.rag.answers.filings.asked import _sole_class
    from retriever_trt.documents.model import CoverEntry, CoverField

    def info(title: str):
        return SimpleNamespace(metadata=SimpleNamespace(
            cover={CoverField.SECURITIES: CoverEntry(title, (), None)}))

    assert _sole_class("GameStop Class A shares outstanding?", info("Class A Common Stock")) == \
        {"class"}
    assert not _sole_class("Class B shares outstanding?", info("Class A Common Stock"))
    assert not _sole_class("Class A shares outstanding?",
                           info("Class A Common Stock; Class C Capital Stock"))
