"""Choosing among retrieved reports: the table whose rows and years the question names wins;
when two reports fit equally, the answer says so and names the other instead of picking one
silently."""

from __future__ import annotations

from types import SimpleNamespace

from pipeline.rag.answers.short_answer import TableSource, short_answer_for
from retriever_trt.store.document_store import Chunk

ACME = [["", "2019", "2018"], ["Net income", "106.4", "70.5"], ["Revenue", "900", "800"]]
GLOBEX = [["", "2019", "2018"], ["Net income", "2,206", "3,549"],
          ["Net income attributable to owners", "2,000", "3,000"]]


def _ask(question: str, *reports: tuple[str, str, list[list[str]]]):
    chunks = [Chunk(f"{doc}/table/0", doc, title, "table", {"table": "t0"}, rows)
              for doc, title, rows in reports]
    store = SimpleNamespace(document=lambda doc_id: [c for c in chunks if c.doc_id == doc_id])
    passages = [SimpleNamespace(doc_id=c.doc_id, chunk_id=c.chunk_id, score=1.0) for c in chunks]
    return short_answer_for(question, passages, TableSource(store))


def test_two_reports_that_fit_equally_are_both_named() -> None:
    got = _ask("What was the net income in 2019?", ("acme", "Acme 10-K", ACME),
               ("globex", "Globex annual report", GLOBEX))
    assert got.short_answer == "106.4"  # the earlier retrieved report answers
    assert got.also == [("Globex annual report", "2206")]
    assert "Another report fits the question as well" in got.prose()
    assert "Globex annual report: 2206" in got.prose()


def test_the_report_whose_row_the_question_names_wins_alone() -> None:
    got = _ask("What was the revenue in 2019?", ("globex", "Globex annual report", GLOBEX),
               ("acme", "Acme 10-K", ACME))
    assert got.short_answer == "900" and got.also == []
    assert "Another report" not in got.prose()


def test_a_question_naming_no_row_fits_every_table_and_names_no_other() -> None:
    got = _ask("Which years does the table provide information for?",
               ("acme", "Acme 10-K", ACME), ("globex", "Globex annual report", GLOBEX))
    assert got.short_answer == ["2019", "2018"] and got.also == []
