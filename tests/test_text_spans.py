"""Short answers cut from the text: the span of a sentence a question asks for (an amount,
a name, a list, a reason, a date) and where it starts and ends. The passages are TAT-QA
dev paragraphs as written and report-style sentences."""

from __future__ import annotations

import pytest
from test_text_answer import ADVISORY, INTEREST, PSU, RSU, US, ask


@pytest.mark.parametrize("question, short, scale, kind", [
    ("As of December 31, 2019, what was the unrecognized compensation cost related to "
     "non-vested RSUs?", "1.1", "billion", "amount"),
    ("Over what duration will the unrecognized compensation cost related to non-vested RSUs "
     "be recognized?", "2.5 years", "", "duration"),
    # "..., respectively": the amount in the place of the year asked, not the nearest one
    ("What were the tax benefits realized by the company for year ended 31 December 2019?",
     "131", "million", "stated_amount"),
    ("What were the tax benefits realized by the company in 2018 and 2017 respectively?",
     ["117", "180"], "million", "stated_amount"),
    # a year and a date's day are not amounts
    ("How many shares PSUs granted in February 2016?", "547000", "", "amount"),
    ("What caused the increase in interest expense in 2019?",
     "driven by a higher average debt balance and higher interest rates as we issued debt to "
     "finance the Red Hat acquisition", "", "reason"),
    # the question's own "driven by" is not repeated in the answer: what drove it is
    ("What was the increase in interest expense in 2019 driven by?",
     "a higher average debt balance and higher interest rates as we issued debt to "
     "finance the Red Hat acquisition", "", "reason"),
    # a share is not an amount unless the question asks for one
    ("How much did revenue from the United States increase in 2019?", "14.2", "million",
     "amount"),
    ("What was the percentage of revenue from the United States in 2019?", "57", "percent",
     "amount"),
    # the words restating the question are left out; so is the footnote mark
    ("What are strategic alternative evaluation costs primarily related to?",
     "third party advisory services", "", "sentence"),
])
def test_the_span_the_question_asks_for(question, short, scale, kind) -> None:
    got = ask(question, PSU, RSU, INTEREST, ADVISORY, US)
    assert (got.short_answer, got.scale, got.kind) == (short, scale, kind)
    assert got.answer_type == ("multi-span" if isinstance(short, list) else "span")


SPACE = ("As of October 26, 2025, we owned and leased approximately 9.1 million square feet "
         "and 5.3 million square feet of space, respectively.")


def test_a_respectively_list_pairs_each_amount_with_its_item() -> None:
    """"owned and leased ... 9.1 million ... and 5.3 million ..., respectively": owned is
    9.1, leased 5.3; a question naming neither item gets no amount of the two (the
    sentence, for the reader to pair)."""
    assert ask("How much space did the company own, in million square feet?", SPACE
               ).short_answer == "9.1"
    assert ask("How much space did the company lease, in million square feet?", SPACE
               ).short_answer == "5.3"
    assert ask("How much space did the company have, in million square feet?", SPACE
               ).kind == "sentence"


SHARES = ("During 2025, our international operations, including Canada, generated 27% and 34% "
          "of our net sales and operating income.")


def test_amounts_before_of_pair_in_order_with_the_items_after_it() -> None:
    """"27% and 34% of our net sales and operating income", no "respectively" said: each
    amount is its item's, the item the question names most; naming neither, no amount."""
    assert ask("What share of its 2025 operating income did its international operations "
               "generate?", SHARES).short_answer == "34"
    assert ask("What share of its 2025 net sales did its international operations generate?",
               SHARES).short_answer == "27"
    assert ask("What share of revenue did its international operations generate?",
               SHARES).kind == "sentence"


RMB = ("During the year ended 31 December 2019, the Group reported exchange gains of "
       "approximately RMB77 million (2018: RMB229 million) within “Finance costs, net” in the "
       "consolidated income statement.")
