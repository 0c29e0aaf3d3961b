"""README runs as written: every Python and bash block, in order, in a fresh folder, except
the blocks listed in SKIPPED with the reason; and it links only to files in the repository.

The blocks run with the working directory a new tmp folder (so `engines/...` paths in the
commands are created there), the repository's packages on PYTHONPATH, and
FINRAG_ENGINES_DIR set to this session's engines folder, where the bundled model is already
prepared (preparing it again would only repeat tests/test_model_prep.py, at a minute's
cost).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from paths import REPO
from prereqs import missing as prerequisite_missing

README = REPO / "README.md"
BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.S | re.M)
# Blocks that do not run here, by their first line, and why.
SKIPPED = {
    "make serve   # installs finrag, builds its artifacts into engines/ on first run, serves "
    "on 127.0.0.1:8000": "installs with pip and serves until stopped; the server tests start "
                         "`finrag serve`'s app, and `make test` is this suite",
    "finrag serve --index store/       # a missing or empty folder starts an empty store kept "
    "there": "serves until stopped; tests/test_documents_api.py makes these requests to the "
             "real server",
    "retrexec --onnx=engines/retriever/minilm/model.onnx --int8 \\":
        "builds a TensorRT plan: needs TensorRT and an NVIDIA GPU (tests/gpu/ covers plans)",
}


def blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in BLOCK.findall(README.read_text(encoding="utf-8"))]


def test_skipped_blocks_are_in_the_readme() -> None:
    firsts = [body.splitlines()[0] for _, body in blocks()]
    assert all(first in firsts for first in SKIPPED), set(SKIPPED) - set(firsts)
    assert len(blocks()) - len(SKIPPED) >= 6  # the rest run below


def test_links_stay_inside_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    assert "../" not in text and "shared/" not in text
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://")):
            assert (REPO / target).is_file(), target


def test_readme_blocks_run_as_written(tmp_path: Path, engines_dir: Path,
                                      prepared_default: Path) -> None:
    missing = [tool for tool in ("finrag", "retrexec") if shutil.which(tool) is None]
    if missing:
        prerequisite_missing(f"{missing} not on PATH", "pip install -e .  (make install does it)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get(
        "PYTHONPATH", "")]), "FINRAG_ENGINES_DIR": str(engines_dir)}
    ran = []
    for lang, body in blocks():
        if body.splitlines()[0] in SKIPPED:
            continue
        argv = [sys.executable, "-c", body] if lang == "python" else [
            "bash", "-e", "-o", "pipefail", "-c", body]
        proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=1800)
        assert proc.returncode == 0, f"README block failed:\n{body}\n{proc.stdout}\n{proc.stderr}"
        assert "Traceback" not in proc.stderr, proc.stderr
        ran.append((body.splitlines()[0], proc.stdout, proc.stderr))
    out = {first: stdout for first, stdout, _ in ran}
    err = {first: stderr for first, _, stderr in ran}
    # What the blocks print is what they say they do.
    assert re.search(r" (length|stop)$", out["from llm_engine import LLM, SamplingParams"], re.M)
    assert out["import asyncio"].strip()
    assert (tmp_path / "engines" / "index-reports").is_dir()
    assert out["finrag --version"].startswith("finrag ")
    assert "--enable-prefix-caching" in out["finrag --version"]  # `finrag serve --help`
    assert (tmp_path / "engines" / "retriever" / "minilm" / "model.int8.onnx").is_file()
    # The export block is the suite's percentile calibration (test_quantization.py runs
    # entropy's): its 4 samples of different lengths in one shape (a multiple of 16), the
    # method in its cache, and the Q/DQ encoder close to FP32 (measured: mean cosine 0.985).
    export = out["cat > samples.jsonl <<'EOF'"]
    calibrated = re.search(r"method=percentile, calibrated model\.int8\.calib\.json "
                           r"\(4 samples \S+ (\d+) tokens\)", export)
    assert calibrated and int(calibrated.group(1)) % 16 == 0, export
    cache = tmp_path / "engines" / "retriever" / "minilm" / "model.int8.calib.json"
    assert json.loads(cache.read_text())["finrag"]["method"] == "percentile"
    mean = re.search(r"INT8 Q/DQ vs FP32: cosine to FP32 mean ([\d.]+)", export)
    assert mean and float(mean.group(1)) >= 0.95, export
    assert (tmp_path / "engines" / "retriever" / "minilm.int8-dynamic.opt.onnx").is_file()
    assert "&&&& PASSED retrexec" in out["retrexec --onnx=engines/retriever/minilm/model.onnx "
                                        "--dynamicInt8 \\"]
    assert (tmp_path / "times.json").is_file()
    workspace = "retrexec --onnx=engines/retriever/minilm/model.onnx --fp16 --workspace=4096 \\"
    sparse = out[workspace]
    assert sparse.count("&&&& PASSED retrexec") == 2 and "pruned 36 linear weights" in sparse
    # A trtexec line's --workspace, through the installed command: read as TensorRT 8.4+'s
    # --memPoolSize, which ONNX Runtime then ignores, each said in one [W] line (issue 52;
    # this block is the published command line test_retrexec_sparsity.py once ran again in
    # a subprocess of its own).
    assert "[W] --workspace is deprecated (TensorRT 8.4+): read as " \
           "--memPoolSize=workspace:4096 (MiB)" in err[workspace], err[workspace]
    assert "[W] --memPoolSize: ignored" in err[workspace], err[workspace]
    assert (tmp_path / "engines" / "retriever" / "minilm.fp16.opt.onnx").is_file()
    assert (tmp_path / "engines" / "retriever" / "minilm" / "model.sparse24.onnx").is_file()
