"""Where the tests find the repository and the shared TAT-QA data."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# In CI the clone sits beside shared/ (<repo>/../shared); a worktree under <root>/wt/ finds
# it one level higher (<repo>/../../shared).
_DEV = Path("data") / "tatqa" / "tatqa_dataset_dev.json"
TATQA = next((p / "shared" / _DEV for p in (REPO.parent, REPO.parents[1])
              if (p / "shared" / _DEV).is_file()), REPO.parent / "shared" / _DEV)
