"""Shared, once-per-session artifacts for the retriever/export tests.

Kept out of conftest.py (other suites share tests/); a module-level cache makes the
MiniLM export happen once per pytest run whichever test module asks first.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from paths import TATQA

from llm_engine.utils.file_lock import file_lock

# The export's CLI report, kept beside its folder: written last, it says the export is whole.
REPORT_SUFFIX = ".report.txt"

_cache: dict[str, object] = {}


def tatqa_texts(n: int, offset: int = 0) -> list[str]:
    """n TAT-QA texts (paragraphs + questions) of the bundled demo corpus (678 texts)."""
    from onnx_export.calibration import read_samples

    texts = _cache.setdefault("tatqa", read_samples(TATQA))
    chosen = list(texts[offset : offset + n])
    assert len(chosen) == n, f"{TATQA} has {len(texts)} texts, fewer than {offset} + {n}"
    return chosen


def exported(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Run the export CLI once a run: model.onnx, model.fp16.onnx, model.int8*.onnx, report.
    Under pytest-xdist every worker takes the one export in the folder above the workers'
    own (as conftest.py's engines_dir), made by the first to ask under a lock; the tests
    only read it."""
    if "exported" not in _cache:
        if os.environ.get("PYTEST_XDIST_WORKER"):
            shared = tmp_path_factory.getbasetemp().parent
            with file_lock(shared / ".onnx-export.lock"):
                _cache["exported"] = _export_once(shared / "onnx-export")
        else:
            _cache["exported"] = _export_once(tmp_path_factory.mktemp("onnx"))
    return _cache["exported"]  # type: ignore[return-value]


def _export_once(out: Path) -> dict:
    """The export in `out` with its report (kept beside it, written last), made unless
    the report is there already."""
    report = out.with_name(f"{out.name}{REPORT_SUFFIX}")
    calib = out / "calib.txt"
    if not report.is_file():
        from onnx_export.__main__ import main

        out.mkdir(exist_ok=True)
        calib.write_text("\n".join(tatqa_texts(48, offset=500)) + "\n")
        buf = io.StringIO()
        with redirect_stdout(buf):
            rc = main([f"--outDir={out}", "--fp16", "--int8", f"--calibData={calib}",
                       "--calibSamples=48"])
        assert rc == 0, buf.getvalue()
        partial = report.with_name(f"{report.name}.partial")
        partial.write_text(buf.getvalue())
        partial.replace(report)
    return {"dir": out, "report": report.read_text(), "calib": calib}


def model_dir() -> Path:
    from onnx_export.encoder import default_encoder_dir

    return default_encoder_dir()


def write_jsonl(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path
