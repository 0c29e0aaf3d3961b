"""TensorRT backend logic (embedder, builder, retrexec's TensorRT branch) against
tests/fake_tensorrt.py, a fake of TensorRT 10's Python API with its failure conventions."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest
from fake_tensorrt import DIM, FakeDevice, make_fake_trt, plan_bytes
from retr_support import exported

from retriever_trt.embedders.profiles import Profile, Shape


@pytest.fixture
def fake(tmp_path, monkeypatch):
    profiles = [Profile(Shape(1, 8), Shape(4, 16), Shape(4, 32)),
                Profile(Shape(1, 33), Shape(2, 64), Shape(2, 128))]
    device, calls = FakeDevice(), []
    trt = make_fake_trt(device, calls)
    monkeypatch.setitem(sys.modules, "tensorrt", trt)
    plan = tmp_path / "model.fp16.plan"
    plan.write_bytes(plan_bytes(profiles))
    return types.SimpleNamespace(trt=trt, device=device, calls=calls, plan=plan,
                                 profiles=profiles)


def reference(embedder, texts):
    out = []
    for t in texts:
        ids = np.array(embedder.tokenizer.encode(t).ids[:128])
        v = np.bincount(ids % DIM, minlength=DIM).astype(np.float32)
        out.append(v / np.linalg.norm(v))
    return np.stack(out)


def test_encode_through_fake_engine(fake):
    from retriever_trt.embedders.trt_embedder import TensorRTEmbedder

    e = TensorRTEmbedder(fake.plan, device=fake.device)  # `tensorrt` comes from sys.modules
    assert e.profiles == fake.profiles and e.dim == DIM and e.precision == "fp16"
    texts = ["short one", "a somewhat longer sentence about revenue and margins " * 6,
             "x", "what was the effective tax rate in 2019?", "cash"] * 2
    got = e.encode(texts)
    np.testing.assert_allclose(got, reference(e, texts), atol=1e-6)
    executed = [(Shape(*c[1]), c[3]) for c in fake.calls if c[0] == "execute"]
    # Every batch ran under the profile that was active then, and both profiles were used.
    assert executed and all(fake.profiles[k].allows(shape) for shape, k in executed)
    assert {k for _, k in executed} == {0, 1}
    assert ("profile", 1, fake.device.stream_handle) in fake.calls  # long texts switch profile
    shapes = {(c[1], c[2]) for c in fake.calls if c[0] == "set_input_shape"}
    assert {n for n, _ in shapes} == {"input_ids", "attention_mask"}
    assert all(s[1] in (8, 16, 32, 64, 128) for _, s in shapes)


def test_run_batch_rejects_shape_outside_profile(fake):
    from retriever_trt.embedders.trt_embedder import TensorRTEmbedder

    e = TensorRTEmbedder(fake.plan, device=fake.device)
    ids = np.ones((8, 16), np.int64)
    with pytest.raises(ValueError, match="outside profile 0"):
        e.run_batch(ids, ids, profile=0)
    # Below our own check, TensorRT's refusal (False) is an error, not a run with stale shapes.
    with pytest.raises(ValueError, match=r"TensorRT refused input_ids shape \(8, 16\) for profile 0"):
        e.stage_inputs(ids, ids)
    assert not [c for c in fake.calls if c[0] == "execute"]
    e.profiles[1] = fake.profiles[0]  # our view of profile 1 wrong: TensorRT's check catches it
    with pytest.raises(ValueError, match="TensorRT refused"):
        e.run_batch(np.ones((2, 16), np.int64), np.ones((2, 16), np.int64), profile=1)


def test_execution_and_profile_switch_failures_raise(fake):
    from retriever_trt.embedders.trt_embedder import TensorRTEmbedder

    e = TensorRTEmbedder(fake.plan, device=fake.device)
    e.profiles.append(fake.profiles[0])  # a profile the engine does not have
    ids = np.ones((1, 8), np.int64)
    with pytest.raises(RuntimeError, match="refused optimization profile 2"):
        e.run_batch(ids, ids, profile=2)
    e.context.execute_async_v3 = lambda stream: False
    with pytest.raises(RuntimeError, match="execution failed"):
        e.run_batch(ids, ids, profile=0)


def test_bad_plan_and_missing_tensorrt(fake, tmp_path, monkeypatch):
    from retriever_trt.embedders import trt_embedder

    bad = tmp_path / "bad.plan"
    bad.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a TensorRT plan"):
        trt_embedder.TensorRTEmbedder(bad, device=fake.device)
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # import now raises ImportError
    with pytest.raises(ImportError, match=r"pip install finrag\[gpu\]"):
        trt_embedder.TensorRTEmbedder(fake.plan, device=fake.device)


def test_engine_io_requires_contract_names(fake):
    from retriever_trt.embedders.trt_embedder import engine_io

    engine = fake.trt.Runtime(None).deserialize_cuda_engine(fake.plan.read_bytes())
    assert engine_io(engine, fake.trt) == (["input_ids", "attention_mask"], ["embeddings"])
    engine.names = ["ids", "attention_mask", "embeddings"]
    with pytest.raises(ValueError, match="lacks tensor"):
        engine_io(engine, fake.trt)


@pytest.fixture(scope="module")
def art(tmp_path_factory):
    return exported(tmp_path_factory)


PROF = Profile(Shape(1, 16), Shape(8, 64), Shape(32, 128))


def test_builder_uses_strongly_typed_network(fake, art, tmp_path):
    from retriever_trt.build import builder

    tc = tmp_path / "timing.cache"
    res = builder.build_tensorrt(art["dir"] / "model.fp16.onnx", tmp_path / "out.plan", [PROF],
                                 workspace_bytes=1 << 30, timing_cache=tc)
    assert res.path.read_bytes() == plan_bytes([PROF], 384) and tc.read_bytes() == b"CACHE"
    assert not res.timing_cache_hit and ("cache_in", b"") in fake.calls
    (built,) = fake.trt.built
    assert built["flags"] == 1 << 3 and built["pools"] == {"ws": 1 << 30}
    assert built["profiles"] == [PROF] and built["cache"][1] is True
    assert "Cast" in built["ops"]  # the FP16 file's casts carry the precision
    meta = json.loads((tmp_path / "out.plan.json").read_text())
    assert meta["precision"] == "fp16" and meta["profiles"] == [["1x16", "8x64", "32x128"]]
    res = builder.build_tensorrt(art["dir"] / "model.fp16.onnx", tmp_path / "out.plan", [PROF],
                                 timing_cache=tc)
    assert res.timing_cache_hit and ("cache_in", b"CACHE") in fake.calls


def test_int8_qdq_build_takes_precision_from_the_file(fake, art, tmp_path):
    from retriever_trt.build import builder
    from retriever_trt.embedders.trt_embedder import TensorRTEmbedder

    res = builder.build_tensorrt(art["dir"] / "model.int8.onnx", tmp_path / "int8.plan", [PROF])
    (built,) = fake.trt.built
    # Strongly typed, no INT8 builder flag: precision comes from the Q/DQ pairs the parser read.
    assert built["flags"] == 1 << 3 and built["builder_flags"] == set()
    assert built["ops"].count("QuantizeLinear") >= 6 and "DequantizeLinear" in built["ops"]
    e = TensorRTEmbedder(res.path, device=fake.device)
    assert e.precision == "int8" and e.profiles == [PROF]
    assert e.dim == 384 and e.encode(["revenue in 2019"]).shape == (1, 384)


def test_builder_failures_are_build_errors(fake, art, tmp_path):
    from retriever_trt.build import builder

    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not onnx")
    with pytest.raises(builder.BuildError, match="ONNX parser failed: ModelImporter"):
        builder.build_tensorrt(bad, tmp_path / "a.plan", [PROF])
    # A network with an input our profile does not cover: add_optimization_profile gives -1.
    import onnx

    model = onnx.load(art["dir"] / "model.onnx", load_external_data=False)
    extra = onnx.helper.make_tensor_value_info("token_type_ids", onnx.TensorProto.INT64,
                                               ["batch", "seq"])
    model.graph.input.append(extra)
    three = tmp_path / "three_inputs.onnx"
    onnx.save(model, three)
    with pytest.raises(builder.BuildError, match="rejected the optimization profile 1x16..32x128"):
        builder.build_tensorrt(three, tmp_path / "b.plan", [PROF])
    fake.trt.fail_build = True
    with pytest.raises(builder.BuildError, match="could not build an engine"):
        builder.build_tensorrt(art["dir"] / "model.fp16.onnx", tmp_path / "c.plan", [PROF])
    assert not list(tmp_path.glob("*.plan*"))  # nothing half-written


def test_retrexec_tensorrt_branch(fake, art, tmp_path, capsys, monkeypatch):
    from retriever_trt.build.retrexec import main
    from retriever_trt.embedders import trt_embedder

    monkeypatch.setattr(trt_embedder, "TorchCudaDevice", lambda: fake.device)
    plan = tmp_path / "m.plan"
    argv = [f"--onnx={art['dir'] / 'model.onnx'}", "--int8", f"--saveEngine={plan}",
            "--minShapes=input_ids:1x16,attention_mask:1x16",
            "--optShapes=input_ids:2x32,attention_mask:2x32",
            "--maxShapes=input_ids:4x64,attention_mask:4x64", "--memPoolSize=workspace:64",
            "--warmUp=0", "--duration=0", "--iterations=3", "--avgRuns=1"]
    assert main(argv) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "Backend: tensorrt" in out and "Engine built in" in out
    assert "H2D Latency" in out or "Compute Time" in out
    assert out.strip().splitlines()[-1].startswith("&&&& PASSED retrexec")
    (built,) = fake.trt.built
    assert "QuantizeLinear" in built["ops"] and built["pools"] == {"ws": 64 << 20}
    timed = [c[1] for c in fake.calls if c[0] == "execute"]
    assert len(timed) >= 3 and set(timed) == {(2, 32)}  # the opt shape, by default
    # --loadEngine times the saved plan without building.
    assert main([f"--loadEngine={plan}", "--warmUp=0", "--duration=0", "--iterations=2"]) == 0
    assert len(fake.trt.built) == 1
    # A shape the engine's profile does not allow fails as TensorRT would refuse it.
    rc = main([f"--loadEngine={plan}", "--shapes=input_ids:8x16,attention_mask:8x16",
               "--minShapes=input_ids:1x16,attention_mask:1x16",
               "--maxShapes=input_ids:8x16,attention_mask:8x16", "--iterations=1",
               "--warmUp=0", "--duration=0"])
    err = capsys.readouterr().err
    assert rc == 1 and "TensorRT refused input_ids shape (8, 16)" in err


@pytest.mark.parametrize("sparsity,sparse_layers", [("disable", None), ("enable", 0),
                                                    ("force", 36)])
def test_retrexec_sparsity_and_workspace_on_tensorrt(fake, art, tmp_path, capsys, monkeypatch,
                                                     sparsity, sparse_layers):
    from retriever_trt.build.retrexec import main
    from retriever_trt.embedders import trt_embedder

    monkeypatch.setattr(trt_embedder, "TorchCudaDevice", lambda: fake.device)
    (tmp_path / "model.onnx").symlink_to(art["dir"] / "model.onnx")
    argv = [f"--onnx={tmp_path / 'model.onnx'}", f"--saveEngine={tmp_path / 'm.plan'}",
            "--workspace=64", f"--sparsity={sparsity}", "--skipInference"]
    assert main(argv) == 0, capsys.readouterr()
    out, err = capsys.readouterr()
    (built,) = fake.trt.built
    assert built["pools"] == {"ws": 64 << 20}  # --workspace=N is N MiB of workspace pool
    assert err.splitlines() == ["[W] --workspace is deprecated (TensorRT 8.4+): read as "
                                "--memPoolSize=workspace:64 (MiB)"]
    assert built["builder_flags"] == (set() if sparsity == "disable" else {"SPARSE_WEIGHTS"})
    # force builds from the pruned file, whose 36 linear weights the fake finds 2:4 along
    # their input dimension; enable leaves the dense weights, which no sparse kernel fits.
    pruned = tmp_path / "model.sparse24.onnx"
    assert pruned.is_file() == (sparsity == "force")
    assert f"Building TensorRT engine from {pruned}" in out or sparsity != "force"
    if sparse_layers is None:
        assert "Sparsity:" not in out
    else:
        assert (f"Sparsity: {sparse_layers} layers run on 2:4 sparse kernels, of "
                f"{sparse_layers} with 2:4 weights") in out
