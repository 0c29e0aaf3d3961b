"""Short answers from the text: the sentence chosen, paragraphs whole again, and the choice
between a table's answer and the text's (the span a sentence gives: test_text_spans.py).
The passages are TAT-QA dev paragraphs as written."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

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


def test_the_sentence_sharing_most_rare_question_words_is_chosen() -> None:
    got = ask("How many PSUs were granted in April 2019?", PSU, RSU)
    assert got.sentence.startswith("In April 2019") and got.short_answer == "346453"
    assert got.score > ask("How many PSUs were granted?", RSU).score


def test_a_sentence_says_a_short_verb_and_an_irregular_one_inflected() -> None:
    """Marathon's 10-K: "we mined 12,852 bitcoin" says the question's "mine", which the
    sentence on the cost to mine says as written; "the sale of" says "sell"."""
    cost = ("The cost to mine a bitcoin is independent of the then current price of bitcoin, "
            "so when prices are low, the cost per coin to mine may consume much of our cash.")
    mined = ("During the year ended December 31, 2023, we mined 12,852 bitcoin, an increase of "
             "8,708 bitcoin, or 210.1%, over the prior year.")
    assert ask("How many bitcoin did Acme mine during 2023?", cost, mined).short_answer == \
        "12852"
    words = Asked.of(parse_query("How many bitcoin did Acme sell?"))
    held, sale = sentence_scores(words, ["Acme held 12,538 bitcoin.",
                                         "Acme recognized gains on the sale of 1,854 bitcoin."])
    assert sale > held


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


BILLED = ("Amounts billed include $60.3 million and $80.5 million due on U.S. federal government "
          "contracts at September 30, 2019 and 2018, respectively.")
OTHER_INCOME = ("Other income (expense), net changed $9.9 million in the year ended March 31, "
                "2018 compared to the year ended March 31, 2017, which was primarily "
                "attributable to a change of $10.4 million in foreign exchange expense.")


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


# C3.ai's 10-Q for the quarter ended July 31, 2023, as written.
NEW_CUSTOMERS = ("Approximately 17% and 16%, respectively, of the total subscription revenue was "
                 "attributable to revenue from new customers, and the remaining 83% and 84%, "
                 "respectively, was attributable to revenue related to net growth from existing "
                 "customers for the three months ended July 31, 2023 and 2022, respectively.")


def test_of_two_respectively_lists_the_one_whose_own_words_the_question_says() -> None:
    """Each list pairs its amounts with the years named last; the question's "new" is said
    only after the first list, "existing" only after the second."""
    q = "What share of Acme's {} in the quarter ended July 31, {} came from {}?"
    cases = {("subscription revenue", "2023", "new customers"): "17",
             ("subscription revenue", "2022", "new customers"): "16",
             ("revenue", "2023", "existing customers"): "83",
             ("revenue", "2022", "existing customers"): "84"}
    for words, short in cases.items():
        assert ask(q.format(*words), NEW_CUSTOMERS).short_answer == short


# Danaher's 2024 10-K, its Biotechnology segment's sales by destination, as written.
DESTINATIONS = ("Sales in 2024 for this segment by geographic destination (as a percentage of "
                "total 2024 sales) were: North America, 33%; Western Europe, 34%; other "
                "developed markets, 5%; and high-growth markets, 28%.")


def test_of_a_list_parted_by_semicolons_the_amount_of_the_item_named() -> None:
    """The amount before an item's name is the item before's: each item's amount is in its
    own part; the words before the colon name every item."""
    q = "What percentage of Acme's 2024 segment sales went to customers in {}?"
    for item, short in (("Western Europe", "34"), ("North America", "33"),
                        ("high-growth markets", "28"), ("other developed markets", "5")):
        assert ask(q.format(item), DESTINATIONS).short_answer == short


def test_the_amount_the_words_before_its_of_name() -> None:
    """PepsiCo's 10-K: "share repurchases of approximately $1.0 billion" names the amount
    after it; the total before it sits nearer the question's "expect" and year."""
    returned = ("We expect to return a total of approximately $8.6 billion to shareholders in "
                "2025, comprising dividends of approximately $7.6 billion and share repurchases "
                "of approximately $1.0 billion.")
    q = "How much does Acme expect to spend on {} in 2025? $ billions."
    assert ask(q.format("share repurchases"), returned).short_answer == "1"
    assert ask(q.format("dividends"), returned).short_answer == "7.6"
