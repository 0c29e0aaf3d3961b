"""The filing's own row, named as the question names the measure, before the vocabulary's
concept printed on another row; and a change told by its verb. Real 10-Qs of
tests/data/filings: J&J tags "Research and development expense" with
ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost and uses the vocabulary's
ResearchAndDevelopmentExpense for nothing on its statements (its 10-K puts it on the
in-process charges); Tesla prints "Net income" beside "Net income attributable to common
stockholders"."""

from __future__ import annotations

import shutil

import pytest
from paths import FILINGS

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.operation import Operation
from pipeline.rag.answers.question import operation
from retriever_trt.indexing.ingest import ingest

SHELF = ("jnj-10-q-2025-07-24.html", "tsla-10-q-2025-07-24.html")


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shelf")
    for name in SHELF:
        shutil.copy(FILINGS / name, folder / name)
    return FilingAnswerer(ingest(folder)[0])


def ask(answerer: FilingAnswerer, question: str):
    query = answerer.parse(question)
    return answerer.answer(query, answerer.scope(query, None))


@pytest.mark.parametrize("question, value", [
    # the income statement's row of that name, not the in-process payments (369) that
    # "spend" would prefer
    ("How much did Johnson & Johnson spend on research and development in the six months "
     "ended June 29, 2025?", "6741"),
    ("What was Johnson & Johnson's research and development expense for the fiscal second "
     "quarter of 2025?", "3516"),
    # the vocabulary's row names net income too, whose share it is aside
    ("What was Tesla's net income in the second quarter of 2025?", "1172"),
])
def test_the_row_named_as_asked(answerer, question, value):
    got = ask(answerer, question)
    assert (got.short_answer, got.scale) == (value, "million"), got.prose()


@pytest.mark.parametrize("question", [
    "By how much did Johnson & Johnson's sales to customers rise from 2024 to 2025?",
    "How much did Walmart's operating income grow from fiscal 2024 to fiscal 2025?",
    "How much did the company's debt fall between 2023 and 2024?",
])
def test_a_change_told_by_its_verb(question):
    assert operation(question).operation == Operation.CHANGE


def test_a_change_told_by_its_verb_is_computed(answerer):
    got = ask(answerer, "How much did J&J's sales to customers grow from the second quarter "
                        "of 2024 to the second quarter of 2025?")
    assert (got.short_answer, got.scale) == ("1296", "million"), got.prose()
