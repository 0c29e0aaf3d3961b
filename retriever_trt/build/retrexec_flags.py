"""What each retrexec backend makes of trtexec's flags: the engine file names it writes and
reads, the flags it honours, and a warning for each flag it cannot honour here.

TensorRT writes plans (`.plan`, `.engine`); the ONNX Runtime backend writes an optimized
ONNX graph, so it saves only under an `.onnx` name. `--saveEngine=model.plan` on a machine
without TensorRT (a published trtexec line, run as written) saves the graph beside it as
`model.opt.onnx` and says so: a plan name is never filled with a file of another kind.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Any

from onnx_export.cli_args import UsageError

PLAN_SUFFIXES = (".plan", ".engine")
# trtexec's --builderOptimizationLevel (0..5, default 3) on ONNX Runtime's graph levels.
ORT_LEVELS = {0: "disabled", 1: "basic", 2: "extended", 3: "all", 4: "all", 5: "all"}


class Sparsity(str, Enum):
    """trtexec's --sparsity: structured (2:4) sparse kernels off, allowed, or forced by
    pruning the weights first (which changes the model: for speed tests)."""

    DISABLE = "disable"
    ENABLE = "enable"
    FORCE = "force"


def take_workspace(args: Any) -> str | None:
    """Turn the deprecated --workspace=N (MiB) into --memPoolSize=workspace:N; the line
    saying so, or None without --workspace."""
    if args.workspace is None:
        return None
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*", args.workspace):
        raise UsageError(f"--workspace={args.workspace}: expected N in MiB (e.g. "
                         "--workspace=4096); better, --memPoolSize=workspace:N")
    if args.memPoolSize:
        raise UsageError(f"--workspace={args.workspace} and --memPoolSize={args.memPoolSize} "
                         "both size the workspace pool: keep --memPoolSize only")
    args.memPoolSize = f"workspace:{args.workspace.strip()}"
    return (f"--workspace is deprecated (TensorRT 8.4+): read as "
            f"--memPoolSize={args.memPoolSize} (MiB)")


def backend_for(engine_file: str | None, asked: str | None, have_tensorrt: bool) -> str:
    """The backend asked for; else the one the engine file's name says; else TensorRT if
    importable."""
    if asked:
        return asked
    if engine_file and Path(engine_file).suffix.lower() == ".onnx":
        return "onnxruntime"
    return "tensorrt" if have_tensorrt else "onnxruntime"


def _onnx_name(path: Path) -> Path:
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    return path.with_name(f"{stem}.opt.onnx")


def graph_for_plan(args: Any, backend: str) -> str | None:
    """On ONNX Runtime, point a plan-named --saveEngine at the .opt.onnx name beside it;
    the line saying so, or None when nothing changed."""
    if backend != "onnxruntime" or args.loadEngine or not args.saveEngine:
        return None
    path = Path(args.saveEngine)
    if path.suffix.lower() not in PLAN_SUFFIXES:
        return None
    args.saveEngine = str(_onnx_name(path))
    return (f"--saveEngine={path}: a plan needs TensorRT (not installed here: pip install "
            "finrag[gpu] on a machine with an NVIDIA GPU); the ONNX Runtime backend's engine, "
            f"an optimized ONNX graph, is saved as {args.saveEngine} "
            f"(--loadEngine={args.saveEngine} times it again)")


def check_engine_file(flag: str, value: str | None, backend: str) -> None:
    """Refuse an engine file whose name says another kind of file than `backend` uses."""
    if not value:
        return
    path = Path(value)
    suffix = path.suffix.lower()
    if backend == "onnxruntime" and suffix != ".onnx":
        fix = f"use {flag}={_onnx_name(path)}"
        if suffix in PLAN_SUFFIXES:
            raise UsageError(f"{flag}={value}: a {suffix} file is a TensorRT plan, which needs "
                             "TensorRT (not installed here: pip install finrag[gpu] on a "
                             "machine with an NVIDIA GPU); the ONNX Runtime backend "
                             f"{'saves' if flag == '--saveEngine' else 'reads'} an optimized "
                             f"ONNX graph: {fix}")
        raise UsageError(f"{flag}={value}: the ONNX Runtime backend's engine is an ONNX graph; "
                         f"give it the .onnx extension: {fix}")
    if backend == "tensorrt" and suffix not in PLAN_SUFFIXES:
        plan = path.with_name(path.name.removesuffix(path.suffix) + ".plan")
        raise UsageError(f"{flag}={value}: TensorRT's engine is a plan: name it .plan or "
                         f".engine (e.g. {flag}={plan}), or add --backend=onnxruntime for an "
                         "optimized ONNX graph")


def check_levels(args: Any) -> None:
    level = args.builderOptimizationLevel
    if level is not None and level not in ORT_LEVELS:
        raise UsageError(f"--builderOptimizationLevel={level}: expected 0 to 5 (default 3)")


def unhonoured(args: Any, backend: str) -> list[str]:
    """One line per flag given that this backend cannot honour (reported, then ignored)."""
    out = []
    if args.loadEngine and args.sparsity != Sparsity.DISABLE:
        out.append(f"--sparsity={args.sparsity.value}: ignored with --loadEngine: sparsity is "
                   "chosen when an engine is built")
    if backend == "onnxruntime":
        tensorrt_only = {"timingCacheFile": "ONNX Runtime has no timing cache",
                         "memPoolSize": "ONNX Runtime sizes its own memory arena",
                         "useCudaGraph": "the ONNX Runtime backend runs without CUDA graphs"}
        for flag, why in tensorrt_only.items():
            if getattr(args, flag):
                out.append(f"--{flag}: ignored: {why} (TensorRT only)")
        if args.sparsity == Sparsity.ENABLE and not args.loadEngine:
            out.append("--sparsity=enable: ignored: ONNX Runtime has no 2:4 sparse kernels "
                       "(TensorRT only); --sparsity=force prunes the weights and runs the "
                       "pruned model densely, for its quality and timings")
        if args.noDataTransfers and "cuda" in args.providers.lower():
            out.append("--noDataTransfers: ignored: ONNX Runtime's CUDA provider copies "
                       "inputs and outputs inside each timed run")
    else:
        if args.useCudaGraph:
            out.append("--useCudaGraph: ignored: retrexec's TensorRT runner does not capture "
                       "CUDA graphs yet")
        if args.dumpProfile:
            out.append("--dumpProfile: ignored: per-layer profiles come from the ONNX Runtime "
                       "backend only (--backend=onnxruntime)")
    return out


def honoured(args: Any, backend: str) -> list[str]:
    """Info lines on how flags without a literal twin here are honoured."""
    out = []
    if args.stronglyTyped:
        out.append("--stronglyTyped: networks are always strongly typed here: precision "
                   "comes from the ONNX file (--fp16, --int8, --best pick it)")
    if args.noDataTransfers and backend == "onnxruntime" and "cuda" not in args.providers.lower():
        out.append("--noDataTransfers: inputs stay in host memory on the CPU provider; "
                   "there are no transfers to time")
    if args.sparsity == Sparsity.FORCE and backend == "onnxruntime" and not args.loadEngine:
        out.append("--sparsity=force: the 2:4-pruned model runs on ONNX Runtime's dense "
                   "kernels: its timings and quality are the pruned model's, without a "
                   "sparse speed-up")
    if args.builderOptimizationLevel is not None and backend == "onnxruntime":
        out.append(f"--builderOptimizationLevel={args.builderOptimizationLevel}: ONNX Runtime "
                   f"graph optimization level '{ORT_LEVELS[args.builderOptimizationLevel]}'")
    return out