POUNDS = ("The adjustments to prior periods of £1.7m (2017/18: £(8.1m)) relate mainly to the "
          "adjustment of prior period losses and capital allowances which have been revised "
          "following submission of tax returns.")
TAX_FEES = ("(2) Tax fees are comprised of fees for preparation of tax returns to the Company "
            "and the services performed by Deloitte in connection with Inter-Company matters.")


@pytest.mark.parametrize("question, short, scale", [
    # another currency than the dollar is part of the answer: given as written
    ("How much exchange gains did the Group report for the year ended 31 December 2019?",
     "RMB77 million", ""),
    ("What was the adjustments to the prior period in 2017/18?", "£(8.1m)", ""),
    # past "are comprised of": the question's verb, inflected
    ("What do the tax fees comprise of?", "fees for preparation of tax returns to the Company "
     "and the services performed by Deloitte in connection with Inter-Company matters", ""),
])
def test_currencies_and_the_question_s_verb(question, short, scale) -> None:
    got = ask(question, RMB, POUNDS, TAX_FEES, US)
    assert (got.short_answer, got.scale) == (short, scale)


def test_a_span_ends_without_the_sentence_s_closing_punctuation() -> None:
    got = ask("What are strategic alternative evaluation costs primarily related to?",
              "Strategic alternative evaluation costs are primarily related to third party "
              "advisory services.”")  # the paragraph's last sentence keeps its quote
    assert got.short_answer == "third party advisory services"


# Report-style sentences (written for these tests) for the span rules of span_bounds.py.
IMPAIRED = ("An intangible asset is considered impaired when its carrying amount exceeds its "
            "recoverable amount.")
REVIEW = ("The first stage of the annual impairment review is performed by comparing the "
          "recoverable amount of each cash-generating unit with its carrying amount.")
LEASES = ("The variable lease payments under these contracts have been classified as operating "
          "expenses.")
LIMITED = ("Our continuing involvement is limited to the servicing of the transferred loans; "
           "accordingly, the loans are not recognised on our balance sheet.")
FREIGHT = ("Quarterly surveys prepared by independent brokers are used to estimate the freight "
           "accruals.")
TURNOVER = "The Group has assumed that staff turnover will remain at 8% a year."
RISK = "Credit risk is the risk that a customer fails to pay the amounts it owes."
CUSTOMERS = ("Retail customers are consumers who buy through our stores, while wholesale "
             "customers are distributors that resell our products.")
OFFICERS = "Our officers are appointed annually but may be removed by the Board at any time."
EXCLUDED = ("Sales taxes collected from customers and remitted to tax authorities are excluded "
            "from net sales.")
SWAPS = ("In addition, to the extent practicable, currency forwards are entered into with several "
         "banks to limit concentration risk.")


@pytest.mark.parametrize("question, short", [
    # past the restated subject and its verb group; the condition a "when" asks for
    ("When is an intangible asset considered impaired?",
     "when its carrying amount exceeds its recoverable amount"),
    # a passive's participle and preposition: the answer is what follows them
    ("What is the first stage of the annual impairment review?",
     "comparing the recoverable amount of each cash-generating unit with its carrying amount"),
    # a new word in the subject; the question's verb and its preposition
    ("What are variable lease payments classified as?", "operating expenses"),
    # the answer ends at a second clause after ";"
    ("What is the company's continuing involvement limited to?",
     "the servicing of the transferred loans"),
    # the closing words that only restate the question are left out
    ("What is used to estimate the freight accruals?",
     "Quarterly surveys prepared by independent brokers"),
    ("What is excluded from net sales?",
     "Sales taxes collected from customers and remitted to tax authorities"),
    # a "that" clause after the question's verb is the answer, whole
    ("What are the Group's assumptions on staff turnover?",
     "staff turnover will remain at 8% a year"),
    # "X is the Y that ...": what X is
    ("What is credit risk?", "the risk that a customer fails to pay the amounts it owes"),
    # the clause about what is asked, of two a "while" joins
    ("What are wholesale customers?", "distributors that resell our products"),
    # "but" before a verb starts another clause
    ("How often are the officers appointed?", "annually"),
    # a leading connective and phrase set aside; a "why" keeps its "to"
    ("Why are currency forwards entered into with several banks?", "to limit concentration risk"),
])
def test_a_span_starts_past_the_question_and_ends_with_the_answer(question, short) -> None:
    sentences = (IMPAIRED, REVIEW, LEASES, LIMITED, FREIGHT, TURNOVER, RISK, CUSTOMERS,
                 OFFICERS, EXCLUDED, SWAPS)
    got = ask(question, *sentences)
    assert (got.short_answer, got.kind) == (short, "sentence")


