"""A question is read once: one year range for tables and questions alike, and one
tokenization of the question per request, however many tables and sentences the answer
rules weigh it against (issue 48, part 3)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
from paths import FILINGS

from pipeline.rag.answers import question_words
from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.periods import PeriodKind
from pipeline.rag.answers.query import parse_query
from pipeline.rag.answers.short_answer import TableSource
from pipeline.rag.pipeline import RAGPipeline
from pipeline.settings_sources import load_settings
from retriever_trt.documents.tables import parse_table
from retriever_trt.documents.years import FIRST_YEAR, LAST_YEAR, years_in
from retriever_trt.indexing.ingest import ingest

APPLE = "aapl-10-k-2024-11-01.html"
TABLES = 3  # table chunks among the passages
HEADER_ROWS = 2


def test_one_year_range_for_table_headers_and_questions() -> None:
    edges = f"{FIRST_YEAR - 1} {FIRST_YEAR} {LAST_YEAR} {LAST_YEAR + 1}"
    assert years_in(edges) == [FIRST_YEAR, LAST_YEAR]
    table = parse_table([["", str(LAST_YEAR), str(LAST_YEAR + 1)], ["Revenue", "5", "6"]])
    assert table.column_years[1:] == [[LAST_YEAR], []]
    inside = parse_query(f"What was the revenue in fiscal {LAST_YEAR}?")
    assert [(p.kind, p.year) for p in inside.periods] == [(PeriodKind.YEAR, LAST_YEAR)]
    assert inside.question.years == [LAST_YEAR] and inside.question.missing is None
    # Outside the range a number is no period, and the question is told no table has it.
    outside = parse_query(f"What was the revenue in {FIRST_YEAR - 30}?")
    assert outside.periods == () and outside.question.years == []
    assert f"names the year {FIRST_YEAR - 30}" in outside.question.missing
    assert question_words.fiscal_years("FY24 and fiscal year 2023") == [2024, 2023]


def _same(text: str, question: str) -> bool:
    return " ".join(text.replace("’", "'").split()) == " ".join(question.split())


@pytest.fixture(scope="module")
def apple(tmp_path_factory):
    folder = tmp_path_factory.mktemp("apple")
    (folder / APPLE).symlink_to(FILINGS / APPLE)
    return ingest(folder)[0]


def _rules_only_pipeline(store) -> RAGPipeline:
    """The pipeline's answer rules over `store`: no engine or encoder is needed to compute a
    short answer, so none is started."""
    pipe = RAGPipeline.__new__(RAGPipeline)
    pipe.settings = load_settings(overrides={"strict_rules": True})
    pipe.tables, pipe.filings = TableSource(store), FilingAnswerer(store)
    return pipe


def test_one_request_tokenizes_its_question_once(apple, monkeypatch) -> None:
    question = "How many full-time equivalent employees did Apple have in 2024?"
    calls: list[str] = []
    original = question_words.tokens

    def counted(text: str) -> list[str]:
        calls.append(text)
        return original(text)

    # Every rule module's own binding of the one tokenizer counts.
    for name, module in list(sys.modules.items()):
        if name.startswith("pipeline.") and getattr(module, "tokens", None) is original:
            monkeypatch.setattr(module, "tokens", counted)
    pipe = _rules_only_pipeline(apple)
    _, ids = apple.build_bm25().search([question], pipe.settings.table_top_k - TABLES)
    # Retrieval mixes tables in: the table rules weigh the question against them too.
    tables = [i for i in range(len(apple)) if apple[i].table and
              any("2024" in cell for row in apple[i].table[:HEADER_ROWS] for cell in row)][:TABLES]
    passages = [SimpleNamespace(doc_id=apple[i].doc_id, chunk_id=apple[i].chunk_id, score=1.0)
                for i in [*ids[0], *tables] if i >= 0]
    calls.clear()  # BM25 has its own analyser; count from the request's parse on
    query = pipe.filings.parse(question, None)
    short = pipe._short_answer(query, pipe.filings.scope(query, None), passages, passages)
    assert short.short_answer == "164000"  # from the text: "approximately 164,000 ... employees"
    assert len(calls) > 1  # sentences, labels and headers are tokenized; the question once
    assert sum(_same(t, question) for t in calls) == 1


def test_initials_are_one_word():
    assert question_words.tokens("revenue from the U.S. and the U.K.") == ["revenue", "us", "uk"]
    assert question_words.tokens("Non-U.S. sales") == question_words.tokens("non-US sales")
