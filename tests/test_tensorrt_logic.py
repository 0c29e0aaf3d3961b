"""TensorRT backend logic against a small fake of TensorRT 10/11's documented Python API.

The fake engine "computes" embeddings from the ids in the device buffers (a numpy
stand-in for device memory), so the whole path (profile read-back, shape setting,
tensor addresses, staging copies, batching) runs without a GPU.
"""

from __future__ import annotations

import importlib.machinery
import json
import sys
import types

import numpy as np
import pytest
from retr_support import exported

from retriever_trt.profiles import Profile, Shape

DIM = 8


class FakeDevice:
    """numpy 'device': buffers addressed by integer handles, a no-op stream."""

    def __init__(self) -> None:
        self.mem: dict[int, np.ndarray] = {}
        self.stream_handle = 1234
        self.stream = types.SimpleNamespace(synchronize=lambda: None)
        self.copies = 0

    def alloc(self, shape, dtype):
        buf = np.zeros(shape, dtype=dtype)
        self.mem[id(buf)] = buf
        return buf

    @staticmethod
    def ptr(buf) -> int:
        return id(buf)

    def h2d(self, buf, array):
        self.copies += 1
        buf.reshape(-1)[: array.size] = array.reshape(-1)

    def d2h(self, buf, shape):
        return buf.reshape(-1)[: int(np.prod(shape))].reshape(shape).copy()


def plan_bytes(profiles: list[Profile], dim: int = DIM) -> bytes:
    """The fake's serialized engine: its profiles and output width, as a real plan carries them."""
    return b"PLAN" + json.dumps({"dim": dim, "profiles": [
        [[s.batch, s.seq] for s in (p.min, p.opt, p.max)] for p in profiles]}).encode()