@pytest.mark.parametrize("question, text, short", [
    # a name for "who" / "which": past "by", before what the sentence goes on to say
    ("Who approved the annual accounts?",
     "The annual accounts were approved by the Board of Directors on 4 March 2020 and signed "
     "on its behalf.", "the Board of Directors"),
    ("Which exchange are the ordinary shares listed on?",
     "The ordinary shares are listed on the London Stock Exchange under the ticker “SPT”.",
     "the London Stock Exchange"),
    # an appositive after a name is no part of it
    ("What did the company acquire in 2019?",
     "In June 2019, the Company acquired Northwind Logistics, Inc., a regional carrier based "
     "in Ohio.", "Northwind Logistics, Inc"),
    # a list a colon introduces: its items
    ("What are the segments of the company?",
     "The Company reports four segments: Aerospace, Industrial, Marine and Energy.",
     ["Aerospace", "Industrial", "Marine", "Energy"]),
    # a yes-or-no question: the sentence saying so, whole
    ("Was there any impairment of goodwill in 2019?",
     "There was no impairment of goodwill in 2019 or 2018.",
     "There was no impairment of goodwill in 2019 or 2018"),
    # the prior period's figure in brackets is a closing note, not the answer
    ("What was the weighted average share price of options exercised in 2019?",
     "The weighted average share price of options exercised in 2019 was 512.3p (2018: n/a).",
     "512.3p"),
])
def test_names_lists_and_whole_sentences(question, text, short) -> None:
    got = ask(question, text)
    assert got.short_answer == short
    assert got.answer_type == ("multi-span" if isinstance(short, list) else "span")


def test_a_heading_is_passed_over_for_the_sentence_after_it() -> None:
    got = ask("What is credit risk?", "Managing Credit Risk", RISK)
    assert got.sentence == RISK


@pytest.mark.parametrize("question, short", [
    # "what is the main reason": the cause itself; "why": "due to" and the cause
    ("What is the main reason for the rise in freight costs?",
     "higher fuel prices and port congestion"),
    ("Why did freight costs rise in 2019?",
     "primarily due to higher fuel prices and port congestion"),
])
def test_a_cause_as_the_question_asks_for_it(question, short) -> None:
    got = ask(question, "Freight costs rose by 12% in 2019 primarily due to higher fuel "
                        "prices and port congestion (see Note 4).")
    assert (got.short_answer, got.kind) == (short, "reason")


GUARANTEE = ("At 31 December 2019 the guarantee given to the local authority totalled £8.2 "
             "million (2018: £7.9 million).")
CREDITS = ("At December 31, 2019, the Company had federal, state and foreign research credit "
           "carryforwards of approximately $12.5 million, $4.1 million and $0.8 million, "
           "respectively.")


