"""Where the tests find the repository and the shared TAT-QA data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# In CI (and /work/main) the clone sits beside shared/; a worktree under wt/ one level lower.
_CANDIDATES = [base / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"
               for base in (REPO.parent, REPO.parent.parent)]
TATQA = next((p for p in _CANDIDATES if p.is_file()), _CANDIDATES[0])
