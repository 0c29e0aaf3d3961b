"""Engine builders: TensorRT plans (strongly typed) and ONNX Runtime optimized graphs.

TensorRT 10 deprecated and 11 removed implicit INT8 and the FP16/INT8 builder flags, so
the network is created STRONGLY_TYPED and takes its precision from the ONNX file
(model.fp16.onnx with its Casts, or model.int8.onnx with Q/DQ pairs): `--fp16/--int8`
only choose which file to build from.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from onnx_export.atomic import write_bytes, write_text
from retriever_trt.embedders.artifacts import guess_precision, onnx_metadata
from retriever_trt.embedders.profiles import INPUTS, Profile
from retriever_trt.build.trt_sparsity import SparseLayers, build_logger

log = logging.getLogger(__name__)


class BuildError(RuntimeError):
    """The parser or builder rejected the network; the message says why."""


@dataclass
class BuildResult:
    path: Path
    seconds: float
    timing_cache_hit: bool = False
    sparse_layers: SparseLayers | None = None  # a sparse build's, from the builder log


def _shape(s) -> tuple[int, int]:
    return (s.batch, s.seq)


def build_tensorrt(
    onnx_path: Path,
    plan_path: Path,
    profiles: Sequence[Profile],
    workspace_bytes: int | None = None,
    timing_cache: Path | None = None,
    verbose: bool = False,
    trt_module=None,
    optimization_level: int | None = None,
    sparse: bool = False,
) -> BuildResult:
    """Parse `onnx_path` into a strongly typed network and serialize a plan atomically.

    `sparse` lets TensorRT pick 2:4 sparse kernels for weights with that pattern."""
    from retriever_trt.embedders.trt_embedder import import_tensorrt

    trt = trt_module or import_tensorrt()
    t0 = time.perf_counter()
    logger = build_logger(trt, verbose, sparse)
    builder = trt.Builder(logger)
    flags = 1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise BuildError(f"{onnx_path}: TensorRT's ONNX parser failed: {errors or 'no details'}")
    config = builder.create_builder_config()
    if optimization_level is not None:
        config.builder_optimization_level = int(optimization_level)
    if sparse:
        config.set_flag(trt.BuilderFlag.SPARSE_WEIGHTS)
    if workspace_bytes:
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, int(workspace_bytes))
    for prof in profiles:
        p = builder.create_optimization_profile()
        for name in INPUTS:
            p.set_shape(name, _shape(prof.min), _shape(prof.opt), _shape(prof.max))
        # TensorRT 10 returns -1 (not an exception) for a profile it finds invalid.
        if config.add_optimization_profile(p) < 0:
            raise BuildError(f"{onnx_path}: TensorRT rejected the optimization profile "
                             f"{prof.min}..{prof.max} for inputs {list(INPUTS)}; the network's "
                             "inputs must be exactly these (export it with python -m onnx_export)")
    cache_hit = False
    if timing_cache is not None:
        blob = timing_cache.read_bytes() if timing_cache.is_file() else b""
        cache_hit = bool(blob)
        cache = config.create_timing_cache(blob)
        # A cache from another TensorRT/GPU is ignored rather than failing the build.
        config.set_timing_cache(cache, ignore_mismatch=True)
    log.info("building TensorRT engine from %s (this takes a while)", onnx_path)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise BuildError(f"TensorRT could not build an engine from {onnx_path} "
                         "(run with --verbose for the builder log)")
    write_bytes(plan_path, bytes(serialized))
    if timing_cache is not None:
        write_bytes(timing_cache, bytes(config.get_timing_cache().serialize()))
    write_sidecar(onnx_path, plan_path, profiles)
    layers = SparseLayers.from_log(logger.sparsity) if sparse else None
    return BuildResult(Path(plan_path), time.perf_counter() - t0, cache_hit, layers)


def write_sidecar(onnx_path: Path, plan_path: Path, profiles: Sequence[Profile]) -> None:
    """`<plan>.json`: model id, precision, dim and tokenizer folder for TensorRTEmbedder."""
    meta = dict(onnx_metadata(Path(onnx_path)))
    meta.setdefault("precision", guess_precision(Path(onnx_path)))
    meta["onnx"] = str(Path(onnx_path).resolve())
    meta["profiles"] = [[str(p.min), str(p.opt), str(p.max)] for p in profiles]
    write_text(Path(str(plan_path) + ".json"), json.dumps(meta, indent=1))


def ort_level(name: str):
    """ONNX Runtime's graph optimization level called `name` (disabled .. all)."""
    import onnxruntime as ort

    return {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[name]


def build_onnxruntime(onnx_path: Path, out_path: Path, providers: Sequence | None = None,
                      level: str = "extended") -> BuildResult:
    """Save ORT's optimized graph (fused attention/LayerNorm) so later loads skip that work.

    `extended` keeps the file portable across CPUs; `all` adds layout changes tied to
    this machine's hardware.
    """
    import onnxruntime as ort

    from onnx_export.atomic import atomic_path
    from onnx_export.export import stamp_metadata
    from retriever_trt.embedders.ort_embedder import resolve_providers

    t0 = time.perf_counter()
    meta = onnx_metadata(Path(onnx_path))
    with atomic_path(out_path) as tmp:
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort_level(level)
        opts.optimized_model_filepath = str(tmp)
        ort.InferenceSession(str(onnx_path), opts, providers=resolve_providers(providers))
    meta.setdefault("precision", guess_precision(Path(onnx_path)))
    stamp_metadata(Path(out_path), meta)
    return BuildResult(Path(out_path), time.perf_counter() - t0)
