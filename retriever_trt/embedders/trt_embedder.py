"""TensorRT embedder: a serialized plan run with TensorRT 10/11's tensor-name API.

TensorRT is imported lazily so this module (and its pure logic: profiles read from
the engine, shape checks, I/O setup) loads and is tested on machines without it.
Device memory, the stream and page-locked staging buffers come from torch.cuda.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from retriever_trt.embedders.artifacts import guess_precision, plan_metadata, tokenizer_for
from retriever_trt.embedders.embedder import Embedder
from retriever_trt.embedders.profiles import INPUTS, Profile, Shape, make_batches

OUTPUT = "embeddings"
GPU_HINT = "pip install finrag[gpu]"
log = logging.getLogger(__name__)


def import_tensorrt() -> Any:
    try:
        import tensorrt as trt
    except ImportError as exc:
        raise ImportError(f"TensorRT is not installed ({exc}); {GPU_HINT} on a machine "
                          "with an NVIDIA GPU, or use OnnxRuntimeEmbedder") from None
    return trt


class TorchCudaDevice:
    """Device buffers, one CUDA stream and pinned host staging buffers via torch.cuda."""

    def __init__(self) -> None:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("TensorRTEmbedder needs a CUDA device; none is visible")
        self.torch = torch
        self.stream = torch.cuda.Stream()
        self.stream_handle = self.stream.cuda_stream

    def alloc(self, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        t = self.torch
        tdtype = t.from_numpy(np.zeros(0, dtype=dtype)).dtype
        dev = t.empty(shape, dtype=tdtype, device="cuda")
        host = t.empty(shape, dtype=tdtype, pin_memory=True)  # DMA without a bounce copy
        return dev, host

    @staticmethod
    def ptr(buf: Any) -> int:
        return int(buf[0].data_ptr())

    def h2d(self, buf: Any, array: np.ndarray) -> None:
        dev, host = buf
        n = array.size
        host.view(-1)[:n].numpy()[:] = array.reshape(-1)
        with self.torch.cuda.stream(self.stream):
            dev.view(-1)[:n].copy_(host.view(-1)[:n], non_blocking=True)

    def d2h(self, buf: Any, shape: tuple[int, ...]) -> np.ndarray:
        dev, host = buf
        n = int(np.prod(shape))
        with self.torch.cuda.stream(self.stream):
            host.view(-1)[:n].copy_(dev.view(-1)[:n], non_blocking=True)
        self.stream.synchronize()
        return host.view(-1)[:n].numpy().reshape(shape).copy()


def engine_io(engine: Any, trt: Any) -> tuple[list[str], list[str]]:
    """(input names, output names) through num_io_tensors / get_tensor_mode."""
    inputs, outputs = [], []
    for i in range(engine.num_io_tensors):
        name = engine.get_tensor_name(i)
        is_input = engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT
        (inputs if is_input else outputs).append(name)
    missing = [n for n in INPUTS if n not in inputs] + ([OUTPUT] if OUTPUT not in outputs else [])
    if missing:
        raise ValueError(f"engine lacks tensor(s) {missing}: build it from an onnx_export file "
                         f"(inputs {list(INPUTS)}, output {OUTPUT!r}); it has {inputs + outputs}")
    return inputs, outputs


def engine_profiles(engine: Any) -> list[Profile]:
    """One Profile per optimization profile, from get_tensor_profile_shape(input_ids)."""
    profiles = []
    for k in range(engine.num_optimization_profiles):
        lo, opt, hi = (Shape(int(s[0]), int(s[1]))
                       for s in engine.get_tensor_profile_shape(INPUTS[0], k))
        profiles.append(Profile(lo, opt, hi))
    return profiles


class TensorRTEmbedder(Embedder):
    """Encodes with a TensorRT plan built by `retrexec` from an onnx_export file."""

    def __init__(self, plan_path: str | Path, overflow: str = "truncate",
                 device: Any | None = None, trt_module: Any | None = None) -> None:
        self.path = Path(plan_path)
        if not self.path.is_file():
            raise FileNotFoundError(f"TensorRT plan not found: {self.path}")
        trt = trt_module or import_tensorrt()
        self.trt = trt
        meta = plan_metadata(self.path)
        self.tokenizer, _, _ = tokenizer_for(self.path, meta)
        self.model_id = meta.get("model_id", self.path.stem.split(".")[0])
        self.precision = meta.get("precision", guess_precision(self.path))
        self.overflow = overflow
        self.logger = trt.Logger(trt.Logger.WARNING)
        self.runtime = trt.Runtime(self.logger)
        self.engine = self.runtime.deserialize_cuda_engine(self.path.read_bytes())
        if self.engine is None:
            raise ValueError(f"{self.path}: not a TensorRT plan for this TensorRT version/GPU")
        self.inputs, self.outputs = engine_io(self.engine, trt)
        self.profiles = engine_profiles(self.engine)
        self.dim = int(meta.get("dim") or self.engine.get_tensor_shape(OUTPUT)[-1])
        self.context = self.engine.create_execution_context()
        self.device = device or TorchCudaDevice()
        self.active_profile = 0
        # One buffer per I/O tensor sized for the largest profile: no allocation per call.
        max_batch = max(p.max.batch for p in self.profiles)
        max_seq = max(p.max.seq for p in self.profiles)
        self.dtypes = {n: np.dtype(trt.nptype(self.engine.get_tensor_dtype(n)))
                       for n in self.inputs + self.outputs}
        self.buffers = {n: self.device.alloc((max_batch, max_seq), self.dtypes[n])
                        for n in self.inputs}
        self.buffers[OUTPUT] = self.device.alloc((max_batch, self.dim), self.dtypes[OUTPUT])
        for name, buf in self.buffers.items():
            self.context.set_tensor_address(name, self.device.ptr(buf))

    def run_batch(self, input_ids: np.ndarray, attention_mask: np.ndarray,
                  profile: int = 0) -> np.ndarray:
        """One padded batch through the engine; shapes must lie within `profile`."""
        shape = Shape(*input_ids.shape)
        if not self.profiles[profile].allows(shape):
            raise ValueError(f"shape {shape} outside profile {profile} "
                             f"({self.profiles[profile].min}..{self.profiles[profile].max})")
        handle = self.device.stream_handle
        if profile != self.active_profile:
            if not self.context.set_optimization_profile_async(profile, handle):
                raise RuntimeError(f"{self.path}: TensorRT refused optimization profile {profile} "
                                   f"of {len(self.profiles)}")
            self.active_profile = profile
        self.stage_inputs(input_ids, attention_mask)
        if not self.context.execute_async_v3(handle):
            raise RuntimeError(f"TensorRT execution failed for shape {shape}")
        out_shape = tuple(self.context.get_tensor_shape(OUTPUT))
        return self.device.d2h(self.buffers[OUTPUT], out_shape).astype(np.float32)

    def stage_inputs(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> None:
        """Set both input shapes and copy the arrays to the device buffers."""
        for name, arr in ((INPUTS[0], input_ids), (INPUTS[1], attention_mask)):
            # TensorRT 10 returns False (and logs) for a shape outside the active profile;
            # executing anyway would run with the previous shape.
            if not self.context.set_input_shape(name, tuple(arr.shape)):
                p = self.profiles[self.active_profile]
                raise ValueError(f"TensorRT refused {name} shape {tuple(arr.shape)} for "
                                 f"profile {self.active_profile} ({p.min}..{p.max})")
            self.device.h2d(self.buffers[name], arr.astype(self.dtypes[name], copy=False))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not len(texts):
            return out
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        for batch in make_batches(ids, self.profiles, self.overflow):
            emb = self.run_batch(batch.input_ids, batch.attention_mask, batch.profile)
            out[batch.rows] = emb[: len(batch.rows)]
        return out
