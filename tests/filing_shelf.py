"""A shelf of the repository's real filings (tests/data/filings) read by the answer rules in
process (copies of some, or the printed ones of pdf/), and one question asked of it, as the
filing tests share them."""

from __future__ import annotations

import shutil
from pathlib import Path

from paths import FILINGS

from pipeline.rag.answers.filings.filing_answer import FilingAnswerer
from pipeline.rag.answers.short_answer import ShortAnswer
from retriever_trt.indexing.ingest import ingest

# Four SEC filings printed to PDF by Chromium, cut to their covers and statements.
PDFS = FILINGS / "pdf"


def shelf_answerer(folder: Path, names: tuple[str, ...]) -> FilingAnswerer:
    """The answer rules over copies of `names` in `folder`."""
    for name in names:
        shutil.copy(FILINGS / name, folder / name)
    return FilingAnswerer(ingest(folder)[0])


def ask(answerer: FilingAnswerer, question: str) -> ShortAnswer:
    """The rules' answer to `question`, scoped as the server scopes it."""
    query = answerer.parse(question)
    return answerer.answer(query, answerer.scope(query, None))


def printed_answerer() -> FilingAnswerer:
    """The answer rules over the printed filings, read where they lie."""
    return FilingAnswerer(ingest(PDFS)[0])