@pytest.mark.parametrize("question, short, scale", [
    # a bracket labelled with a period states that period's amount (pounds: as written)
    ("What was the guarantee given to the local authority at 31 December 2018?",
     "£7.9 million", ""),
    ("What was the guarantee given to the local authority at 31 December 2019?",
     "£8.2 million", ""),
    # "respectively" for the items a question names (not years): the whole list
    ("What were the federal, state and foreign research credit carryforwards respectively?",
     ["12.5", "4.1", "0.8"], "million"),
    # "per cent" is a unit; "by how much" asks for an amount
    ("By how much did the Group reduce its water use since 2016, as a percentage?", "18",
     "percent"),
    # another currency, written as reports write it
    ("What was the market price per share of Varun at 31 March 2019?", "INR42", ""),
])
def test_amounts_by_period_label_list_and_unit(question, short, scale) -> None:
    got = ask(question, GUARANTEE, CREDITS,
              "The Group has reduced its water use by 18 per cent since 2016.",
              "The market price per share of Varun at 31 March 2019 was INR42 (31 March "
              "2018: INR37), valuing the holding at £3.1 million.")
    assert (got.short_answer, got.scale) == (short, scale)



@pytest.mark.parametrize("question, sentence, shown", [
    ("What does the table represent?", "The table below shows the carrying amounts and "
     "estimated fair values of our debt, excluding lease liabilities:",
     "the carrying amounts and estimated fair values of our debt, excluding lease liabilities"),
    ("What does the table show?", "As of December 31, 2019, maturities of lease liabilities "
     "were as follows:", "maturities of lease liabilities"),
    ("What charges does the table summarize for the fiscal 2019 program?", "The following table "
     "summarizes expected, incurred, and remaining charges for the fiscal 2019 program by "
     "segment.", "expected, incurred, and remaining charges for the fiscal 2019 program by segment"),
])
def test_what_a_table_shows_is_what_its_introducing_sentence_says(question, sentence, shown) -> None:
    # The introducing sentence shares only "table" with the question, not the best score.
    got = ask(question, "Revenue grew in every segment of the table of results.", sentence,
              "The increase in the table's total was due to higher volumes.")
    assert (got.short_answer, got.kind) == (shown, "table")


def test_a_count_asked_after_a_leading_phrase_is_an_amount() -> None:
    got = ask("Of the 50 restaurants acquired in 2017, how many were sold to franchisees?",
              "Of the 50 restaurants acquired in 2017, we closed eight and sold 42 to franchisees.")
    assert (got.short_answer, got.kind) == ("42", "amount")


@pytest.mark.parametrize("question, short", [
    # a company's history is older than its statements' years; "which year" asks the year
    ("In which year was RTX Corporation incorporated?", "1934"),
    ("In what year was Intuit incorporated?", "1984"),
    ("When was Intuit incorporated?", "March 1984"),
])
def test_a_year_in_a_companys_history(question, short) -> None:
    got = ask(question, "RTX Corporation was incorporated in Delaware in 1934.",
              "Intuit Inc. was incorporated in California in March 1984.")
    assert (got.short_answer, got.kind) == (short, "date")


@pytest.mark.parametrize("question, short", [
    # "how much of the price": the part stated "A of the B", not the whole B
    ("How much of the BodyArmor purchase price did Coca-Cola allocate to the BodyArmor "
     "trademark?", "4.2"),
    ("What was the BodyArmor purchase price?", "5.6"),
])
def test_how_much_of_a_whole_is_the_part(question, short) -> None:
    got = ask(question, "The Company allocated $4.2 billion of the $5.6 billion purchase price "
                        "to the BodyArmor trademark.")
    assert (got.short_answer, got.scale, got.kind) == (short, "billion", "amount")


def test_documents_incorporated_by_reference_are_no_incorporation() -> None:
    """The cover's "DOCUMENTS INCORPORATED BY REFERENCE ... 2025 Proxy Statement" says
    nothing of when the company was incorporated; the business section does."""
    got = ask("When was AbbVie incorporated?",
              "DOCUMENTS INCORPORATED BY REFERENCE Portions of the 2025 AbbVie Inc. Proxy "
              "Statement are incorporated by reference into Part III.",
              "AbbVie Inc. was incorporated in Delaware on April 10, 2012.")
    assert (got.short_answer, got.kind) == ("April 10, 2012", "date")


