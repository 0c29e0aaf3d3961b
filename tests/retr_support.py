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

_cache: dict[str, object] = {}


def tatqa_texts(n: int, offset: int = 0) -> list[str]:
    """n TAT-QA texts (paragraphs + questions) of the bundled demo corpus (678 texts)."""
    from onnx_export.calibration import read_samples

    texts = _cache.setdefault("tatqa", read_samples(TATQA))
    chosen = list(texts[offset : offset + n])
    assert len(chosen) == n, f"{TATQA} has {len(texts)} texts, fewer than {offset} + {n}"
    return chosen


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
