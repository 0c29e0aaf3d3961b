"""retrexec's --sparsity and --workspace (issue 52): trtexec command lines people already
have, and the 2:4 pruning behind --sparsity=force."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from retr_support import exported

from onnx_export.sparsity import PruneReport, prune_model, write_pruned
from retriever_trt.build.retrexec import main

# Timing only, so the command lines stay quick on a shared CPU; every other flag is theirs.
QUICK = ["--warmUp=0", "--duration=0", "--iterations=2", "--avgRuns=1"]


@pytest.fixture(scope="module")
def art(tmp_path_factory):
    return exported(tmp_path_factory)


def nonzeros_per_group(weight: np.ndarray, axis: int) -> np.ndarray:
    """Nonzero count of each 4 consecutive weights along `axis`."""
    moved = np.moveaxis(weight, axis, -1)
    return np.count_nonzero(moved.reshape(*moved.shape[:-1], -1, 4), axis=-1)


# The published --workspace line (`retrexec --onnx=... --fp16 --workspace=4096 --saveEngine=...`)
# runs as the README writes it, through the installed command, in test_readme.py, which
# checks its two [W] lines; test_retrexec.py checks a plan's name saved without TensorRT.


def test_the_published_sparsity_command_line_passes(art, capsys):
    # trtexec --onnx=retriever.onnx --minShapes=input:1x32 --optShapes=input:8x128
    #   --maxShapes=input:16x256 --fp16 --sparsity=enable, with the encoder's input name.
    rc = main([f"--onnx={art['dir'] / 'model.onnx'}", "--minShapes=input_ids:1x32",
               "--optShapes=input_ids:8x128", "--maxShapes=input_ids:16x256", "--fp16",
               "--sparsity=enable", "--backend=onnxruntime", *QUICK])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert out.strip().splitlines()[-1].startswith("&&&& PASSED retrexec")
    assert "shapes input_ids:8x128" in out
    (warned,) = [line for line in err.splitlines() if line.startswith("[W] ")]
    assert warned.startswith("[W] --sparsity=enable: ignored: ONNX Runtime has no 2:4 sparse")


def test_force_prunes_and_runs_the_pruned_encoder(art, tmp_path, capsys):
    source = tmp_path / "model.onnx"
    source.symlink_to(art["dir"] / "model.onnx")
    rc = main([f"--onnx={source}", "--sparsity=force", "--backend=onnxruntime",
               "--shapes=input_ids:2x16,attention_mask:2x16", "--dumpProfile", *QUICK])
    out, err = capsys.readouterr()
    pruned = tmp_path / "model.sparse24.onnx"
    assert rc == 0 and "[W]" not in err, err
    assert "--sparsity=force: pruned 36 linear weights to 2:4 (" in out
    assert f"Loading {pruned} with ONNX Runtime" in out and "=== Profile (" in out
    dense, sparse = (onnx.load(str(p)) for p in (source, pruned))
    linear = {n.input[1] for n in dense.graph.node if n.op_type == "MatMul"}
    changed = 0
    for a, b in zip(dense.graph.initializer, sparse.graph.initializer, strict=True):
        if a.name in linear:  # (in, out) weights: groups run along axis 0
            assert (nonzeros_per_group(numpy_helper.to_array(b), 0) == 2).all(), a.name
            changed += 1
        else:
            assert a == b, f"{a.name} is not a linear weight but changed"
    assert changed == 36


def linear_graph(rng: np.random.Generator) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """MatMul (weight (in, out)), Gemm transB=1 (weight (out, in)) with its bias, a bias
    Add, a Q/DQ MatMul (zero point 0), one with zero point 1, and an attention-like MatMul
    of two activations."""
    w = {"w_mm": rng.standard_normal((8, 12)), "w_gemm": rng.standard_normal((16, 12)),
         "c_gemm": rng.standard_normal(16), "b_add": rng.standard_normal(16),
         "scale": np.full(8, 0.05), "scale1": np.full(8, 0.05)}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    q = rng.integers(-128, 128, (16, 8), dtype=np.int8)
    q[0, 0], q[1, 0] = -128, 127  # abs(-128) overflows int8: still the largest magnitude
    w |= {"w_q": q, "zp": np.zeros(8, np.int8), "w_q1": q.copy(), "zp1": np.ones(8, np.int8)}
    nodes = [
        helper.make_node("MatMul", ["x", "w_mm"], ["h1"]),
        helper.make_node("Gemm", ["h1", "w_gemm", "c_gemm"], ["h2"], transB=1),
        helper.make_node("Add", ["h2", "b_add"], ["h3"]),
        helper.make_node("DequantizeLinear", ["w_q", "scale", "zp"], ["w_dq"], axis=1),
        helper.make_node("MatMul", ["h3", "w_dq"], ["y"]),
        helper.make_node("DequantizeLinear", ["w_q1", "scale1", "zp1"], ["w_dq1"], axis=1),
        helper.make_node("MatMul", ["h3", "w_dq1"], ["y1"]),
        helper.make_node("Transpose", ["y"], ["yt"]),
        helper.make_node("MatMul", ["y", "yt"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y1", "z")],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), w


def test_2_4_pruning_keeps_the_two_largest_along_the_input_dimension(tmp_path):
    model, before = linear_graph(np.random.default_rng(0))
    report = PruneReport(tmp_path / "m.onnx")
    prune_model(model, report)
    after = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert sorted(report.pruned) == ["w_gemm", "w_mm", "w_q"]
    assert any("nonzero zero point" in s for s in report.skipped)
    for name, axis in (("w_mm", 0), ("w_gemm", 1), ("w_q", 0)):  # Gemm transB: (out, in)
        assert (nonzeros_per_group(after[name], axis) == 2).all(), name
        # The other axis has no such pattern: the groups ran along the input dimension.
        assert not (nonzeros_per_group(after[name], 1 - axis) == 2).all(), name
        kept = np.moveaxis(np.abs(before[name].astype(np.float64)), axis, -1)
        kept = kept.reshape(*kept.shape[:-1], -1, 4)
        mask = np.moveaxis(after[name] != 0, axis, -1).reshape(kept.shape)
        smallest_kept = np.where(mask, kept, np.inf).min(-1)
        largest_dropped = np.where(mask, -np.inf, kept).max(-1)
        assert (smallest_kept >= largest_dropped).all(), name
    assert after["w_q"][0, 0] == -128 and after["w_q"][1, 0] == 127
    for name in ("c_gemm", "b_add", "scale", "zp", "w_q1", "zp1", "scale1"):
        assert np.array_equal(after[name], before[name]), f"{name} changed"
    # The pruned graph computes the same layers with the pruned weights.
    x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    y = ort.InferenceSession(model.SerializeToString(),
                             providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    h = (x @ after["w_mm"]) @ after["w_gemm"].T + after["c_gemm"] + after["b_add"]
    assert np.allclose(y, h @ (after["w_q"].astype(np.float32) * 0.05), atol=1e-3)


def test_write_pruned_is_beside_its_source_and_says_so(tmp_path):
    model, _ = linear_graph(np.random.default_rng(2))
    source = tmp_path / "model.fp16.onnx"
    onnx.save(model, source)
    report = write_pruned(source)
    assert report.path == tmp_path / "model.fp16.sparse24.onnx" and report.path.is_file()
    meta = {p.key: p.value for p in onnx.load(str(report.path)).metadata_props}
    assert meta["finrag.sparsity"] == "2:4 pruned (no fine-tune)"
    assert report.line().startswith(f"pruned 3 linear weights to 2:4 ({report.zeroed:,} of ")
    assert report.total == 8 * 12 + 16 * 12 + 16 * 8
    assert report.total // 2 - 2 <= report.zeroed <= report.total // 2  # w_q may hold zeros


@pytest.mark.parametrize("extra,needle", [
    (["--workspace=4G"], "--workspace=4G: expected N in MiB"),
    (["--workspace=64", "--memPoolSize=workspace:64"], "keep --memPoolSize only"),
    (["--sparsity=on"], "argument --sparsity: invalid choice: 'on'"),
])
def test_bad_workspace_and_sparsity_are_one_line_errors(art, capsys, extra, needle):
    argv = [f"--onnx={art['dir'] / 'model.onnx'}", "--backend=onnxruntime", "--skipInference",
            *extra]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own refusals
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_sparsity_with_load_engine_is_reported_as_ignored(art, tmp_path, capsys):
    engine = tmp_path / "model.onnx"
    engine.symlink_to(art["dir"] / "model.onnx")
    rc = main([f"--loadEngine={engine}", "--sparsity=force", "--backend=onnxruntime",
               "--skipInference"])
    out, err = capsys.readouterr()
    assert rc == 0 and "&&&& PASSED" in out
    assert err.splitlines() == ["[W] --sparsity=force: ignored with --loadEngine: sparsity is "
                                "chosen when an engine is built"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]  # nothing pruned
