"""Short answers cut from the text: which sentence answers (the kind asked within a near
tie, a cause in the next sentence), which amount a question's word qualifies, and when a
sentence stating a change beats the table's computed one. Report-style sentences."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_text_answer import Store, ask

from pipeline.rag.answers.compose import is_about, of_the_kind_asked
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.short_answer import ShortAnswer, choose
from pipeline.rag.answers.text.span_bounds import span_of
from pipeline.rag.answers.text.span_words import Asked
from pipeline.rag.answers.text.text_answer import answer_from_text, document_paragraphs
from retriever_trt.store.document_store import Chunk


def test_the_sentence_with_the_kind_asked_beats_a_near_tie_without_it() -> None:
    # "when": the adoption sentence with its date, not the policy sentence beside it
    got = ask("When did the company adopt the new lease standard?",
              "The company applies the new lease standard to all leases of office space. "
              "The company adopted the new lease standard effective January 1, 2019.")
    assert (got.short_answer, got.kind) == ("January 1, 2019", "date")
    # "why": the next sentence gives the cause of the change the best one states
    got = ask("Why did net cash used in financing activities increase?",
              "Net cash used in financing activities increased by $42.0 million in 2019. "
              "The increase is mainly attributable to higher repayments of the term loan.")
    assert got.kind == "reason" and "higher repayments of the term loan" in got.short_answer
    # a definition answers "What is X?" though its "value" asks for an amount
    got = ask("What is net asset value?",
              "Net asset value represents the fair value of the fund's assets less its "
              "liabilities. The net asset value of the fund was $12.5 million at year end.")
    assert got.kind == "sentence" and "fair value of the fund's assets" in got.short_answer


@pytest.mark.parametrize("question, short, scale, kind", [
    # the amount of a change asked for, not the sentence stating it
    ("What was the increase in the warranty reserve?", "3.4", "million", "amount"),
    # a question ending on its preposition asks for that preposition's object
    ("What were the proceeds in 2019 used for?", "the repayment of the revolving credit "
     "facility", "", "sentence"),
    # "the percentage decrease": the percent, not the amount beside it
    ("What was the percentage decrease in backlog in 2019?", "8", "percent", "amount"),
])
def test_changes_prepositions_and_percents(question, short, scale, kind) -> None:
    got = ask(question, "The $3.4 million increase in the warranty reserve reflects higher "
                        "claims on the new product line. In 2019, proceeds of $25.0 million "
                        "were used for the repayment of the revolving credit facility. Backlog "
                        "decreased by $12.1 million, or 8%, in 2019.")
    assert (got.short_answer, got.scale, got.kind) == (short, scale, kind)


def test_a_sentence_stating_the_change_asked_replaces_a_computed_one() -> None:
    store = Store(Chunk("p0/0", "d1", "", "The increase in interest expense was $621 million, "
                                          "on higher average borrowings."))
    passages = [SimpleNamespace(chunk_id="p0/0", doc_id="d1", score=0.5)]
    q = "What was the increase in interest expense?"
    text = answer_from_text(parse_query(q), document_paragraphs(store.document("d1")))
    computed = ShortAnswer("-12", "million", "arithmetic", "1 - 13 = -12", match=0.9)
    assert choose(q, computed, text, passages, store).short_answer == "621"
    # two years named: the change between them is computed from the table
    q2 = "What was the increase in interest expense from 2018 to 2019?"
    text2 = answer_from_text(parse_query(q2), document_paragraphs(store.document("d1")))
    assert choose(q2, computed, text2, passages, store) is computed


@pytest.mark.parametrize("question", [
    "What share of Acme's employees are based in the United States (approx. %)?",
    "What combined ratio did Acme report for Q3 2023? (%)",
])
def test_a_percent_sign_or_what_share_asks_the_figure_not_the_sentence(question) -> None:
    got = ask(question, "Approximately 84% of our employees are based in the United States. "
                        "The combined ratio of 101.0% in Q3 2023 rose on catastrophe losses.")
    assert (got.kind, got.scale) == ("amount", "percent")
    assert got.short_answer == ("84" if "share" in question else "101")


def test_the_year_of_the_filing_asked_of_dates_no_sentence() -> None:
    """"About how many paid memberships did Netflix have as of its 2024 10-K?": its prose's
    "approximately 302 million paid memberships" names no year."""
    q = parse_query("About how many paid memberships did Acme have as of its 2024 10-K (in "
                    "millions)?")
    assert Asked.of(q).years == frozenset()
    answer = ShortAnswer("302", "million", quote="Acme is a leading service with approximately "
                                                 "302 million paid memberships.")
    assert is_about(answer, q)
    assert not is_about(answer, parse_query("How many paid memberships did Acme have in 2024?"))


def test_a_sentence_stating_the_percentage_asked_answers_without_its_operands() -> None:
    """Clorox's "were 25% of consolidated net sales" had been passed over for the table's
    "could not find the figures" of a proportion it could not compute."""
    store = Store(Chunk("p0/0", "d1", "", "Net sales to the Company's largest customer, "
                                          "Walmart, were 25% of consolidated net sales in "
                                          "fiscal 2022."))
    passages = [SimpleNamespace(chunk_id="p0/0", doc_id="d1", score=0.5)]
    q = "What percentage of consolidated net sales went to its largest customer in fiscal 2022?"
    text = answer_from_text(parse_query(q), document_paragraphs(store.document("d1")))
    unfound = ShortAnswer(wanted_arithmetic=True)
    got = choose(q, unfound, text, passages, store)
    assert (got.short_answer, got.scale) == ("25", "percent")


def test_a_date_asked_is_not_answered_by_a_sentence_without_one() -> None:
    """"When does UPS's agreement with its pilots become amendable?" had been answered with
    "We have approximately 3,500 pilots who are employed under a collective bargaining
    agreement", a sentence with no date: a filing's answer is withheld so (`compose`)."""
    store = Store(Chunk("p0/0", "d1", "", "We have approximately 3,500 pilots who are employed "
                                          "under a collective bargaining agreement with the "
                                          "Independent Pilots Association."))
    passages = [SimpleNamespace(chunk_id="p0/0", doc_id="d1", score=0.5)]
    q = "When does the collective bargaining agreement with its pilots become amendable?"
    query = parse_query(q)
    text = answer_from_text(query, document_paragraphs(store.document("d1")))
    assert text is not None and (text.asked, text.kind) == ("date", "sentence")
    prose = choose(q, ShortAnswer(), text, passages, store)
    assert not of_the_kind_asked(prose, query, text)


