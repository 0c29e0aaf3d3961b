"""Shared, once-per-session artifacts for the retriever/export tests.

Kept out of conftest.py (other suites share tests/); a module-level cache makes the
MiniLM export happen once per pytest session whichever test module asks first.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from paths import TATQA

FALLBACK_TEXTS = [
    "What was the total revenue in 2019?",
    "Revenue increased 12% to $4.2 billion, driven by subscription growth.",
    "How much goodwill impairment was recorded?",
    "The company recorded no goodwill impairment in fiscal 2019 or 2018.",
    "Operating expenses rose due to higher headcount and marketing spend.",
    "What is the effective tax rate?",
    "Cash and cash equivalents were $1.1 billion at year end.",
    "Dividends paid per share increased from $0.40 to $0.44.",
]

_cache: dict[str, object] = {}


def tatqa_texts(n: int, offset: int = 0) -> list[str]:
    """n TAT-QA texts (paragraphs + questions), or the fallback sentences repeated.

    Slices must lie within the bundled demo corpus's 678 texts, which stands in for the
    shared dev file on a clone without ../shared."""
    if TATQA.is_file():
        from onnx_export.calibration import read_samples

        texts = _cache.setdefault("tatqa", read_samples(TATQA))
        chosen = list(texts[offset : offset + n])
        assert len(chosen) == n, f"{TATQA} has {len(texts)} texts, fewer than {offset} + {n}"
        return chosen
    return [FALLBACK_TEXTS[i % len(FALLBACK_TEXTS)] + f" ({i})" for i in range(offset, offset + n)]


def exported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Run the export CLI once: model.onnx, model.fp16.onnx, model.int8*.onnx, report."""
    if "exported" not in _cache:
        from onnx_export.__main__ import main

        out = tmp_path_factory.mktemp("onnx")
        calib = out / "calib.txt"
        calib.write_text("\n".join(tatqa_texts(48, offset=500)) + "\n")
        buf = io.StringIO()
        with redirect_stdout(buf):
            rc = main([f"--outDir={out}", "--fp16", "--int8", f"--calibData={calib}",
                       "--calibSamples=48"])
        assert rc == 0, buf.getvalue()
        _cache["exported"] = {"dir": out, "report": buf.getvalue(), "calib": calib}
    return _cache["exported"]  # type: ignore[return-value]


def model_dir() -> Path:
    from onnx_export.encoder import default_encoder_dir

    return default_encoder_dir()


def write_jsonl(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path
