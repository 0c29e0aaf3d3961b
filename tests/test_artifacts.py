"""Corrupt or truncated artifacts are found at start, named with the command that rebuilds
them; a build killed midway leaves the previous artifact in place.

Each case damages a copy (in tmp) of a real artifact and starts through the code the
server starts with (`finrag serve`'s loaders, or `finrag serve` itself up to the point
where it would listen).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import REPO

from llm_engine.utils.model_path import DEFAULT_MODEL_NAME, ModelFolderError, resolve_model
from pipeline.cli import main
from pipeline.rag.index_loading import load_retriever
from pipeline.settings_sources import load_settings
from retriever_trt.embedders.artifacts import ArtifactError
from retriever_trt.embedders.loader import default_embedder, load_embedder
from retriever_trt.store.storage import IndexFileError, file_sha256, write_manifest


@pytest.fixture(scope="module")
def onnx_dir(engines_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the exported default encoder (model.onnx + tokenizer files)."""
    src = default_embedder(engines_dir, progress=False).path.parent
    return Path(shutil.copytree(src, tmp_path_factory.mktemp("onnx") / "enc"))


@pytest.fixture(scope="module")
def corpus(tatqa_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "three.json"
    path.write_text(json.dumps(json.loads(tatqa_path.read_text())[:3]))
    return path


@pytest.fixture(scope="module")
def saved_index(onnx_dir: Path, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("index") / "idx"
    assert main(["index", "--corpus", str(corpus), "--out", str(out),
                 "--embedder", str(onnx_dir / "model.onnx")]) == 0
    return out


def test_index_takes_the_encoder_from_engines_dir(engines_dir, corpus, tmp_path) -> None:
    out = tmp_path / "idx"
    assert main(["index", "--corpus", str(corpus), "--out", str(out),
                 "--engines-dir", str(engines_dir)]) == 0
    encoder = default_embedder(engines_dir, progress=False).path
    assert json.loads((out / "manifest.json").read_text())["embedder"] == str(encoder.resolve())


def damaged_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def serve_error(capsys: pytest.CaptureFixture, args: list[str]) -> str:
    """`finrag serve ARGS` must stop with exit status 2 and one line (it listens while it
    loads, on a port of its own here)."""
    assert main(["serve", "--port", "0", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("finrag: error: ") and "Traceback" not in err
    return err.removeprefix("finrag: error: ")


# -- ONNX and tokenizer ---------------------------------------------------------------------

def test_truncated_onnx_stops_serve_with_path_and_export_command(onnx_dir, tmp_path, capsys):
    enc = damaged_copy(onnx_dir, tmp_path / "all-minilm-l6-v2")
    truncate(enc / "model.onnx")
    msg = serve_error(capsys, ["--embedder", str(enc / "model.onnx"),
                               "--index", str(tmp_path / "unused")])
    print(msg)
    assert msg.startswith(f"{enc / 'model.onnx'}: ")
    assert f"rebuild it with: python -m onnx_export --model=default --outDir={enc}" in msg


def test_corrupt_fp16_onnx_and_tokenizer_name_their_file(onnx_dir, tmp_path) -> None:
    enc = damaged_copy(onnx_dir, tmp_path / "enc")
    fp16 = enc / "model.fp16.onnx"
    data = bytearray((enc / "model.onnx").read_bytes())
    data[16:4096] = os.urandom(4080)  # overwritten, not cut: same length
    fp16.write_bytes(bytes(data))
    with pytest.raises(ArtifactError) as info:
        load_embedder(fp16)
    print(info.value)
    assert info.value.path == fp16 and "--fp16" in info.value.rebuild
    assert f"--outDir={enc}" in info.value.rebuild and "--model=" in info.value.rebuild
    (enc / "tokenizer.json").write_text('{"version": "1.0", "trunc')
    with pytest.raises(ArtifactError, match="unreadable tokenizer") as info:
        load_embedder(enc / "model.onnx")
    assert info.value.path == enc / "tokenizer.json"
    assert info.value.rebuild.startswith("python -m onnx_export")


# -- TensorRT plan (TensorRT is not installable here: its documented API, faked) ------------

def test_corrupt_plan_and_sidecar_name_the_retrexec_command(onnx_dir, tmp_path) -> None:
    from fake_tensorrt import FakeDevice, make_fake_trt, plan_bytes

    from retriever_trt.build.builder import write_sidecar
    from retriever_trt.embedders.profiles import Profile, Shape

    profile = Profile(Shape(1, 8), Shape(4, 64), Shape(8, 128))
    trt = make_fake_trt(FakeDevice(), [])
    plan = tmp_path / "model.plan"
    plan.write_bytes(plan_bytes([profile], 384) + b" " * 4096)
    write_sidecar(onnx_dir / "model.onnx", plan, [profile])
    assert load_embedder(plan, trt_module=trt, device=FakeDevice()).dim > 0  # intact: loads
    truncate(plan, 0.0005)  # 2 bytes: TensorRT's deserializer returns None
    with pytest.raises(ArtifactError, match="not a TensorRT plan") as info:
        load_embedder(plan, trt_module=trt, device=FakeDevice())
    print(info.value)
    assert info.value.path == plan
    assert info.value.rebuild == (
        f"retrexec --onnx={(onnx_dir / 'model.onnx').resolve()} --saveEngine={plan} "
        "--minShapes=input_ids:1x8,attention_mask:1x8 --optShapes=input_ids:4x64,"
        "attention_mask:4x64 --maxShapes=input_ids:8x128,attention_mask:8x128 --skipInference")
    side = Path(f"{plan}.json")
    truncate(side)
    with pytest.raises(ArtifactError, match="corrupt sidecar") as info:
        load_embedder(plan, trt_module=trt, device=FakeDevice())
    assert info.value.path == side and f"--saveEngine={plan}" in info.value.rebuild


# -- FAISS index and document store ----------------------------------------------------------

def index_settings(index: Path, onnx_dir: Path, corpus: Path | None = None):
    return load_settings(None, {"index": str(index), "embedder": str(onnx_dir / "model.onnx"),
                                "corpus": str(corpus) if corpus else None}, environ={})


def test_truncated_faiss_index_stops_serve_and_the_named_command_rebuilds_it(
        saved_index, onnx_dir, corpus, tmp_path, capsys) -> None:
    idx = damaged_copy(saved_index, tmp_path / "idx")
    truncate(idx / "index" / "index.faiss")
    msg = serve_error(capsys, ["--embedder", str(onnx_dir / "model.onnx"), "--index", str(idx)])
    print(msg)
    assert msg.startswith(f"{idx / 'index' / 'index.faiss'}: corrupt")
    command = msg.split("rebuild it with: ", 1)[1]
    assert command == (f"finrag index --corpus {corpus} --out {idx} "
                       f"--embedder {(onnx_dir / 'model.onnx').resolve()}")
    assert main(shlex.split(command)[1:]) == 0
    embedder = load_embedder(onnx_dir / "model.onnx")
    assert len(load_retriever(index_settings(idx, onnx_dir), embedder).store) > 0


@pytest.mark.parametrize("damage", ["truncated", "truncated, checksum rewritten",
                                    "fewer vectors, manifest rewritten"])
def test_damaged_store_or_index_is_found_at_start(damage, saved_index, onnx_dir, corpus,
                                                  tmp_path) -> None:
    """Disk damage is caught by the checksums; a writer that wrote a short file *and* a
    matching manifest, by parsing and counting."""
    idx = damaged_copy(saved_index, tmp_path / "idx")
    embedder = load_embedder(onnx_dir / "model.onnx")
    if damage.startswith("truncated"):
        culprit = idx / "store" / "chunks.jsonl"
        data = culprit.read_bytes()
        culprit.write_bytes(data[: data.rindex(b"\n", 0, len(data) // 2) + 5])
    else:
        import faiss

        culprit = idx
        small = faiss.read_index(str(idx / "index" / "index.faiss"))
        small.remove_ids(faiss.IDSelectorRange(0, 2))
        faiss.write_index(small, str(idx / "index" / "index.faiss"))
    if damage != "truncated":  # the part's manifest re-made to match its damaged files
        part = idx / ("store" if damage.startswith("truncated") else "index")
        manifest = json.loads((part / "manifest.json").read_text())
        if part.name == "index":
            manifest["count"] = int(small.ntotal)
        fields = {k: v for k, v in manifest.items()
                  if k not in ("format", "kind", "created", "files")}
        write_manifest(part, manifest["kind"], fields)
        assert json.loads((part / "manifest.json").read_text())["files"]
    with pytest.raises(IndexFileError) as info:
        load_retriever(index_settings(idx, onnx_dir), embedder)
    print(f"{damage}: {info.value}")
    msg = str(info.value)
    assert msg.startswith(f"{culprit}") and msg.endswith(
        f"rebuild it with: finrag index --corpus {corpus} --out {idx} "
        f"--embedder {(onnx_dir / 'model.onnx').resolve()}")


def test_a_folder_that_is_no_index_is_never_built_over(onnx_dir, corpus, tmp_path) -> None:
    keep = tmp_path / "my-notes"
    keep.mkdir()
    (keep / "notes.txt").write_text("precious")
    embedder = load_embedder(onnx_dir / "model.onnx")
    with pytest.raises(IndexFileError, match="manifest missing"):
        load_retriever(index_settings(keep, onnx_dir, corpus), embedder)
    assert (keep / "notes.txt").read_text() == "precious"


# -- the prepared model ----------------------------------------------------------------------

def linked_engines(prepared: Path, root: Path) -> Path:
    """An engines/ folder whose prepared model's files are hard links to the session copy
    (replace a file by unlinking it first: writing through a link would damage the original).
    Folders beside the files (int8_calibration/, the engine's cache) are not the model's."""
    out = root / "engines" / "models" / DEFAULT_MODEL_NAME
    out.mkdir(parents=True)
    for f in prepared.iterdir():
        if f.is_dir():
            continue
        try:
            os.link(f, out / f.name)
        except OSError:  # another filesystem
            shutil.copy2(f, out / f.name)
    return root / "engines"


@pytest.mark.parametrize("name,damage", [
    ("model.safetensors", "truncate"), ("model.safetensors", "header"),
    ("config.json", "truncate"), ("tokenizer.json", "truncate")])
def test_damaged_prepared_model_names_file_and_prepare_command(name, damage, prepared_default,
                                                               tmp_path) -> None:
    engines = linked_engines(prepared_default, tmp_path)
    path = engines / "models" / DEFAULT_MODEL_NAME / name
    with open(prepared_default / name, "rb") as fh:
        head = fh.read(8 << 20)  # a truncated copy needs no more than its first 8 MiB
    path.unlink()
    if damage == "truncate":
        path.write_bytes(head[: len(head) // 2] if len(head) < 8 << 20 else head)
    else:
        path.write_bytes(b"\xff" * 8 + head[8:])
    with pytest.raises(ModelFolderError) as info:
        resolve_model("default", engines_dir=engines, progress=False)
    print(info.value)
    assert info.value.path == path
    assert info.value.rebuild == f"rebuild it with: finrag prepare --model default " \
                                 f"--engines-dir {engines}"


# Runs `finrag prepare` with the converter held right after the weights are written (its
# next file write blocks after leaving a marker): the kill lands mid-write every time.
HELD_PREPARE = """
import sys, time
from pathlib import Path
from llm_engine.utils import gguf_convert
marker = Path(sys.argv[1])
def held(path, obj):
    marker.write_text(str(Path(path).parent))
    time.sleep(3600)
gguf_convert._write_json = held
from pipeline.cli import main
sys.exit(main(sys.argv[2:]))
"""


def kill_prepare_while_writing(engines: Path, marker: Path) -> tuple[Path, list[str]]:
    """Run `finrag prepare` (a real conversion) in a subprocess, held once its weights are
    in its temp folder, and SIGKILL it there; (that folder, what it held)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("FINRAG_ENGINES_DIR", None)
    proc = subprocess.Popen([sys.executable, "-c", HELD_PREPARE, str(marker), "prepare",
                             "--model", "default", "--engines-dir", str(engines)], cwd=REPO,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240  # a hang guard, not a speed bound
    try:
        while not marker.is_file():
            if proc.poll() is not None:
                pytest.fail(f"finrag prepare ended ({proc.returncode}) before it was held: "
                            f"{proc.stderr.read().decode()[-2000:]}")
            assert time.monotonic() < deadline, "finrag prepare not held within 240 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        tmp = Path(marker.read_text())
        return tmp, sorted(f.name for f in tmp.iterdir())
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_killed_model_preparation_leaves_the_previous_one(prepared_default, tmp_path) -> None:
    """`finrag prepare` is SIGKILLed while it writes the new folder; the prepared model it
    was replacing must stay whole and load, and the half-written folder must never be
    loaded, and be gone at the next start."""
    engines = linked_engines(prepared_default, tmp_path / "e")
    out = engines / "models" / DEFAULT_MODEL_NAME
    before = {f.name: (f.stat().st_size, f.stat().st_ino) for f in out.iterdir()}
    leftover, held = kill_prepare_while_writing(engines, tmp_path / "held")
    print(f"killed while writing; its temp folder held {held}")
    assert leftover.parent == out.parent and leftover.name.startswith(f".{DEFAULT_MODEL_NAME}.tmp-")
    assert "model.safetensors" in held and "finrag_prepared.json" not in held
    assert {f.name: (f.stat().st_size, f.stat().st_ino) for f in out.iterdir()} == before
    assert resolve_model("default", engines_dir=engines, progress=False) == out
    assert not leftover.exists()  # swept at this start: no conversion holds the lock
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as a, \
            safe_open(str(prepared_default / "model.safetensors"), "pt") as b:
        for name in ("model.embed_tokens.weight", "model.norm.weight"):
            assert a.get_tensor(name).equal(b.get_tensor(name))
    assert file_sha256(out / "config.json") == file_sha256(prepared_default / "config.json")
