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
# Real SEC filings (inline-XBRL HTML, and four printed to PDF under pdf/): beside the repo,
# never copied into it; tests that read them fail under CI when it is missing.
FILINGS = REPO.parent / "shared" / "data" / "filings"
