"""retrexec end to end on the ONNX Runtime backend, and every error path."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from paths import REPO
from retr_support import exported

from retriever_trt.build.retrexec import main, parse_mem_pool

FAST = ["--backend=onnxruntime", "--warmUp=0", "--duration=0.2", "--iterations=4",
        "--avgRuns=2"]
STAT = r"min = ([\d.e+-]+) ms, max = ([\d.e+-]+) ms, mean = ([\d.e+-]+) ms, median = ([\d.e+-]+) ms"


@pytest.fixture(scope="session")
def art(tmp_path_factory):
    return exported(tmp_path_factory)


def run(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def parse_summary(out: str) -> dict:
    assert "=== Performance summary ===" in out
    qps = float(re.search(r"Throughput: ([\d.e+-]+) qps", out).group(1))
    lat = re.search(r"Latency: " + STAT + r", percentile\(90%\) = ([\d.e+-]+) ms", out)
    vals = [float(x) for x in lat.groups()]
    return {"qps": qps, "min": vals[0], "max": vals[1], "mean": vals[2], "median": vals[3],
            "p90": vals[4]}


def test_time_fp32_with_profile(art, capsys):
    onnx = art["dir"] / "model.onnx"
    rc, out, _ = run(capsys, [f"--onnx={onnx}", *FAST, "--minShapes=input_ids:1x16,"
                              "attention_mask:1x16", "--optShapes=input_ids:2x32,"
                              "attention_mask:2x32", "--maxShapes=input_ids:4x64,"
                              "attention_mask:4x64", "--percentile=90,99", "--verbose"])
    assert rc == 0
    s = parse_summary(out)
    assert s["qps"] > 0 and 0 < s["min"] <= s["median"] <= s["max"] and s["p90"] <= s["max"]
    assert s["min"] <= s["mean"] <= s["max"]
    assert "percentile(99%)" in out and "Compute Time:" in out
    assert "Average on 2 runs" in out and "batch 2" in out  # opt shape is timed by default
    assert out.strip().splitlines()[-1].startswith("&&&& PASSED retrexec")


def test_save_and_load_ort_engine(art, tmp_path, capsys):
    engine = tmp_path / "model.ort.onnx"
    rc, out, _ = run(capsys, [f"--onnx={art['dir'] / 'model.onnx'}", f"--saveEngine={engine}",
                              "--skipInference", "--backend=onnxruntime"])
    assert rc == 0 and engine.is_file() and "Skipped inference" in out
    rc, out, _ = run(capsys, [f"--loadEngine={engine}", *FAST,
                              "--shapes=input_ids:3x24,attention_mask:3x24"])
    assert rc == 0 and parse_summary(out)["qps"] > 0
    from retriever_trt.embedders.loader import load_embedder

    emb = load_embedder(engine)
    ref = load_embedder(art["dir"] / "model.onnx")
    texts = ["Total revenue in 2019", "What were the operating expenses?"]
    assert abs(emb.encode(texts) - ref.encode(texts)).max() < 1e-4


def test_int8_from_cache(art, capsys):
    rc, out, _ = run(capsys, [f"--onnx={art['dir'] / 'model.onnx'}", "--int8",
                              f"--calib={art['dir'] / 'model.int8.calib.json'}",
                              *FAST, "--shapes=input_ids:1x16,attention_mask:1x16"])
    assert rc == 0 and parse_summary(out)["qps"] > 0


def test_load_embedder_dispatch(art, tmp_path):
    from onnx_export.encoder import default_encoder_dir
    from retriever_trt.embedders.loader import load_embedder
    from retriever_trt.embedders.ort_embedder import OnnxRuntimeEmbedder
    from retriever_trt.embedders.torch_embedder import TorchEmbedder

    e = load_embedder(art["dir"] / "model.fp16.onnx")
    assert isinstance(e, OnnxRuntimeEmbedder) and e.precision == "fp16" and e.dim == 384
    assert load_embedder(art["dir"] / "model.int8.onnx").precision == "int8"
    assert isinstance(load_embedder(default_encoder_dir()), TorchEmbedder)
    (tmp_path / "x.plan").write_bytes(b"\0" * 16)
    with pytest.raises(ImportError, match=r"finrag\[gpu\]"):
        load_embedder(tmp_path / "x.plan")
    with pytest.raises(ValueError, match="unknown embedder file type"):
        load_embedder(art["calib"])
    with pytest.raises(FileNotFoundError):
        load_embedder(tmp_path / "none.onnx")


@pytest.mark.parametrize("extra,needle", [
    (["--minShapes=input_ids:1x16", "--optShapes=input_ids:64x16",
      "--maxShapes=input_ids:8x16"], "--optShapes 64x16 is outside"),
    (["--minShapes=input_ids:8x16", "--maxShapes=input_ids:4x16"], "--minShapes 8x16 exceeds"),
    (["--minShapes=input_ids:1x16", "--maxShapes=input_ids:4x64",
      "--shapes=input_ids:8x16"], "--shapes=8x16: outside"),
    (["--optShapes=input_ids:1x16,attention_mask:1x32"], "same shape"),
    (["--shapes=ids:1x16"], "unknown input"),
    (["--maxShapes=input_ids:4"], "2 dims"),
    (["--memPoolSize=workspace=1G"], "--memPoolSize"),
    (["--memPoolSize=dlaSRAM:1"], "workspace:N"),
    (["--percentile=ninety"], "--percentile"),
    (["--percentile=150"], "--percentile"),
    (["--iterations=-1"], "--iterations"),
    (["--int8", "--calib=/no/cache.json"], "--calibData=FILE"),
    (["--calibData=/no/data.txt", "--int8"], "/no/data.txt"),
    (["--backend=tensorrt"], "TensorRT is not installed"),
    (["--builderOptimizationLevel=9"], "expected 0 to 5"),
])
def test_errors(art, tmp_path, capsys, monkeypatch, extra, needle):
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # absent even where it is installed
    argv = [f"--onnx={art['dir'] / 'model.onnx'}", *extra]
    if "--backend=tensorrt" not in extra:
        argv.append("--backend=onnxruntime")
    if "--int8" in extra:  # a folder without model.int8.onnx
        (tmp_path / "model.onnx").symlink_to(art["dir"] / "model.onnx")
        argv[0] = f"--onnx={tmp_path / 'model.onnx'}"
    argv += ["--skipInference"]
    rc, out, err = run(capsys, argv)
    assert rc != 0, out
    assert len(err.strip().splitlines()) == 1 and needle in err, err
    assert "&&&& FAILED" in out


@pytest.mark.parametrize("flag", ["--onnx", "--loadEngine"])
def test_missing_and_corrupt_files(tmp_path, capsys, flag):
    rc, _, err = run(capsys, [f"{flag}={tmp_path / 'nope.onnx'}", "--backend=onnxruntime"])
    assert rc == 2 and f"{flag}=" in err and "not found" in err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a model")
    rc, _, err = run(capsys, [f"{flag}={bad}", "--backend=onnxruntime", "--skipInference"])
    assert rc != 0 and f"{flag}={bad}" in err and len(err.strip().splitlines()) == 1


def test_usage_errors_exit_2_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "retriever_trt.build.retrexec", "--bogus=1"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--bogus" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    proc = subprocess.run([sys.executable, "-m", "retriever_trt.build.retrexec"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and "--onnx=FILE or --loadEngine=FILE" in proc.stderr


def test_mem_pool_units():
    assert parse_mem_pool("workspace:1024") == 1024 << 20
    assert parse_mem_pool("workspace:2G") == 2 << 30
    assert parse_mem_pool("workspace:512K") == 512 << 10


@pytest.mark.parametrize("name", ["minilm.int8.plan", "minilm.engine"])
def test_a_plan_name_without_tensorrt_saves_the_graph_beside_it(art, tmp_path, capsys,
                                                                 monkeypatch, name):
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # absent even where it is installed
    # No --backend: the ONNX Runtime backend writes its graph under an .onnx name and says
    # where, never a graph under a plan's name (which load_embedder would then refuse).
    target = tmp_path / name
    rc, out, err = run(capsys, [f"--onnx={art['dir'] / 'model.onnx'}", f"--saveEngine={target}",
                                "--skipInference"])
    graph = tmp_path / (name.rsplit(".", 1)[0] + ".opt.onnx")
    assert rc == 0 and "&&&& PASSED" in out, err
    assert f"[W] --saveEngine={target}: a plan needs TensorRT" in err
    assert f"is saved as {graph} (--loadEngine={graph} times it again)" in err
    assert sorted(tmp_path.iterdir()) == [graph]
    target.write_bytes(b"\0" * 16)
    rc, _, err = run(capsys, [f"--loadEngine={target}", "--skipInference"])
    assert rc == 2 and f"--loadEngine={target}: a" in err and "TensorRT plan, which needs" in err
    rc, out, _ = run(capsys, [f"--loadEngine={graph}", "--skipInference"])
    assert rc == 0 and "&&&& PASSED" in out


def test_save_engine_of_another_kind_is_refused_with_the_name_to_use(art, tmp_path, capsys):
    target = tmp_path / "minilm.bin"
    rc, out, err = run(capsys, [f"--onnx={art['dir'] / 'model.onnx'}", f"--saveEngine={target}",
                                "--backend=onnxruntime", "--skipInference"])
    assert rc == 2 and "give it the .onnx extension" in err
    assert f"--saveEngine={tmp_path / 'minilm'}.opt.onnx" in err
    assert len(err.strip().splitlines()) == 1 and "&&&& FAILED" in out
    assert list(tmp_path.iterdir()) == []


def test_flags_onnxruntime_cannot_honour_are_reported(art, tmp_path, capsys):
    cache = tmp_path / "timing.cache"
    rc, out, err = run(capsys, [f"--onnx={art['dir'] / 'model.onnx'}", "--backend=onnxruntime",
                                f"--timingCacheFile={cache}", "--memPoolSize=workspace:64",
                                "--useCudaGraph", "--skipInference"])
    assert rc == 0 and not cache.exists()
    warned = [line for line in err.splitlines() if line.startswith("[W] ")]
    assert [w.split(":")[0] for w in warned] == ["[W] --timingCacheFile", "[W] --memPoolSize",
                                                 "[W] --useCudaGraph"]
    assert all("ignored" in w for w in warned)


def test_export_times_profile_and_honoured_flags(art, tmp_path, capsys):
    times = tmp_path / "times.json"
    rc, out, err = run(capsys, [f"--onnx={art['dir'] / 'model.onnx'}", *FAST,
                                "--shapes=input_ids:2x16,attention_mask:2x16",
                                f"--exportTimes={times}", "--dumpProfile", "--noDataTransfers",
                                "--stronglyTyped", "--builderOptimizationLevel=1"])
    assert rc == 0 and "[W]" not in err, err
    records = json.loads(times.read_text())
    n = int(re.search(r"Exported (\d+) iterations", out).group(1))
    assert len(records) == n >= 4
    starts = [r["startComputeMs"] for r in records]
    assert starts == sorted(starts)
    for r in records:  # ONNX Runtime on CPU: compute only, no transfers
        assert r["inMs"] == r["outMs"] == 0 and r["computeMs"] > 0
        assert r["endComputeMs"] == pytest.approx(r["startComputeMs"] + r["computeMs"])
        assert r["latencyMs"] == pytest.approx(r["computeMs"])
    mean = float(re.search(r"Latency: min = [\d.e+-]+ ms, max = [\d.e+-]+ ms, "
                           r"mean = ([\d.e+-]+) ms", out).group(1))
    assert mean == pytest.approx(sum(r["latencyMs"] for r in records) / n, rel=1e-3)
    lines = out[out.index(f"=== Profile ({n} iterations ) ==="):].splitlines()
    end = next(i for i, line in enumerate(lines) if line.endswith("   Total"))
    layers = lines[2:end]
    assert len(layers) > 10 and any("MatMul" in x for x in layers)
    assert "--stronglyTyped: networks are always strongly typed" in out
    assert "--noDataTransfers: inputs stay in host memory" in out
    assert "--builderOptimizationLevel=1: ONNX Runtime graph optimization level 'basic'" in out


@pytest.mark.parametrize("int8_there", [True, False])
def test_best_picks_the_lowest_precision_available(art, tmp_path, capsys, int8_there):
    onnx = art["dir"] / "model.onnx"
    if not int8_there:  # a folder with the FP32 file only, and no calibration
        (tmp_path / "model.onnx").symlink_to(onnx)
        onnx = tmp_path / "model.onnx"
    rc, out, _ = run(capsys, [f"--onnx={onnx}", "--best", "--backend=onnxruntime",
                              "--skipInference"])
    assert rc == 0
    assert f"--best: building from {'INT8 Q/DQ' if int8_there else 'FP16'}" in out
    assert int8_there or (tmp_path / "model.fp16.onnx").is_file()
