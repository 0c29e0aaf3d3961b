"""Where the tests find the repository and the TAT-QA data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# In CI the clone sits beside shared/, as a worktree does here: <repo>/../shared.
SHARED_TATQA = REPO.parent / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"
# The bundled demo corpus is the first 60 contexts of the same dev split, in the same
# format: tests that take fewer contexts see the same data either way.
DEMO_CORPUS = REPO / "pipeline" / "data" / "demo_corpus.json"
TATQA = SHARED_TATQA if SHARED_TATQA.is_file() else DEMO_CORPUS
# The real SEC filings (inline-XBRL HTML, and pdf/ with four printed to PDF).
FILINGS = REPO.parent / "shared" / "data" / "filings"


def require_filings() -> None:
    """Fail (not skip) without the shared filings: the tests that read them must run in CI."""
    import pytest

    if not (FILINGS / "aapl-10-k-2024-11-01.html").is_file():
        pytest.fail(f"the shared SEC filings are missing: expected {FILINGS} (../shared/data/"
                    "filings beside the repository, as CI lays it out)", pytrace=False)
