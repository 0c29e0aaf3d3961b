"""TensorRT backend logic against a small fake of TensorRT 10/11's documented Python API.

The fake engine "computes" embeddings from the ids in the device buffers (a numpy
stand-in for device memory), so the whole path (profile read-back, shape setting,
tensor addresses, staging copies, batching) runs without a GPU.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

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


def make_fake_trt(profiles: list[Profile], device: FakeDevice, calls: list) -> types.ModuleType:
    trt = types.ModuleType("tensorrt")
    trt.TensorIOMode = types.SimpleNamespace(INPUT="INPUT", OUTPUT="OUTPUT")
    trt.int64, trt.float32 = "int64", "float32"
    trt.nptype = lambda dt: {"int64": np.int64, "float32": np.float32}[dt]

    class Logger:
        WARNING, VERBOSE = 2, 4

        def __init__(self, level):
            self.level = level

    class Context:
        def __init__(self):
            self.shapes, self.addr = {}, {}

        def set_input_shape(self, name, shape):
            calls.append(("set_input_shape", name, tuple(shape)))
            self.shapes[name] = tuple(shape)
            return True

        def set_tensor_address(self, name, ptr):
            self.addr[name] = ptr

        def set_optimization_profile_async(self, index, stream):
            calls.append(("profile", index, stream))
            return True

        def get_tensor_shape(self, name):
            return (self.shapes["input_ids"][0], DIM) if name == "embeddings" else self.shapes[name]

        def execute_async_v3(self, stream):
            calls.append(("execute", self.shapes["input_ids"], stream))
            b, s = self.shapes["input_ids"]
            ids = device.mem[self.addr["input_ids"]].reshape(-1)[: b * s].reshape(b, s)
            mask = device.mem[self.addr["attention_mask"]].reshape(-1)[: b * s].reshape(b, s)
            # A deterministic "embedding": histogram of masked ids mod DIM, normalised.
            out = np.zeros((b, DIM), np.float32)
            for r in range(b):
                np.add.at(out[r], ids[r][mask[r] == 1] % DIM, 1.0)
            out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-12
            device.mem[self.addr["embeddings"]].reshape(-1)[: b * DIM] = out.reshape(-1)
            return True

    class Engine:
        names = ["input_ids", "attention_mask", "embeddings"]
        num_io_tensors = 3
        num_optimization_profiles = len(profiles)

        def get_tensor_name(self, i):
            return self.names[i]

        def get_tensor_mode(self, name):
            return trt.TensorIOMode.OUTPUT if name == "embeddings" else trt.TensorIOMode.INPUT

        def get_tensor_dtype(self, name):
            return trt.float32 if name == "embeddings" else trt.int64

        def get_tensor_shape(self, name):
            return (-1, DIM) if name == "embeddings" else (-1, -1)

        def get_tensor_profile_shape(self, name, k):
            p = profiles[k]
            return [(p.min.batch, p.min.seq), (p.opt.batch, p.opt.seq), (p.max.batch, p.max.seq)]

        def create_execution_context(self):
            return Context()

    class Runtime:
        def __init__(self, logger):
            self.logger = logger

        def deserialize_cuda_engine(self, blob):
            return Engine() if blob.startswith(b"PLAN") else None

    trt.Logger, trt.Runtime = Logger, Runtime
    return trt


@pytest.fixture
def fake(tmp_path, monkeypatch):
    profiles = [Profile(Shape(1, 8), Shape(4, 16), Shape(4, 32)),
                Profile(Shape(1, 33), Shape(2, 64), Shape(2, 128))]
    device, calls = FakeDevice(), []
    trt = make_fake_trt(profiles, device, calls)
    monkeypatch.setitem(sys.modules, "tensorrt", trt)
    plan = tmp_path / "model.fp16.plan"
    plan.write_bytes(b"PLAN...")
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
    executed = [c[1] for c in fake.calls if c[0] == "execute"]
    assert executed and all(p.allows(Shape(*s)) for s in executed for p in [
        next(p for p in fake.profiles if p.allows(Shape(*s)))])
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

    engine = fake.trt.Runtime(None).deserialize_cuda_engine(b"PLAN")
    assert engine_io(engine, fake.trt) == (["input_ids", "attention_mask"], ["embeddings"])
    engine.names = ["ids", "attention_mask", "embeddings"]
    with pytest.raises(ValueError, match="lacks tensor"):
        engine_io(engine, fake.trt)


def test_builder_uses_strongly_typed_network(fake, tmp_path, monkeypatch):
    from retriever_trt import builder

    log: list = []
    trt = fake.trt
    trt.NetworkDefinitionCreationFlag = types.SimpleNamespace(STRONGLY_TYPED=3)
    trt.MemoryPoolType = types.SimpleNamespace(WORKSPACE="ws")

    class Cache:
        def serialize(self):
            return b"CACHE"

    class Config:
        def set_memory_pool_limit(self, pool, size):
            log.append(("pool", pool, size))

        def add_optimization_profile(self, p):
            log.append(("profile", p.shapes))

        def create_timing_cache(self, blob):
            log.append(("cache_in", blob))
            return Cache()

        def set_timing_cache(self, cache, ignore_mismatch):
            log.append(("cache_set", ignore_mismatch))

        def get_timing_cache(self):
            return Cache()

    class OptProfile:
        def __init__(self):
            self.shapes = {}

        def set_shape(self, name, lo, opt, hi):
            self.shapes[name] = (lo, opt, hi)

    class Builder:
        def __init__(self, logger):
            pass

        def create_network(self, flags):
            log.append(("flags", flags))
            return object()

        def create_builder_config(self):
            return Config()

        def create_optimization_profile(self):
            return OptProfile()

        def build_serialized_network(self, network, config):
            return b"PLAN-BYTES"

    class Parser:
        num_errors = 0

        def __init__(self, network, logger):
            pass

        def parse_from_file(self, path):
            return True

    trt.Builder, trt.OnnxParser = Builder, Parser
    monkeypatch.setattr(builder, "onnx_metadata", lambda p: {"precision": "fp16", "dim": "8"})
    prof = Profile(Shape(1, 16), Shape(8, 64), Shape(32, 128))
    tc = tmp_path / "timing.cache"
    res = builder.build_tensorrt(tmp_path / "model.fp16.onnx", tmp_path / "out.plan", [prof],
                                 workspace_bytes=1 << 30, timing_cache=tc, trt_module=trt)
    assert res.path.read_bytes() == b"PLAN-BYTES" and tc.read_bytes() == b"CACHE"
    assert ("flags", 1 << 3) in log and ("pool", "ws", 1 << 30) in log
    (shapes,) = [e[1] for e in log if e[0] == "profile"]
    assert shapes["input_ids"] == ((1, 16), (8, 64), (32, 128)) == shapes["attention_mask"]
    assert '"precision": "fp16"' in (tmp_path / "out.plan.json").read_text()
