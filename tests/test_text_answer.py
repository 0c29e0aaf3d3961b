"""Short answers cut from the text: sentences, the span a question asks for, and the choice
between a table's answer and the text's. The passages are TAT-QA dev paragraphs as written."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest
from paths import REPO

from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.short_answer import ShortAnswer, choose
from pipeline.rag.answers.text.span_words import Asked
from pipeline.rag.answers.text.text_answer import (
    Paragraph,
    answer_from_text,
    document_paragraphs,
    merge_windows,
    sentence_scores,
    split_sentences,
)
from retriever_trt.indexing.chunking import split_words
from retriever_trt.store.document_store import Chunk

RSU = ("As of December 31, 2019, there was $1.1 billion of unrecognized compensation cost "
       "related to non-vested RSUs, which will be recognized on a straight-line basis over the "
       "remaining weighted average contractual term of approximately 2.5 years. The tax "
       "benefits realized by the company for the years ended December 31, 2019, 2018 and 2017 "
       "were $131 million, $117 million and $180 million, respectively.")
PSU = ("In February 2016, we granted 547,000 PSUs with certain financial and operational "
       "targets. In April 2019, we granted 346,453 PSUs with certain financial targets.")
INTEREST = ("Interest expense increased $232 million to $1,344 million in 2019, driven by a "
            "higher average debt balance and higher interest rates as we issued debt to "
            "finance the Red Hat acquisition.")
US = ("Revenue from the United States increased $14.2 million in 2019 and was 57% of our "
      "revenue.")
ADVISORY = ("(1) Strategic Alternative Evaluation costs are primarily related to third party "
            "advisory services. U.S. Steel Corp. is not a customer.")


def para(text: str, doc: str = "d1", pid: str = "p1") -> Paragraph:
    return Paragraph(doc, (SimpleNamespace(chunk_id=f"{pid}/0", doc_id=doc, text=text),), text)


def ask(question: str, *texts: str):
    return answer_from_text(parse_query(question), [para(t, pid=f"p{i}") for i, t in enumerate(texts)])


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


def test_the_sentence_sharing_most_rare_question_words_is_chosen() -> None:
    got = ask("How many PSUs were granted in April 2019?", PSU, RSU)
    assert got.sentence.startswith("In April 2019") and got.short_answer == "346453"
    assert got.score > ask("How many PSUs were granted?", RSU).score


def test_the_company_s_own_name_makes_no_sentence_more_about_the_question() -> None:
    """Any sentence of Stryker's filing may name Stryker: the one stating the count asked
    is chosen over one that shares only the company's name and the place."""
    about = ("Stryker Corporation is one of the world's leading medical technology companies "
             "with operations in the United States.")
    count = "As of December 31, 2024, we had approximately 27,000 employees in the United States."
    query = parse_query("How many employees did Stryker have in the United States?",
                        {"stryker": "stryker"})
    got = answer_from_text(query, [para(about, pid="p0"), para(count, pid="p1")])
    assert got.sentence == count and got.short_answer == "27000"
    scores = sentence_scores(Asked.of(query), [about, count])
    assert scores[1] > scores[0]


def test_sentences_do_not_end_at_abbreviations() -> None:
    assert split_sentences(ADVISORY) == [
        "(1) Strategic Alternative Evaluation costs are primarily related to third party "
        "advisory services.", "U.S. Steel Corp. is not a customer."]


def test_paragraphs_are_whole_again_and_cite_the_window_holding_the_sentence() -> None:
    text = " ".join([RSU, PSU, INTEREST] * 2)
    windows = split_words(text, 40, 10)
    assert len(windows) > 3 and merge_windows(windows) == " ".join(text.split())
    chunks = [Chunk(f"p9/{i}", "d9", "", w) for i, w in enumerate(windows)]
    chunks.append(Chunk("d9/table/0", "d9", "", "2019 | 2018", table=[["", "2019"]]))
    [paragraph] = document_paragraphs(chunks)
    got = answer_from_text(parse_query("What caused the increase in interest expense in 2019?"),
                           [paragraph])
    holder = next(c for c in chunks if c.chunk_id == got.chunk_id)
    assert " ".join(got.sentence.split()[:8]) in holder.text


class Store:
    def __init__(self, *chunks: Chunk) -> None:
        self.chunks = chunks

    def document(self, doc_id: str) -> list[Chunk]:
        return [c for c in self.chunks if c.doc_id == doc_id]


