"""The standard engine workload, shared by the engine benchmarks."""

from __future__ import annotations

import json
import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TATQA = REPO.parent / "shared" / "data" / "tatqa" / "tatqa_dataset_dev.json"


def english_text() -> str:
    """Annual-report prose from TAT-QA where it is present, else the stdlib's documentation."""
    if TATQA.exists():
        contexts = json.loads(TATQA.read_text())
        return "\n\n".join(p["text"] for c in contexts for p in c["paragraphs"])
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from engine_prompts import english_corpus

    return english_corpus() * 8


def standard_prompts(tokenizer, num_requests: int = 64, min_len: int = 32, max_len: int = 512,
                     seed: int = 0) -> list[list[int]]:
    """Prompt i is L_i tokens of real text, L_i uniform in [min_len, max_len] (seeded)."""
    rng = random.Random(seed)
    ids = tokenizer.encode(english_text(), add_special_tokens=False)
    prompts = []
    for _ in range(num_requests):
        n = rng.randint(min_len, max_len)
        start = rng.randrange(0, len(ids) - n)
        prompts.append(ids[start : start + n])
    return prompts
