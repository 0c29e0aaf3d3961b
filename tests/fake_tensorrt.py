"""A fake of TensorRT 10's Python API, as far as finrag's code uses it.

It keeps TensorRT's failure conventions (bool results, -1, None) so the code's checks of
them are exercised. The fake engine "computes" embeddings from the ids in the device
buffers (a numpy stand-in for device memory), so the whole path (profile read-back, shape
setting, tensor addresses, staging copies, batching) runs without a GPU.
"""

from __future__ import annotations

import importlib.machinery
import json
import types

import numpy as np

from retriever_trt.embedders.profiles import Profile, Shape

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


# TensorRT's enums and dtypes, as the fake's tensors carry them.
TENSOR_IO = types.SimpleNamespace(INPUT="INPUT", OUTPUT="OUTPUT")
INT64, FLOAT32 = "int64", "float32"


class Logger:
    WARNING, INFO, VERBOSE = 2, 3, 4

    def __init__(self, level):
        self.level = level


class ILogger:
    """The base a Python logger subclasses; TensorRT calls its log(severity, msg)."""

    Severity = types.SimpleNamespace(WARNING=Logger.WARNING, INFO=Logger.INFO,
                                     VERBOSE=Logger.VERBOSE)

    def __init__(self):
        pass


class Context:
    def __init__(self, profiles, dim, device: FakeDevice, calls: list):
        self.profiles, self.dim, self.active = profiles, dim, 0
        self.device, self.calls = device, calls
        self.shapes, self.addr = {}, {}

    def set_input_shape(self, name, shape):
        self.calls.append(("set_input_shape", name, tuple(shape)))
        if not self.profiles[self.active].allows(Shape(*shape)):
            return False  # TensorRT logs "out of bounds of profile" and keeps the old shape
        self.shapes[name] = tuple(shape)
        return True

    def set_tensor_address(self, name, ptr):
        self.addr[name] = ptr

    def set_optimization_profile_async(self, index, stream):
        self.calls.append(("profile", index, stream))
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
        self.calls.append(("execute", self.shapes["input_ids"], stream, self.active))
        b, s = self.shapes["input_ids"]
        mem = self.device.mem
        ids = mem[self.addr["input_ids"]].reshape(-1)[: b * s].reshape(b, s)
        mask = mem[self.addr["attention_mask"]].reshape(-1)[: b * s].reshape(b, s)
        # A deterministic "embedding": histogram of masked ids mod dim, normalised.
        out = np.zeros((b, self.dim), np.float32)
        for r in range(b):
            np.add.at(out[r], ids[r][mask[r] == 1] % self.dim, 1.0)
        out /= np.linalg.norm(out, axis=1, keepdims=True) + 1e-12
        mem[self.addr["embeddings"]].reshape(-1)[: b * self.dim] = out.reshape(-1)
        return True


class Engine:
    names = ["input_ids", "attention_mask", "embeddings"]
    num_io_tensors = 3

    def __init__(self, profiles, dim, device: FakeDevice, calls: list):
        self.profiles, self.dim, self.device, self.calls = profiles, dim, device, calls
        self.num_optimization_profiles = len(profiles)

    def get_tensor_name(self, i):
        return self.names[i]

    def get_tensor_mode(self, name):
        return TENSOR_IO.OUTPUT if name == "embeddings" else TENSOR_IO.INPUT

    def get_tensor_dtype(self, name):
        return FLOAT32 if name == "embeddings" else INT64

    def get_tensor_shape(self, name):
        return (-1, self.dim) if name == "embeddings" else (-1, -1)

    def get_tensor_profile_shape(self, name, k):
        p = self.profiles[k]
        return [(p.min.batch, p.min.seq), (p.opt.batch, p.opt.seq), (p.max.batch, p.max.seq)]

    def create_execution_context(self):
        return Context(self.profiles, self.dim, self.device, self.calls)


class Runtime:
    def __init__(self, logger, device: FakeDevice, calls: list):
        self.logger, self.device, self.calls = logger, device, calls

    def deserialize_cuda_engine(self, blob):
        if not blob.startswith(b"PLAN"):
            return None
        plan = json.loads(blob[4:])
        profiles = [Profile(*(Shape(*s) for s in p)) for p in plan["profiles"]]
        return Engine(profiles, plan["dim"], self.device, self.calls)


