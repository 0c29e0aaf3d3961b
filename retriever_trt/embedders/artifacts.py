"""Metadata that travels with exported files, so a runtime can find its tokenizer.

ONNX files carry `finrag.*` metadata_props (written by onnx_export); TensorRT plans
have a `<plan>.json` sidecar (written by the builder). Both name the model id,
precision and embedding width; the tokenizer is `tokenizer.json` beside the file.

Reading them is also where a corrupt or truncated file is found: `ArtifactError` names
the file and the command that rebuilds it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from onnx_export.encoder import META_PREFIX, default_encoder_dir, load_encoder_tokenizer

# Where `default_embedder` exports the bundled encoder, inside engines/.
DEFAULT_EXPORT_DIR = Path("retriever") / "all-minilm-l6-v2"
# The dynamic INT8 graph onnx_export writes beside model.onnx (and `default_embedder` runs
# on CPU).
DYNAMIC_INT8_FILE = "model.int8-dynamic.onnx"


class ArtifactError(RuntimeError):
    """A built file is missing, corrupt or truncated. The message is one line: the file,
    what is wrong with it and the command that rebuilds it."""

    def __init__(self, path: str | Path, problem: str, rebuild: str | None) -> None:
        self.path, self.problem, self.rebuild = Path(path), problem, rebuild
        tail = f"; rebuild it with: {rebuild}" if rebuild else ""
        super().__init__(f"{path}: {problem}{tail}")


def one_line(exc: BaseException, limit: int = 200) -> str:
    return " ".join(str(exc).split())[:limit] or type(exc).__name__


def onnx_rebuild_command(path: Path) -> str:
    """The `python -m onnx_export` line that writes `path` again."""
    folder = Path(path).parent
    model = "MODEL_DIR"
    if folder.name == DEFAULT_EXPORT_DIR.name and Path(path).name == DYNAMIC_INT8_FILE:
        # The default encoder's dynamic INT8 graph is quantized at start-up when missing.
        return f"rm {path} (finrag quantizes {folder / 'model.onnx'} again when it starts)"
    if folder.name == DEFAULT_EXPORT_DIR.name:
        model = "default"
    else:
        # The FP32 file, when intact, names the encoder it came from.
        model = (_read_onnx_metadata(folder / "model.onnx") or {}).get("source_dir", model)
    flags = ""
    precision = guess_precision(Path(path))
    if precision == "fp16":
        flags = " --fp16"
    elif precision == "int8":
        have_cache = (folder / "model.int8.calib.json").is_file()
        flags = " --int8" + ("" if have_cache else " --calibData=FILE")
    return f"python -m onnx_export --model={model} --outDir={folder}{flags}"


def plan_rebuild_command(plan: Path) -> str:
    """The `retrexec` line that builds `plan` again, from its sidecar when readable."""
    meta = _read_sidecar(Path(plan)) or {}
    onnx = meta.get("onnx")
    flags = ""
    if onnx is None:
        onnx = Path(plan).parent / "model.onnx"
        precision = guess_precision(Path(plan))
        flags = f" --{precision}" if precision != "fp32" else ""
    profiles = meta.get("profiles") or []
    if len(profiles) == 1:  # retrexec builds one profile
        for flag, shape in zip(("min", "opt", "max"), profiles[0], strict=True):
            flags += f" --{flag}Shapes=input_ids:{shape},attention_mask:{shape}"
    return f"retrexec --onnx={onnx} --saveEngine={plan}{flags} --skipInference"


def onnx_session(path: Path, options: Any, providers: list,
                 disabled_optimizers: Sequence[str] = ()) -> Any:
    """An ONNX Runtime session of `path` (without the graph rewrites named in
    `disabled_optimizers`); ArtifactError where ONNX Runtime cannot load it (truncated,
    overwritten). ONNX Runtime's own checks find these, so the `onnx` package, 0.8 s of a
    2-core host's start-up with its checker, is imported only to name the command that
    rebuilds a damaged file."""
    import onnxruntime as ort
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

    try:
        return ort.InferenceSession(str(path), options, providers=providers,
                                    disabled_optimizers=list(disabled_optimizers))
    except (ort_errors.InvalidProtobuf, ort_errors.InvalidGraph, ort_errors.Fail) as exc:
        detail = one_line(exc).replace(f" from {path}", "").replace(str(path), "it")
        raise ArtifactError(path, f"not a valid ONNX model ({detail})",
                            onnx_rebuild_command(path)) from None


def session_metadata(session: Any) -> dict[str, str]:
    """The `finrag.*` metadata of the file a session runs: `onnx_metadata` without parsing
    the file a second time."""
    props = session.get_modelmeta().custom_metadata_map
    return {k[len(META_PREFIX):]: v for k, v in props.items() if k.startswith(META_PREFIX)}


def _read_onnx_metadata(path: Path) -> dict[str, str] | None:
    """The metadata, or None where the file is missing or does not parse."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        model = onnx.load(str(path), load_external_data=False)
    except (OSError, DecodeError):
        return None
    return {p.key[len(META_PREFIX):]: p.value for p in model.metadata_props
            if p.key.startswith(META_PREFIX)}


def onnx_metadata(path: Path) -> dict[str, str]:
    meta = _read_onnx_metadata(path)
    if meta is None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"ONNX file not found: {path}")
        raise ArtifactError(path, "corrupt or truncated ONNX file (protobuf does not parse)",
                            onnx_rebuild_command(path))
    return meta


def _read_sidecar(plan_path: Path) -> dict | None:
    try:
        meta = json.loads(Path(str(plan_path) + ".json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def plan_metadata(plan_path: Path) -> dict:
    side = Path(str(plan_path) + ".json")
    if not side.is_file():
        return {}
    meta = _read_sidecar(plan_path)
    if meta is None:
        raise ArtifactError(side, "corrupt sidecar of the TensorRT plan (not a JSON object)",
                            plan_rebuild_command(plan_path))
    return meta


def guess_precision(path: Path) -> str:
    name = Path(path).name
    for p in ("int8", "fp16"):
        if f".{p}" in name:
            return p
    return "fp32"


def tokenizer_for(path: Path, meta: dict) -> tuple[Tokenizer, int, Path]:
    """(tokenizer, max_seq_len, folder) for an artifact: beside it, then its source folder."""
    candidates = [Path(path).parent]
    if meta.get("source_dir"):
        candidates.append(Path(meta["source_dir"]))
    for folder in candidates:
        if (folder / "tokenizer.json").is_file():
            try:
                tok, max_len = load_encoder_tokenizer(folder)
            except Exception as exc:  # noqa: BLE001 - tokenizers raises plain Exception
                rebuild = None
                if (folder / "model.onnx").exists():  # an export folder: export writes it
                    rebuild = onnx_rebuild_command(folder / "model.onnx")
                raise ArtifactError(folder / "tokenizer.json",
                                    f"unreadable tokenizer ({one_line(exc)})", rebuild) from None
            return tok, int(meta.get("max_seq_len", max_len)), folder
    folder = default_encoder_dir()
    tok, max_len = load_encoder_tokenizer(folder)
    return tok, max_len, folder
