"""The int8 calibration's result kept beside the prepared model, so that a later start
loads it instead of running the fp32 model over the calibration text again (on 2 CPU cores
calibration was about 44% of a server start, and the test suite starts the engine ~17 times).

A cache file is named by a key over everything the maxima depend on: the weights' bytes,
the calibration windows' token ids (so the text, the tokenizer, the window settings and
max_model_len), the model's config.json fields, the kernels, dtypes, block size and device
the forward pass ran on, the tensor-parallel rank, torch's version and thread count, and the
engine's own source. A file found under a
key therefore holds exactly the tensors a fresh calibration computes; one that is corrupt,
names other layers, or carries another key in its metadata is ignored and rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

import torch
from torch import nn

from llm_engine.utils.safetensors_io import safetensors_files

logger = logging.getLogger(__name__)

# A folder, not *.safetensors files beside the weights: a folder without model.safetensors
# or an index loads every *.safetensors file in it as weights (safetensors_io).
CACHE_DIR = "int8_calibration"
# Bump when the file's layout changes (the key covers what is inside it).
FORMAT_VERSION = 1
KEY_METADATA = "calibration_key"
# Hex digits of the key in the file name; the full key is checked from the metadata.
NAME_CHARS = 24
# The engine's source: Python and the CPU kernels' C++, any of which the forward pass runs.
CODE_SUFFIXES = (".py", ".cpp", ".h")
ENGINE_ROOT = Path(__file__).resolve().parents[1]
READ_CHUNK = 1 << 24
FILE_MODE = 0o644


@functools.cache
def code_digest(root: Path = ENGINE_ROOT) -> str:
    """sha256 over the engine's source files (path and bytes), once a process."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in CODE_SUFFIXES and p.is_file()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=32)
def _file_digest(path: str, size: int, mtime_ns: int, inode: int) -> str:
    """sha256 of a file, memoized by its identity (size, mtime, inode): every engine of a
    process that loads the same weights hashes them once."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        # hashlib.file_digest is Python 3.11+; the package supports 3.10.
        for chunk in iter(lambda: fh.read(READ_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def weights_digest(model_dir: Path) -> list[str]:
    """The sha256 of every weight file of `model_dir`, in shard order."""
    out = []
    for path in safetensors_files(model_dir):
        st = path.stat()
        out.append(_file_digest(str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino))
    return out


def calibration_key(model_dir: Path, windows: list[list[int]], context: dict[str, str]) -> str:
    """The key of one calibration: `context` names how the forward pass ran (kernels,
    dtype, device, rank); torch, its threads and the engine's source are added here."""
    fields = {"format": FORMAT_VERSION, "weights": weights_digest(model_dir),
              "windows": hashlib.sha256(json.dumps(windows).encode()).hexdigest(),
              "torch": torch.__version__, "threads": torch.get_num_threads(),
              "code": code_digest(), **context}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def cache_path(model_dir: Path, key: str) -> Path:
    return model_dir / CACHE_DIR / f"{key[:NAME_CHARS]}.safetensors"


def load_maxima(path: Path, key: str, layers: dict[str, nn.Module]
                ) -> dict[str, torch.Tensor] | None:
    """The maxima cached at `path` for `key`, or None where there is no usable file: none,
    unreadable, another key, or tensors that do not fit `layers` (their input channels)."""
    from safetensors import SafetensorError, safe_open

    if not path.is_file():
        return None
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            if (f.metadata() or {}).get(KEY_METADATA) != key:
                problem = "it was written for another key"
            else:
                maxima = {name: f.get_tensor(name) for name in f.keys()}  # safe_open has no items()
                problem = _misfit(maxima, layers)
    except (OSError, ValueError, SafetensorError) as exc:
        problem = f"it cannot be read ({' '.join(str(exc).split())[:120]})"
    if problem is not None:
        logger.warning("int8 calibration cache %s ignored: %s; calibrating again", path, problem)
        return None
    return maxima


def _misfit(maxima: dict[str, torch.Tensor], layers: dict[str, nn.Module]) -> str | None:
    """What keeps `maxima` from being these layers' calibration, or None."""
    if maxima.keys() != layers.keys():
        return "it names other layers than the model's"
    for name, tensor in maxima.items():
        channels = layers[name].weight.shape[-1]
        if tensor.dtype != torch.float32 or tuple(tensor.shape) != (channels,):
            return f"{name} is {tensor.dtype} {tuple(tensor.shape)}, not float32 ({channels},)"
    return None


def save_maxima(path: Path, key: str, maxima: dict[str, torch.Tensor]) -> None:
    """Write `maxima` to `path` atomically (a temporary file renamed into place), so that a
    reader sees the whole file or none. A folder the engine may not write to (a read-only
    model) only costs the next start a calibration."""
    from safetensors.torch import save_file

    tmp = None
    try:
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        tensors = {name: t.detach().to("cpu").contiguous() for name, t in maxima.items()}
        save_file(tensors, tmp, metadata={KEY_METADATA: key})
        # mkstemp made the file private (0600); the cache is as readable as the weights.
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("int8 calibration not cached (%s); the next start calibrates again", exc)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
