"""Shared fixtures: the TAT-QA dev file (skipped when absent) and one session embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# In CI the repository clone sits beside the shared folder: <repo root>/../shared.
TATQA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "tatqa" / (
    "tatqa_dataset_dev.json"
)
SUBSET_CONTEXTS = 30


@pytest.fixture(scope="session")
def tatqa_path() -> Path:
    if not TATQA.is_file():
        pytest.skip(f"TAT-QA dev set not found at {TATQA}")
    return TATQA


@pytest.fixture(scope="session")
def tatqa_subset(tatqa_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first SUBSET_CONTEXTS contexts, small enough to encode on 2 CPU cores."""
    data = json.loads(tatqa_path.read_text())[:SUBSET_CONTEXTS]
    path = tmp_path_factory.mktemp("tatqa") / "subset.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="session")
def embedder():
    try:
        from retriever_trt.torch_embedder import TorchEmbedder

        return TorchEmbedder()
    except (FileNotFoundError, ImportError) as exc:
        pytest.skip(f"torch reference embedder unavailable: {exc}")
