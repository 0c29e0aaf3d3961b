"""Where the tests find the repository and the shared TAT-QA data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# In CI the clone sits beside shared/, as a worktree does here: <repo>/../shared.
TATQA = REPO.parent / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"