def test_the_year_in_a_laws_name_is_no_date_of_the_company() -> None:
    """The cover's "Securities Exchange Act of 1934" had answered when Analog Devices was
    incorporated, and its fiscal year's end would have next."""
    got = ask("In what year was Analog Devices incorporated?",
              "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF "
              "1934 For the fiscal year ended November 1, 2025 Analog Devices, Inc. "
              "(incorporated in Massachusetts)",
              "Analog Devices, Inc. was incorporated in Massachusetts in 1965.")
    assert (got.short_answer, got.kind) == ("1965", "date")


def test_a_date_of_an_event_comes_from_a_sentence_naming_it() -> None:
    """The auditor's report names Analog Devices and a date ("as of November 1, 2025"), and
    no incorporation: it had answered when the company was incorporated."""
    got = ask("In what year was Analog Devices incorporated?",
              "We have audited the consolidated balance sheets of Analog Devices, Inc. (the "
              "Company) as of November 1, 2025 and November 2, 2024.",
              "Analog Devices, Inc. was incorporated in Massachusetts in 1965.")
    assert (got.short_answer, got.kind) == ("1965", "date")
    got = ask("On what date did Workiva acquire ParsePort?",
              "Revenue grew 20% in the six months ended June 30, 2022.",
              "On April 1, 2022, we acquired all of the equity interests in ParsePort ApS.")
    assert (got.short_answer, got.kind) == ("April 1, 2022", "date")


@pytest.mark.parametrize("question, sentence, short, scale", [
    # "which quarter": the quarter as the sentence names it, nearest the question's words
    ("Starting with which quarter did Intel suspend the declaration of its quarterly dividend?",
     "Our most recent stock repurchase was in the first quarter of 2021 and we suspended the "
     "declaration of quarterly dividends starting with the fourth quarter of 2024.",
     "fourth quarter of 2024", ""),
    ("How large an additional share repurchase program did Apple announce on May 1, 2025? "
     "$ billions.", "On May 1, 2025, the Company announced the Board of Directors had "
     "authorized an additional program to repurchase up to $100 billion of the Company's "
     "common stock.", "100", "billion"),
    # a scale asked makes it an amount, though no "how much" says so
    ("What acquisition termination cost did NVIDIA record in fiscal 2023 after the Arm deal "
     "fell through? $ billions, two decimals.", "We recorded an acquisition termination cost "
     "related to the Arm transaction of $1.35 billion in fiscal year 2023.", "1.35", "billion"),
    # a percentage of the workforce is no head count
    ("Intel's 2024 Restructuring Plan headcount actions were expected to cut its core "
     "workforce by roughly what percentage by early 2025?", "We took headcount actions in "
     "connection with our 2024 Restructuring Plan that are expected to result in an "
     "approximate 15% decrease in our core Intel workforce by early 2025.", "15", "percent"),
    ("Across how many countries were NVIDIA's employees spread at fiscal 2023 year end?",
     "As of the end of fiscal year 2023, we had 26,196 employees in 35 countries.", "35", ""),
    # "worldwide" states the whole staff
    ("Roughly how many employees did Clorox have worldwide as of June 30, 2022?",
     "Clorox is a leading multinational manufacturer with fiscal year 2022 net sales of $7,107 "
     "and approximately 9,000 employees worldwide, as of June 30, 2022.", "9000", ""),
])
def test_the_span_a_question_in_other_words_asks_for(question, sentence, short, scale) -> None:
    got = ask(question, sentence)
    assert (got.short_answer, got.scale) == (short, scale)