class Network:
    def __init__(self, flags):
        self.flags, self.inputs, self.ops, self.dim = flags, [], [], 0
        self.sparse_ready: list[str] = []  # MatMuls whose constant weight is 2:4


def is_2_4(weight: np.ndarray) -> bool:
    """Each 4 consecutive weights along the input dimension (axis 0) hold at most 2 nonzeros."""
    if weight.ndim != 2 or weight.shape[0] % 4:
        return False
    groups = weight.reshape(weight.shape[0] // 4, 4, -1)
    return bool((np.count_nonzero(groups, axis=1) <= 2).all())


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
    def __init__(self, network, calls: list):
        self.network, self.calls, self.profiles, self.pools, self.cache = network, calls, [], {}, None
        self.flags: set[str] = set()

    def set_flag(self, flag):
        self.flags.add(flag)

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
        self.calls.append(("cache_in", blob))
        return Cache()

    def set_timing_cache(self, cache, ignore_mismatch):
        self.cache = (cache, ignore_mismatch)
        return True

    def get_timing_cache(self):
        return Cache()


class Builder:
    def __init__(self, logger, trt: types.ModuleType, calls: list):
        self.trt, self.calls, self.network, self.logger = trt, calls, None, logger

    def create_network(self, flags):
        self.network = Network(flags)
        return self.network

    def create_builder_config(self):
        return Config(self.network, self.calls)

    def create_optimization_profile(self):
        return OptProfile()

    def build_serialized_network(self, network, config):
        if self.trt.fail_build or not config.profiles:
            return None
        profiles = [Profile(*(Shape(*p.shapes["input_ids"][k]) for k in range(3)))
                    for p in config.profiles]
        self.trt.built.append({"flags": network.flags, "ops": network.ops, "pools": config.pools,
                               "profiles": profiles, "cache": config.cache,
                               "builder_flags": config.flags})
        if "SPARSE_WEIGHTS" in config.flags:  # TensorRT's wording; the fake picks them all
            names = ", ".join(network.sparse_ready)
            self.logger.log(Logger.INFO, f"(Sparsity) Layers eligible for sparse math: {names}")
            self.logger.log(Logger.INFO, "(Sparsity) TRT inference plan picked sparse "
                                         f"implementation for layers: {names}")
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
        from onnx import numpy_helper

        try:
            model = onnx.load(path, load_external_data=False)
        except Exception as exc:  # noqa: BLE001 - the real parser reports, never raises
            self.errors.append(f"ModelImporter: failed to parse {path}: {exc}")
            return False
        self.network.inputs = [i.name for i in model.graph.input]
        self.network.ops = [n.op_type for n in model.graph.node]
        self.network.dim = model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
        weights = {t.name: t for t in model.graph.initializer}
        self.network.sparse_ready = [
            n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights
            and is_2_4(numpy_helper.to_array(weights[n.input[1]]))]
        return True


def make_fake_trt(device: FakeDevice, calls: list) -> types.ModuleType:
    """TensorRT 10's Python API as far as our code uses it, with its failure conventions:
    bool results from set_input_shape / set_optimization_profile_async / execute_async_v3 and
    the parser, -1 from add_optimization_profile, None from build_serialized_network and
    deserialize_cuda_engine. `calls` records what the code asked of it."""
    trt = types.ModuleType("tensorrt")
    trt.__spec__ = importlib.machinery.ModuleSpec("tensorrt", None)  # find_spec sees it
    trt.TensorIOMode = TENSOR_IO
    trt.int64, trt.float32 = INT64, FLOAT32
    trt.nptype = lambda dt: {INT64: np.int64, FLOAT32: np.float32}[dt]
    trt.NetworkDefinitionCreationFlag = types.SimpleNamespace(STRONGLY_TYPED=3)
    trt.MemoryPoolType = types.SimpleNamespace(WORKSPACE="ws")
    trt.BuilderFlag = types.SimpleNamespace(SPARSE_WEIGHTS="SPARSE_WEIGHTS")
    trt.fail_build = False  # tests flip these to reach the failure paths
    trt.built: list[dict] = []
    trt.Logger, trt.ILogger, trt.OnnxParser = Logger, ILogger, OnnxParser
    trt.Runtime = lambda logger: Runtime(logger, device, calls)
    trt.Builder = lambda logger: Builder(logger, trt, calls)
    return trt
