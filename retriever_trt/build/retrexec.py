"""`retrexec`: trtexec's flags for finrag's retriever engines.

Builds a TensorRT plan (or an ONNX Runtime optimized graph) from onnx_export's files,
then times inference on random valid token ids and prints trtexec's performance
summary. Precision lives in the ONNX file (strongly typed networks): --fp16 picks
model.fp16.onnx and --int8 model.int8.onnx beside --onnx, making them when missing; --best
the lowest precision it can; --sparsity=force prunes that file's linear weights to 2:4
first (onnx_export/sparsity.py). Flags a backend cannot honour are reported on stderr
(retrexec_flags.py).
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tempfile
from pathlib import Path

from onnx_export.cli_args import OneLineParser, UsageError
from retriever_trt.build import retrexec_flags as flags
from retriever_trt.embedders.profiles import (
    DEFAULT_PROFILE,
    SPEC_FORM,
    Profile,
    Shape,
    ShapeSpecError,
    parse_shape_spec,
    profile_from_specs,
)

UNITS = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def info(msg: str) -> None:
    print(f"[I] {msg}", flush=True)


def parser() -> OneLineParser:
    p = OneLineParser(prog="retrexec", description="trtexec-like builder/timer for retrievers")
    a = p.add_argument
    a("--onnx", help="FP32 ONNX from `python -m onnx_export` (model.onnx)")
    a("--saveEngine", help="write the built engine (a plan; ORT: an optimized .onnx, named "
      "X.opt.onnx where X.plan is asked)")
    a("--loadEngine", help="time an existing engine instead of building")
    a("--fp16", action="store_true", help="build from model.fp16.onnx (made if missing)")
    a("--int8", action="store_true", help="build from model.int8.onnx (Q/DQ; made if missing)")
    a("--dynamicInt8", action="store_true", help="onnxruntime: use model.int8-dynamic.onnx")
    a("--calib", help="calibration cache (JSON) to reuse/write for --int8")
    a("--calibData", help="sample set for --int8 calibration (.txt, .jsonl, TAT-QA .json)")
    a("--calibMethod", default="minmax", choices=["minmax", "entropy", "percentile"])
    for k in ("min", "opt", "max"):
        a(f"--{k}Shapes", help=f"{k} shapes of the profile: {SPEC_FORM}")
    a("--shapes", help=f"inference shapes: {SPEC_FORM}")
    a("--memPoolSize", help="workspace:N with N in MiB, or a K/M/G suffix")
    a("--workspace", help="N in MiB: the deprecated spelling of --memPoolSize=workspace:N")
    a("--sparsity", default=flags.Sparsity.DISABLE.value,
      choices=[s.value for s in flags.Sparsity],
      help="TensorRT 2:4 sparse kernels: disable (default), enable, or force (prune the "
           "linear weights to 2:4 first, for speed tests; also on ONNX Runtime)")
    a("--timingCacheFile", help="TensorRT timing cache to load and save")
    a("--iterations", type=int, default=10, help="run at least N queries (default 10)")
    a("--warmUp", type=float, default=200.0, help="warm-up in ms (default 200)")
    a("--duration", type=float, default=3.0, help="run at least N seconds (default 3)")
    a("--avgRuns", type=int, default=10, help="report an average every N queries")
    a("--percentile", default="90,95,99", help="latency percentiles, e.g. 90,95,99")
    a("--best", action="store_true",
      help="lowest precision available: INT8 Q/DQ when it exists or can be calibrated, "
           "else FP16")
    a("--stronglyTyped", action="store_true", help="always so here (precision from the ONNX)")
    a("--builderOptimizationLevel", type=int, help="0-5 (TensorRT builder; ONNX Runtime: "
      "0 none, 1 basic, 2 extended, 3-5 all)")
    a("--noDataTransfers", action="store_true", help="time compute without H2D/D2H copies")
    a("--useCudaGraph", action="store_true", help="TensorRT: launch through a CUDA graph")
    a("--exportTimes", help="write each iteration's times to this JSON file")
    a("--dumpProfile", action="store_true", help="print per-layer times (ONNX Runtime)")
    a("--verbose", action="store_true")
    a("--skipInference", action="store_true", help="build only")
    a("--backend", choices=["tensorrt", "onnxruntime"], help="default: TensorRT if importable")
    a("--providers", default="cpu", help="onnxruntime providers: cpu, cuda, tensorrt")
    return p


def parse_mem_pool(spec: str) -> int:
    m = re.fullmatch(r"\s*workspace\s*:\s*(\d+(?:\.\d+)?)\s*([BKMG]?)\s*", spec, re.IGNORECASE)
    if not m:
        raise UsageError(f"--memPoolSize={spec}: expected workspace:N with N in MiB or a "
                         "B/K/M/G suffix (e.g. workspace:1024 or workspace:2G)")
    return int(float(m.group(1)) * UNITS[(m.group(2) or "M").upper()])


def parse_percentiles(spec: str) -> list[float]:
    try:
        values = [float(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or any(not 0 <= v <= 100 for v in values):
        raise UsageError(f"--percentile={spec}: expected comma-separated values in 0..100, "
                         "e.g. 90,95,99")
    return values


def tensorrt_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorrt") is not None


def check_args(args) -> tuple[Profile, Shape, str, str | None]:
    """(profile, shape, backend, the line saying where a plan-named engine went)."""
    if not args.onnx and not args.loadEngine:
        raise UsageError("one of --onnx=FILE or --loadEngine=FILE is required")
    args.sparsity = flags.Sparsity(args.sparsity)
    for flag in ("onnx", "loadEngine", "calibData", "timingCacheFile"):
        value = getattr(args, flag)
        if value and flag != "timingCacheFile" and not Path(value).is_file():
            raise UsageError(f"--{flag}={value}: file not found")
    for flag in ("iterations", "avgRuns"):
        if getattr(args, flag) < 0:
            raise UsageError(f"--{flag} must be ≥ 0")
    if args.warmUp < 0 or args.duration < 0:
        raise UsageError("--warmUp and --duration must be ≥ 0")
    try:
        profile = profile_from_specs(args.minShapes, args.optShapes, args.maxShapes)
        shape = parse_shape_spec(args.shapes, "--shapes") if args.shapes else None
    except ShapeSpecError as exc:
        raise UsageError(str(exc)) from None
    if profile is None:
        profile = Profile(shape, shape, shape) if shape else DEFAULT_PROFILE
    shape = shape or profile.opt
    if not profile.allows(shape):
        raise UsageError(f"--shapes={shape}: outside the profile {profile.min}..{profile.max}")
    have_trt = tensorrt_available()
    backend = flags.backend_for(args.saveEngine or args.loadEngine, args.backend, have_trt)
    if backend == "tensorrt" and not have_trt:
        raise UsageError("--backend=tensorrt: TensorRT is not installed (pip install finrag[gpu])")
    flags.check_engine_file("--loadEngine", args.loadEngine, backend)
    renamed = flags.graph_for_plan(args, backend)
    flags.check_engine_file("--saveEngine", None if args.loadEngine else args.saveEngine,
                            backend)
    flags.check_levels(args)
    return profile, shape, backend, renamed


def pick_best(args) -> None:
    """--best: INT8 Q/DQ when the file is there or can be calibrated, else FP16."""
    if not args.best or args.fp16 or args.int8 or args.dynamicInt8 or not args.onnx:
        return
    folder = Path(args.onnx).parent
    args.int8 = bool((folder / "model.int8.onnx").is_file() or args.calibData or args.calib
                     or (folder / "model.int8.calib.json").is_file())
    args.fp16 = not args.int8
    info(f"--best: building from {'INT8 Q/DQ' if args.int8 else 'FP16'} (the lowest "
         "precision available; give --calibData=FILE for INT8)")


def source_onnx(args) -> Path:
    """The ONNX file the engine is built from: its precision's, pruned to 2:4 (rewritten
    each time, beside it) under --sparsity=force."""
    path = precision_onnx(args)
    if args.sparsity != flags.Sparsity.FORCE:
        return path
    from onnx_export.sparsity import write_pruned

    report = write_pruned(path)
    info(f"--sparsity=force: {report.line()}")
    return report.path


def precision_onnx(args) -> Path:
    """The ONNX file whose precision the engine gets, made beside --onnx when missing."""
    base = Path(args.onnx)
    folder = base.parent
    if args.int8 or args.dynamicInt8:
        from onnx_export.calibration import CalibDataError, read_samples
        from onnx_export.quantize import quantize_dynamic_int8, quantize_qdq

        model_dir = _model_dir(base)
        if args.dynamicInt8:
            path = folder / "model.int8-dynamic.onnx"
            if not path.is_file():
                info(f"Quantizing (dynamic INT8) {base} -> {path}")
                quantize_dynamic_int8(base, path)
            return path
        path = folder / "model.int8.onnx"
        cache = Path(args.calib or folder / "model.int8.calib.json")
        if not path.is_file() or args.calibData:
            if not args.calibData and not cache.is_file():
                raise UsageError(f"--int8: {path} is missing; give --calibData=FILE or "
                                 f"--calib=CACHE (no cache at {cache})")
            try:
                texts = read_samples(args.calibData, 256) if args.calibData else None
            except CalibDataError as exc:
                raise UsageError(f"--calibData: {exc}") from None
            rep = quantize_qdq(base, path, model_dir, texts, args.calibMethod, cache)
            for line in rep.lines()[: None if args.verbose else 1]:
                info(line)
        return path
    if args.fp16:
        path = folder / "model.fp16.onnx"
        if not path.is_file():
            from onnx_export.fp16 import convert_fp16

            info(f"Converting {base} to FP16 -> {path}")
            convert_fp16(base, path)
        return path
    return base


def _model_dir(onnx_path: Path) -> Path:
    from retriever_trt.embedders.artifacts import onnx_metadata, tokenizer_for

    return tokenizer_for(onnx_path, onnx_metadata(onnx_path))[2]


def build_and_load(args, profile: Profile, backend: str, tmp: Path):
    """(runner, is_gpu) after building (unless --loadEngine) and loading the engine."""
    from retriever_trt.build import builder, timing

    if backend == "tensorrt":
        from retriever_trt.embedders.trt_embedder import TensorRTEmbedder

        plan = Path(args.loadEngine) if args.loadEngine else Path(args.saveEngine or tmp / "m.plan")
        if not args.loadEngine:
            onnx_path = source_onnx(args)
            info(f"Building TensorRT engine from {onnx_path} (profile {profile.min}.."
                 f"{profile.max}); this can take minutes")
            ws = parse_mem_pool(args.memPoolSize) if args.memPoolSize else None
            tc = Path(args.timingCacheFile) if args.timingCacheFile else None
            res = builder.build_tensorrt(onnx_path, plan, [profile], ws, tc, args.verbose,
                                         optimization_level=args.builderOptimizationLevel,
                                         sparse=args.sparsity != flags.Sparsity.DISABLE)
            info(f"Engine built in {res.seconds:.3f} sec" + (f", saved to {plan}"
                                                            if args.saveEngine else ""))
            if res.sparse_layers is not None:
                info(f"Sparsity: {res.sparse_layers.line()}")
        try:
            return timing.TrtRunner(TensorRTEmbedder(plan), not args.noDataTransfers), True, plan
        except (OSError, ValueError) as exc:
            raise UsageError(f"{_flag(args)}={plan}: cannot load the plan: {exc}") from None
    import onnxruntime as ort

    from retriever_trt.embedders.ort_embedder import resolve_providers

    path = Path(args.loadEngine) if args.loadEngine else source_onnx(args)
    level = args.builderOptimizationLevel
    if args.saveEngine and not args.loadEngine:
        res = builder.build_onnxruntime(path, Path(args.saveEngine), args.providers.split(","),
                                        "extended" if level is None else flags.ORT_LEVELS[level])
        info(f"Optimized ONNX Runtime graph saved to {res.path} in {res.seconds:.3f} sec")
        path = res.path
    info(f"Loading {path} with ONNX Runtime ({args.providers})")
    opts = ort.SessionOptions()
    if level is not None:
        opts.graph_optimization_level = builder.ort_level(flags.ORT_LEVELS[level])
    try:
        sess = ort.InferenceSession(str(path), opts,
                                    providers=resolve_providers(args.providers.split(",")))
    except Exception as exc:  # noqa: BLE001 - ORT raises its own types for corrupt files
        raise UsageError(f"{_flag(args)}={path}: cannot load as ONNX: "
                         f"{_one_line(exc)[:200]}") from None
    names = {i.name for i in sess.get_inputs()}
    if names != {"input_ids", "attention_mask"}:
        raise UsageError(f"{path}: inputs {sorted(names)}; expected input_ids, attention_mask "
                         "(export it with python -m onnx_export)")
    return timing.OrtRunner(sess), "CPUExecutionProvider" not in sess.get_providers()[:1], path


def run(args, command: str) -> int:
    from retriever_trt.build import timing

    deprecated = flags.take_workspace(args)
    profile, shape, backend, renamed = check_args(args)
    pct = parse_percentiles(args.percentile)
    if args.memPoolSize:
        parse_mem_pool(args.memPoolSize)
    info(f"retrexec # {command}")
    info(f"Backend: {backend}; profile min {profile.min}, opt {profile.opt}, max {profile.max}")
    for line in filter(None, (deprecated, renamed)):
        print(f"[W] {line}", file=sys.stderr, flush=True)
    for line in flags.unhonoured(args, backend):
        print(f"[W] {line}", file=sys.stderr, flush=True)
    for line in flags.honoured(args, backend):
        info(line)
    pick_best(args)
    with tempfile.TemporaryDirectory(prefix="retrexec-") as tmp:
        runner, gpu, engine = build_and_load(args, profile, backend, Path(tmp))
        if backend == "tensorrt" and not args.shapes:
            # As trtexec: a loaded plan is timed at its own profile's opt shape.
            shape = runner.e.profiles[0].opt
        if args.skipInference:
            info("Skipped inference phase since --skipInference is added.")
            return 0
        ids, mask = timing.random_inputs(shape)
        info(f"Starting inference: shapes input_ids:{shape},attention_mask:{shape}, warm-up "
             f"{args.warmUp:g} ms, ≥ {args.iterations} iterations and ≥ {args.duration:g} s")
        res = timing.time_queries(lambda: runner.query(ids, mask), runner.stages,
                                  args.iterations, args.warmUp, args.duration, args.avgRuns,
                                  info if args.verbose else None, shape.batch)
        if args.dumpProfile and backend == "onnxruntime":
            from retriever_trt.build.layer_profile import node_times, profile_lines

            times = node_times(engine, args.providers.split(","), ids, mask, len(res.latency))
            for line in profile_lines(times, len(res.latency)):
                info(line)
    for line in timing.summary_lines(res, pct, gpu):
        info(line)
    if args.exportTimes:
        from onnx_export.atomic import write_text

        write_text(Path(args.exportTimes), json.dumps(timing.export_times(res), indent=1))
        info(f"Exported {len(res.latency)} iterations' times to {args.exportTimes}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = "retrexec " + " ".join(shlex.quote(a) for a in argv)
    args = parser().parse_args(argv)
    try:
        rc = run(args, command)
    except UsageError as exc:
        print(f"retrexec: error: {exc}", file=sys.stderr)
        print(f"&&&& FAILED retrexec # {command}")
        return 2
    except Exception as exc:  # noqa: BLE001 - missing/corrupt files and build failures: one line
        print(f"retrexec: failed: {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        print(f"&&&& FAILED retrexec # {command}")
        return 1
    print(f"&&&& PASSED retrexec # {command}")
    return rc


def _flag(args) -> str:
    return "--loadEngine" if args.loadEngine else "--onnx"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:500]


if __name__ == "__main__":
    sys.exit(main())
