"""Where the tests find the repository, the TAT-QA data and the SEC filings: all in the
repository, so a clone with nothing beside it runs the same tests on the same data."""

from __future__ import annotations

from pathlib import Path

from pipeline.settings import DEMO_CORPUS

REPO = Path(__file__).resolve().parents[1]
# The bundled demo corpus: the first 60 contexts of TAT-QA's dev split (678 texts, 360
# questions). Always this one, never a whole dev file that a machine keeps beside the
# repository: the results must not depend on the machine.
TATQA = DEMO_CORPUS
# A few real SEC filings (inline-XBRL HTML, and pdf/ with four printed to PDF), some cut to
# the pages the tests read: tests/data/filings/README.md. The whole shelf of 25 is for the
# benchmarks (benchmarks/filings_gold.py verify, benchmarks/filings_covers.py).
FILINGS = REPO / "tests" / "data" / "filings"
