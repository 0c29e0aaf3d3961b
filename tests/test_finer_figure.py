"""A fact tagged rounder than the answer shows it ($2.4 billion asked in millions) is answered
as the filing's prose states it finer, when one sentence about the measure does."""

from __future__ import annotations

import pytest
from ixbrl_sample import write_filing

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from retriever_trt.indexing.ingest import ingest

_FINER = "Operating income included the $2,440 million impairment charges."


def _answerer(tmp_path, *sentences: str) -> FilingAnswerer:
    write_filing(tmp_path, "Widget Corp", "WDGT", 2024, 1234, 1000, 200, 35, charge=sentences)
    return FilingAnswerer(ingest(tmp_path)[0])


def _ask(answerer: FilingAnswerer, question: str):
    query = answerer.parse(question)
    return answerer.answer(query, answerer.scope(query, None))


def test_a_rounded_fact_asked_finer_is_read_from_its_finer_sentence(tmp_path):
    answerer = _answerer(tmp_path, _FINER)
    got = _ask(answerer, "Widget Corp's impairment charges in 2024, in $ millions?")
    assert (got.short_answer, got.scale) == ("2440", "million")
    assert got.quote == _FINER
    assert got.citations[0]["fact"]["concept"] == "us-gaap:AssetImpairmentCharges"
    # asked as roundly as it is tagged, the fact answers as tagged
    got = _ask(answerer, "Widget Corp's impairment charges in 2024, in $ billions?")
    assert (got.short_answer, got.scale, got.quote) == ("2.4", "billion", None)
    got = _ask(answerer, "Widget Corp's impairment charges in 2024, $ billions, two decimals?")
    assert (got.short_answer, got.scale) == ("2.44", "billion")


@pytest.mark.parametrize("sentences", [
    # not the measure's sentence
    ("Revenue from services was $2,440 million.",),
    # a figure the fact does not round to
    ("Operating income included the $2,540 million impairment charges.",),
    # two finer figures disagree
    (_FINER, "Impairment charges of $2,380 million were recorded in the year."),
])
def test_no_finer_sentence_leaves_the_fact_as_tagged(tmp_path, sentences):
    got = _ask(_answerer(tmp_path, *sentences),
               "Widget Corp's impairment charges in 2024, in $ millions?")
    assert (got.short_answer, got.quote) == ("2400", None)
