"""Read the weights of a Hugging Face folder, single-file or sharded."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import torch


def safetensors_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The weight files of `folder`, in shard order."""
    folder = Path(folder)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        weight_map: dict[str, str] = json.loads(index.read_text())["weight_map"]
        # Each shard once, in the order the index names them (sorted for determinism).
        files = [folder / name for name in sorted(set(weight_map.values()))]
    elif (folder / "model.safetensors").is_file():
        files = [folder / "model.safetensors"]
    else:
        files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors weights in {folder}")
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"shards listed in {index} are missing: {missing}")
    return files


def iter_safetensors(folder: str | os.PathLike[str],
                     device: str = "cpu") -> Iterator[tuple[str, torch.Tensor]]:
    """(name, tensor) for every weight, one shard open at a time to bound host memory."""
    from safetensors import safe_open

    for path in safetensors_files(folder):
        with safe_open(str(path), framework="pt", device=device) as f:
            for name in f.keys():  # safe_open has no items()
                yield name, f.get_tensor(name)


_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


def check_safetensors(path: str | os.PathLike[str]) -> str | None:
    """What is wrong with a .safetensors file's framing, or None: the header must parse and
    the file must be exactly as long as its tensors say (a truncated copy is not). Reads the
    header only, so it costs milliseconds whatever the weights weigh."""
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            return f"{size} bytes, too short for a safetensors header"
        n = int.from_bytes(head, "little")
        if n > size - 8:
            return f"header length {n} runs past the end of the file ({size} bytes)"
        try:
            header = json.loads(fh.read(n))
        except (ValueError, UnicodeDecodeError) as exc:
            return f"header is not JSON ({exc})"
    if not isinstance(header, dict):
        return "header is not a JSON object"
    end = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, stop = (int(x) for x in info["data_offsets"])
            numel = 1
            for d in info["shape"]:
                numel *= int(d)
            nbytes = numel * _DTYPE_BYTES[info["dtype"]]
        except (KeyError, TypeError, ValueError):
            return f"header entry {name!r} is malformed"
        if stop - begin != nbytes:
            return f"tensor {name!r} spans {stop - begin} bytes, its shape needs {nbytes}"
        end = max(end, stop)
    if 8 + n + end != size:
        return f"the header describes {8 + n + end} bytes but the file has {size} (truncated?)"
    return None