def test_the_text_replaces_only_a_weak_table_lookup() -> None:
    store = Store(Chunk("p0/0", "d1", "", RSU))
    passages = [SimpleNamespace(chunk_id="p0/0", doc_id="d1", score=0.5)]
    q = "As of December 31, 2019, what was the unrecognized compensation cost related to RSUs?"
    text = answer_from_text(parse_query(q), document_paragraphs(store.document("d1")))
    weak = ShortAnswer("32137", "thousand", "span", match=0.6)
    got = choose(q, weak, text, passages, store)
    assert (got.short_answer, got.scale, got.quote) == ("1.1", "billion", text.sentence)
    assert got.citations == [{"source_id": "p0/0", "quote": text.sentence}]
    assert got.cited.chunk_id == "p0/0" and got.cited_rows is None
    assert "1.1 billion" in got.prose() and text.sentence in got.prose()
    sure = ShortAnswer("32137", "thousand", "span", match=1.05)
    assert choose(q, sure, text, passages, store) is sure
    # an amount was asked and the sentence has none: the table's lookup stays
    q2 = "What was Autodesk's goodwill at the end of 2018?"
    wordy = ask(q2, "Autodesk did not recognize any goodwill impairment in fiscal 2018 or 2017.")
    assert (wordy.asked, wordy.kind) == ("stated_amount", "sentence")
    assert wordy.score >= 0.8 and choose(q2, weak, wordy, passages, store) is weak
    computed = ShortAnswer("12", "thousand", "arithmetic", "1 + 11 = 12", match=0.5)
    assert choose(q, computed, text, passages, store) is computed
    # no table answer: the text's, unless a calculation was asked for and the text is weak
    assert choose(q, ShortAnswer(), text, passages, store).short_answer == "1.1"
    wanted = ShortAnswer(wanted_arithmetic=True)
    loose = answer_from_text(parse_query("What is the average cost of zebras?"), [para(RSU)])
    assert choose("What is the average cost of zebras?", wanted, loose, passages, store) is wanted


def test_extracts_from_the_gold_paragraphs_of_dev_text_questions(tatqa_path) -> None:
    """TAT-QA's metric on the first 60 dev contexts' text span questions, extracting from
    all of their context's paragraphs (measured 0.745 F1 on them; prose answers scored 0.15
    on text questions end to end before extracts, benchmarks/answer_eval.py)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from tatqa_metric import score

    f1s = []
    for ctx in json.loads(tatqa_path.read_text())[:60]:
        paragraphs = [para(p["text"], "d", p["uid"]) for p in ctx["paragraphs"]]
        for q in ctx["questions"]:
            if q["answer_from"] == "text" and q["answer_type"] == "span":
                got = answer_from_text(parse_query(q["question"]), paragraphs)
                f1s.append(score(q, got.short_answer, got.scale).f1 if got else 0.0)
    f1 = sum(f1s) / len(f1s)
    print(f"extract F1 on {len(f1s)} dev text span questions: {f1:.3f}")
    assert len(f1s) > 20 and f1 >= 0.6


RMB = ("During the year ended 31 December 2019, the Group reported exchange gains of "
       "approximately RMB77 million (2018: RMB229 million) within “Finance costs, net” in the "
       "consolidated income statement.")
POUNDS = ("The adjustments to prior periods of £1.7m (2017/18: £(8.1m)) relate mainly to the "
          "adjustment of prior period losses and capital allowances which have been revised "
          "following submission of tax returns.")
TAX_FEES = ("(2) Tax fees are comprised of fees for preparation of tax returns to the Company "
            "and the services performed by Deloitte in connection with Inter-Company matters.")
BILLED = ("Amounts billed include $60.3 million and $80.5 million due on U.S. federal government "
          "contracts at September 30, 2019 and 2018, respectively.")
OTHER_INCOME = ("Other income (expense), net changed $9.9 million in the year ended March 31, "
                "2018 compared to the year ended March 31, 2017, which was primarily "
                "attributable to a change of $10.4 million in foreign exchange expense.")


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


def test_a_sum_of_the_amounts_a_sentence_states_and_a_stated_one_year_change() -> None:
    store = Store(Chunk("p0/0", "d1", "", BILLED), Chunk("p1/0", "d2", "", OTHER_INCOME))
    passages = [SimpleNamespace(chunk_id="p0/0", doc_id="d1", score=0.5)]
    q = "What is the sum of amounts billed due on U.S. federal government contracts in 2018 and 2019?"
    text = answer_from_text(parse_query(q), document_paragraphs(store.document("d1")))
    assert (text.short_answer, text.scale) == (["80.5", "60.3"], "million")
    got = choose(q, ShortAnswer(wanted_arithmetic=True), text, passages, store)
    assert (got.short_answer, got.scale, got.answer_type) == ("140.8", "million", "arithmetic")
    assert got.derivation == "80.5 + 60.3 = 140.8" and got.quote == BILLED
    assert "computed from the amounts the report states: 80.5 + 60.3 = 140.8" in got.prose()
    # a table row named as well as the question names it keeps the table's computation
    sure = ShortAnswer("140", "million", "arithmetic", "60 + 80 = 140", match=1.02)
    assert choose(q, sure, text, passages, store) is sure
    # "the change in X in 2018": a sentence stating it beats the table's inferred period
    q = "What was the net change in the other income (expense) in 2018?"
    text = answer_from_text(parse_query(q), document_paragraphs(store.document("d2")))
    inferred = ShortAnswer("-9861", "thousand", "arithmetic", "-2,727 - 7,134 = -9861",
                           match=1.02)
    assert choose(q, inferred, text, passages, store).short_answer == "9.9"


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