def make_fake_trt(device: FakeDevice, calls: list) -> types.ModuleType:
    """TensorRT 10's Python API as far as our code uses it, with its failure conventions:
    bool results from set_input_shape / set_optimization_profile_async / execute_async_v3 and
    the parser, -1 from add_optimization_profile, None from build_serialized_network and
    deserialize_cuda_engine."""
    trt = types.ModuleType("tensorrt")
    trt.__spec__ = importlib.machinery.ModuleSpec("tensorrt", None)  # find_spec sees it
    trt.TensorIOMode = types.SimpleNamespace(INPUT="INPUT", OUTPUT="OUTPUT")
    trt.int64, trt.float32 = "int64", "float32"
    trt.nptype = lambda dt: {"int64": np.int64, "float32": np.float32}[dt]
    trt.NetworkDefinitionCreationFlag = types.SimpleNamespace(STRONGLY_TYPED=3)
    trt.MemoryPoolType = types.SimpleNamespace(WORKSPACE="ws")
    trt.fail_build = False  # tests flip these to reach the failure paths
    trt.built: list[dict] = []

    class Logger:
        WARNING, VERBOSE = 2, 4

        def __init__(self, level):
            self.level = level

    class Context:
        def __init__(self, profiles, dim):
            self.profiles, self.dim, self.active = profiles, dim, 0
            self.shapes, self.addr = {}, {}

        def set_input_shape(self, name, shape):
            calls.append(("set_input_shape", name, tuple(shape)))
            if not self.profiles[self.active].allows(Shape(*shape)):
                return False  # TensorRT logs "out of bounds of profile" and keeps the old shape
            self.shapes[name] = tuple(shape)
            return True

        def set_tensor_address(self, name, ptr):
            self.addr[name] = ptr

        def set_optimization_profile_async(self, index, stream):
            calls.append(("profile", index, stream))
            if not 0 <= index < len(self.profiles):
                return False
            self.active = index
            self.shapes = {}  # a profile switch invalidates the input shapes
            return True

        def get_tensor_shape(self, name):
            return (self.shapes["input_ids"][0], self.dim) if name == "embeddings" else self.shapes[name]

        def execute_async_v3(self, stream):
            if set(self.shapes) != {"input_ids", "attention_mask"}:
                return False  # input shapes not all specified
            calls.append(("execute", self.shapes["input_ids"], stream, self.active))
            b, s = self.shapes["input_ids"]
            ids = device.mem[self.addr["input_ids"]].reshape(-1)[: b * s].reshape(b, s)
            mask = device.mem[self.addr["attention_mask"]].reshape(-1)[: b * s].reshape(b, s)
            # A deterministic "embedding": histogram of masked ids mod dim, normalised.
            out = np.zeros((b, self.dim), np.float32)
            for r in range(b):
                np.add.at(out[r], ids[r][mask[r] == 1] % self.dim, 1.0)
            out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-12
            device.mem[self.addr["embeddings"]].reshape(-1)[: b * self.dim] = out.reshape(-1)
            return True

    class Engine:
        names = ["input_ids", "attention_mask", "embeddings"]
        num_io_tensors = 3

        def __init__(self, profiles, dim):
            self.profiles, self.dim = profiles, dim
            self.num_optimization_profiles = len(profiles)

        def get_tensor_name(self, i):
            return self.names[i]

        def get_tensor_mode(self, name):
            return trt.TensorIOMode.OUTPUT if name == "embeddings" else trt.TensorIOMode.INPUT

        def get_tensor_dtype(self, name):
            return trt.float32 if name == "embeddings" else trt.int64

        def get_tensor_shape(self, name):
            return (-1, self.dim) if name == "embeddings" else (-1, -1)

        def get_tensor_profile_shape(self, name, k):
            p = self.profiles[k]
            return [(p.min.batch, p.min.seq), (p.opt.batch, p.opt.seq), (p.max.batch, p.max.seq)]

        def create_execution_context(self):
            return Context(self.profiles, self.dim)

    class Runtime:
        def __init__(self, logger):
            self.logger = logger

        def deserialize_cuda_engine(self, blob):
            if not blob.startswith(b"PLAN"):
                return None
            plan = json.loads(blob[4:])
            return Engine([Profile(*(Shape(*s) for s in p)) for p in plan["profiles"]], plan["dim"])

    class Network:
        def __init__(self, flags):
            self.flags, self.inputs, self.ops, self.dim = flags, [], [], 0

    class OptProfile:
        def __init__(self):
            self.shapes = {}

        def set_shape(self, name, lo, opt, hi):
            self.shapes[name] = (tuple(lo), tuple(opt), tuple(hi))

    class Cache:
        def __init__(self, blob=b"CACHE"):
            self.blob = blob

        def serialize(self):
            return self.blob

    class Config:
        def __init__(self, network):
            self.network, self.profiles, self.pools, self.cache = network, [], {}, None

        def set_memory_pool_limit(self, pool, size):
            self.pools[pool] = size

        def add_optimization_profile(self, p):
            # Invalid: an input of the network left out, or min <= opt <= max broken.
            if set(p.shapes) != set(self.network.inputs) or any(
                    not (lo[i] <= opt[i] <= hi[i]) for lo, opt, hi in p.shapes.values()
                    for i in range(2)):
                return -1
            self.profiles.append(p)
            return len(self.profiles) - 1

        def create_timing_cache(self, blob):
            calls.append(("cache_in", blob))
            return Cache()

        def set_timing_cache(self, cache, ignore_mismatch):
            self.cache = (cache, ignore_mismatch)
            return True

        def get_timing_cache(self):
            return Cache()

    class Builder:
        def __init__(self, logger):
            self.network = None

        def create_network(self, flags):
            self.network = Network(flags)
            return self.network

        def create_builder_config(self):
            return Config(self.network)

        def create_optimization_profile(self):
            return OptProfile()

        def build_serialized_network(self, network, config):
            if trt.fail_build or not config.profiles:
                return None
            profiles = [Profile(*(Shape(*p.shapes["input_ids"][k]) for k in range(3)))
                        for p in config.profiles]
            trt.built.append({"flags": network.flags, "ops": network.ops, "pools": config.pools,
                              "profiles": profiles, "cache": config.cache})
            return plan_bytes(profiles, network.dim)

    class OnnxParser:
        def __init__(self, network, logger):
            self.network, self.errors = network, []

        @property
        def num_errors(self):
            return len(self.errors)

        def get_error(self, i):
            return self.errors[i]

        def parse_from_file(self, path):
            import onnx

            try:
                model = onnx.load(path, load_external_data=False)
            except Exception as exc:  # noqa: BLE001 - the real parser reports, never raises
                self.errors.append(f"ModelImporter: failed to parse {path}: {exc}")
                return False
            self.network.inputs = [i.name for i in model.graph.input]
            self.network.ops = [n.op_type for n in model.graph.node]
            self.network.dim = model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
            return True

    trt.Logger, trt.Runtime, trt.Builder, trt.OnnxParser = Logger, Runtime, Builder, OnnxParser
    return trt


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
    from retriever_trt.trt_embedder import TensorRTEmbedder

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
    from retriever_trt.trt_embedder import TensorRTEmbedder

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
    from retriever_trt.trt_embedder import TensorRTEmbedder

    e = TensorRTEmbedder(fake.plan, device=fake.device)
    e.profiles.append(fake.profiles[0])  # a profile the engine does not have
    ids = np.ones((1, 8), np.int64)
    with pytest.raises(RuntimeError, match="refused optimization profile 2"):
        e.run_batch(ids, ids, profile=2)
    e.context.execute_async_v3 = lambda stream: False
    with pytest.raises(RuntimeError, match="execution failed"):
        e.run_batch(ids, ids, profile=0)


def test_bad_plan_and_missing_tensorrt(fake, tmp_path, monkeypatch):
    from retriever_trt import trt_embedder

    bad = tmp_path / "bad.plan"
    bad.write_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a TensorRT plan"):
        trt_embedder.TensorRTEmbedder(bad, device=fake.device)
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # import now raises ImportError
    with pytest.raises(ImportError, match=r"pip install finrag\[gpu\]"):
        trt_embedder.TensorRTEmbedder(fake.plan, device=fake.device)


def test_engine_io_requires_contract_names(fake):
    from retriever_trt.trt_embedder import engine_io

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
    from retriever_trt import builder

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
    from retriever_trt import builder
    from retriever_trt.trt_embedder import TensorRTEmbedder

    res = builder.build_tensorrt(art["dir"] / "model.int8.onnx", tmp_path / "int8.plan", [PROF])
    (built,) = fake.trt.built
    # Strongly typed, no INT8 builder flag (the fake's config has no set_flag to call):
    # precision comes from the Q/DQ pairs the parser read.
    assert built["flags"] == 1 << 3
    assert built["ops"].count("QuantizeLinear") >= 6 and "DequantizeLinear" in built["ops"]
    e = TensorRTEmbedder(res.path, device=fake.device)
    assert e.precision == "int8" and e.profiles == [PROF]
    assert e.dim == 384 and e.encode(["revenue in 2019"]).shape == (1, 384)


def test_builder_failures_are_build_errors(fake, art, tmp_path):
    from retriever_trt import builder

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
    from retriever_trt import trt_embedder
    from retriever_trt.retrexec import main

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