def test_a_number_joined_to_a_name_is_no_amount_and_a_range_shares_its_scale() -> None:
    """Lockheed's F-35 backlog had been answered "35" (of "F-35"); McDonald's "between $3.0
    and $3.2 billion" had given the low end as a plain 3."""
    from pipeline.rag.answers.text.text_amounts import as_value, figures

    sentence = ("Through December 31, 2024, we have delivered 1,102 production F-35 aircraft "
                "and our backlog as of that date was 408 aircraft.")
    assert [m.group(0) for m in figures(sentence)] == ["1,102", "408"]
    expects = "The Company expects capital expenditures of between $3.0 and $3.2 billion."
    assert [as_value(m) for m in figures(expects)] == [("3", "billion"), ("3.2", "billion")]
    # an amount and a percentage side by side are no range
    assert [as_value(m) for m in figures("revenue of $5 and 40% growth")] == \
        [("5", ""), ("40", "percent")]


def test_a_count_or_a_length_of_time_asked_in_other_words() -> None:
    """"Approximately how many employees made up ..." and "What term do ... agreements
    generally have?" had been answered with the whole sentence."""
    sales = ("As of the end of fiscal 2025, our worldwide sales and marketing functions "
             "consisted of approximately 25,600 employees, including managers.")
    got = ask("Approximately how many employees made up Cisco's worldwide sales and marketing "
              "functions at the end of fiscal 2025?", sales)
    assert (got.short_answer, got.kind) == ("25600", "count")
    terms = ("These fees are stipulated in franchise/license agreements that generally have "
             "20-year terms.")
    got = ask("What term do McDonald's franchise and license agreements generally have?", terms)
    assert (got.short_answer, got.kind) == ("20-year", "duration")
    months = ("In May 2025, the Company announced its intent to separate the Diabetes Operating "
              "Unit, and expects to complete the separation within 18 months.")
    got = ask("Within how many months of the announcement does Medtronic expect to complete "
              "the separation?", months)
    assert (got.short_answer, got.kind) == ("18 months", "duration")


def test_a_part_of_a_listed_whole_and_a_date_the_question_states() -> None:
    """GameStop's "a total of 4,169 stores across all of our segments: ..., and 647 in
    Europe" had answered the total for Europe's stores; Costco's program "approved ... in
    January 2023, which expires in January 2027" had answered when it expires with the date
    the question itself states."""
    stores = ("As of February 3, 2024, we had a total of 4,169 stores across all of our "
              "segments: 2,915 in the United States, 203 in Canada, 404 in Australia, and 647 "
              "in Europe.")
    assert ask("How many of GameStop's stores were in its Europe segment at February 3, "
               "2024?", stores).short_answer == "647"
    assert ask("How many stores did GameStop have at February 3, 2024?",
               stores).short_answer == "4169"
    program = ("Our share repurchase program is conducted under a $4,000 authorization "
               "approved by our Board of Directors in January 2023, which expires in January "
               "2027.")
    assert ask("When does the share repurchase program Costco's board authorized in January "
               "2023 expire?", program).short_answer == "January 2027"


@pytest.mark.parametrize("question, text, short", [
    ("Who is the new strategic joint venture partner Starbucks announced for its business in "
     "China?", "Further, as announced in early November 2025, we look forward to working with "
     "our new strategic joint venture partner, Boyu Capital, to accelerate growth in China.",
     "Boyu Capital"),
    ("From whom did PepsiCo acquire the 50% of Sabra Dipping Company it did not own?",
     "In December 2024, we acquired the Strauss Group’s 50% ownership in Sabra Dipping "
     "Company, LLC (Sabra) and Sabra became a wholly-owned subsidiary.", "the Strauss Group"),
    ("Which U.S. broadband provider did Verizon agree in September 2024 to acquire?",
     "In September 2024, Verizon entered into an agreement to acquire Frontier Communications "
     "Parent, Inc. (Frontier).", "Frontier Communications Parent, Inc."),
    ("Jacob Van Naarden joined Lilly in 2019 through the acquisition of which company?",
     "Jacob Van Naarden joined Lilly in 2019 through the acquisition of Loxo Oncology, Inc. and "
     "has served as president of Lilly Oncology since 2022.", "Loxo Oncology, Inc."),
])
def test_a_name_asked_is_one_the_question_does_not_say(question, text, short) -> None:
    """"Who", "from whom", "which provider": a name the sentence writes in capitals and the
    question does not ("Further" had been the answer, and whole sentences), one sharing no
    word with the question before one that does ("Lilly Oncology")."""
    got = ask(question, text)
    assert (got.short_answer, got.kind) == (short, "name")


