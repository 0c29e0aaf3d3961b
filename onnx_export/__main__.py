"""`python -m onnx_export`: FP32 ONNX always, FP16 and INT8 (Q/DQ + dynamic) on request."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from onnx_export.cli_args import OneLineParser, UsageError


def parse(argv: list[str] | None) -> tuple[OneLineParser, object]:
    p = OneLineParser(prog="python -m onnx_export",
                      description="Export a BERT-family sentence encoder to ONNX.")
    p.add_argument("--model", default="default", help="'default' (all-MiniLM-L6-v2) or a folder")
    p.add_argument("--outDir", required=True, help="where model*.onnx and caches go")
    p.add_argument("--fp16", action="store_true", help="also write model.fp16.onnx")
    p.add_argument("--int8", action="store_true",
                   help="also write model.int8.onnx (Q/DQ) and model.int8-dynamic.onnx")
    p.add_argument("--calibData", help="sample set: .txt (a line each), .jsonl, TAT-QA .json")
    p.add_argument("--calibMethod", default="minmax", choices=["minmax", "entropy", "percentile"])
    p.add_argument("--calibSamples", type=int, default=256, help="samples used (default 256)")
    p.add_argument("--noCheck", action="store_true", help="skip the comparison with torch")
    return p, p.parse_args(argv)


def resolve_model(arg: str) -> Path:
    from onnx_export.encoder import default_encoder_dir

    if arg == "default":
        try:
            return default_encoder_dir()
        except FileNotFoundError as exc:
            raise UsageError(f"--model=default: {exc}") from None
    folder = Path(arg)
    if not (folder / "config.json").is_file() or not (folder / "tokenizer.json").is_file():
        raise UsageError(f"--model={arg}: not a Hugging Face encoder folder "
                         "(config.json and tokenizer.json expected)")
    return folder


def run(args) -> list[str]:
    from onnx_export.calibration import CalibDataError, read_samples
    from onnx_export.export import export_folder

    model_dir = resolve_model(args.model)
    out = Path(args.outDir)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--outDir={out}: exists and is not a folder")
    if args.calibSamples < 1:
        raise UsageError("--calibSamples must be ≥ 1")
    texts = None
    if args.int8:
        cache = out / "model.int8.calib.json"
        if args.calibData:
            try:
                texts = read_samples(args.calibData, limit=args.calibSamples)
            except CalibDataError as exc:
                raise UsageError(f"--calibData: {exc}") from None
        elif not cache.is_file():
            raise UsageError(f"--int8 needs --calibData=FILE (no calibration cache at {cache})")
    elif args.calibData:
        raise UsageError("--calibData is only used with --int8")
    report = []
    t0 = time.perf_counter()
    res = export_folder(model_dir, out, check=not args.noCheck)
    report.append(f"FP32 {res.path} (dim {res.dim}): vs torch max |diff| {res.max_abs_diff:.2e}, "
                  f"min cosine {res.min_cosine:.6f} [{time.perf_counter() - t0:.1f}s]")
    if args.fp16:
        report.append(_fp16(out, model_dir))
    if args.int8:
        report += _int8(out, model_dir, texts, args.calibMethod)
    return report


def _fp16(out: Path, model_dir: Path) -> str:
    from onnx_export.fp16 import convert_fp16
    from onnx_export.verify import compare_files

    path = convert_fp16(out / "model.onnx", out / "model.fp16.onnx")
    cmp = compare_files(out / "model.onnx", path, model_dir)
    cmp.require(min_cosine=0.999)
    return f"FP16 {path}: {cmp}"


def _int8(out: Path, model_dir: Path, texts: list[str] | None, method: str) -> list[str]:
    from onnx_export.quantize import quantize_dynamic_int8, quantize_qdq
    from onnx_export.verify import compare_files

    rep = quantize_qdq(out / "model.onnx", out / "model.int8.onnx", model_dir, texts, method,
                       out / "model.int8.calib.json")
    lines = rep.lines()
    lines.append(f"INT8 Q/DQ vs FP32: {compare_files(out / 'model.onnx', rep.path, model_dir)}")
    dyn = quantize_dynamic_int8(out / "model.onnx", out / "model.int8-dynamic.onnx")
    lines.append(f"INT8 dynamic {dyn} (ORT CPU): "
                 f"{compare_files(out / 'model.onnx', dyn, model_dir)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    _, args = parse(argv)
    try:
        for line in run(args):
            print(line)
    except UsageError as exc:
        print(f"python -m onnx_export: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one line, no traceback, for any build failure
        print(f"python -m onnx_export: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