@pytest.mark.parametrize("question, short", [
    ("What was the unrecognized compensation expense related to restricted stock units?",
     "8.2"),
    ("What was the unrecognized compensation expense?", "11.5"),
    ("How many customer accounts are excluded from the Northwind acquisition?", "1200"),
])
def test_the_amount_a_question_s_word_qualifies(question, short) -> None:
    # the opening amount is the total; a later one is the part the question's word names
    got = ask(question, "There was $11.5 million of unrecognized compensation expense, of "
                        "which $3.3 million is related to options and $8.2 million is related "
                        "to restricted stock units.",
              "Excludes 1,200 customer accounts (700 retail, 500 business accounts) from the "
              "Northwind acquisition.")
    assert got.short_answer == short


@pytest.mark.parametrize("question, short", [
    ("Which regions does the company lease warehouses in?", "Europe and Asia"),
    ("Which regions does the company own factories in?", "Mexico and Brazil"),
])
def test_and_before_the_subject_again_opens_a_second_clause(question, short) -> None:
    sentence = ("The company leases warehouses in Europe and Asia and the company owns "
                "factories in Mexico and Brazil.")
    assert span_of(Asked.of(parse_query(question)), sentence) == short


def test_an_amount_is_named_before_it() -> None:
    got = ask("What is the hurdle rate?", "The hurdle rate has been set at 7%, and the plan "
                                          "shares up to 12% of growth above the hurdle rate.")
    assert (got.short_answer, got.scale) == ("7", "percent")