def test_on_what_date_asked_at_the_end_is_a_date() -> None:
    """"... is payable on what date?" had been answered with a clause of the sentence."""
    dividend = ("On August 13, 2025, our Board of Directors declared a quarterly dividend of "
                "$0.41 per common share to be paid on October 22, 2025, to all stockholders of "
                "record as of the close of business on October 3, 2025.")
    got = ask("The quarterly dividend of $0.41 per share that Cisco's board declared on August "
              "13, 2025 is payable on what date?", dividend)
    assert (got.short_answer, got.kind) == ("October 22, 2025", "date")


def test_the_word_beyond_what_is_counted_says_which_count() -> None:
    """Lockheed's "delivered 1,102 production F-35 aircraft ... and our backlog as of that date
    was 408 aircraft" had answered the backlog with the deliveries: the clause stating 408 as
    its value names the backlog."""
    f35 = ("From program inception through December 31, 2024, we have delivered 1,102 "
           "production F-35 aircraft, including 797 F-35A variants, and our backlog as of that "
           "date was 408 aircraft.")
    assert ask("How many F-35 aircraft were in Lockheed Martin's backlog at December 31, 2024?",
               f35).short_answer == "408"
    assert ask("How many F-35 aircraft had Lockheed Martin delivered through December 31, "
               "2024?", f35).short_answer == "1102"


def test_from_one_amount_to_another_is_the_earlier_then_the_later_years() -> None:
    """"an increase in attendance ... from 59.1 million patrons to 66.4 million patrons" in a
    sentence comparing the quarters of 2023 and 2022: 2023's is the second (the first had
    been AMC's Q2 2023 attendance)."""
    said = ("Admissions revenues increased $93.1 million during the three months ended June 30, "
            "2023, compared to the three months ended June 30, 2022, primarily due to an "
            "increase in attendance of 12.2% from 59.1 million patrons to 66.4 million patrons.")
    got = ask("What was Gadget's attendance in Q2 2023, in millions of patrons?", said)
    assert (got.short_answer, got.scale) == ("66.4", "million")
    got = ask("What was Gadget's attendance in Q2 2022, in millions of patrons?", said)
    assert (got.short_answer, got.scale) == ("59.1", "million")


def test_a_word_any_figure_has_makes_no_sentence_about_the_measure() -> None:
    """Mullen's "net working capital ... $65.1 million" had answered the net carrying amount
    of its patents: "net" and "amount" are words of any figure."""
    from pipeline.rag.answers.compose import is_about
    from pipeline.rag.answers.query import parse_query
    from pipeline.rag.answers.short_answer import ShortAnswer

    query = parse_query("What was the net carrying amount of Gadget's patents at June 30, 2023?",
                        {"gadget": "gadget"})
    capital = "The net working capital on June 30, 2023 amounted to approximately $65.1 million."
    assert not is_about(ShortAnswer("65.1", "million", quote=capital), query)
    patents = "On June 30, 2023, the net carrying amount of our patents was $29.5 million."
    assert is_about(ShortAnswer("29.5", "million", quote=patents), query)


def test_what_rate_asks_a_percentage() -> None:
    """"What effective tax rate does it expect for 2025?" had been answered with the sentence
    past "approximately"."""
    got = ask("What effective tax rate does Gadget expect for 2025?",
              "The Company expects its 2025 effective tax rate to be approximately 17.5% which is "
              "higher than the 2024 rate.")
    assert (got.short_answer, got.scale) == ("17.5", "percent")
