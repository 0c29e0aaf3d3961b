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
