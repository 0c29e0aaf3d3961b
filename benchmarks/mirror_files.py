"""Files read out of the bare git mirrors of public repositories (FinanceBench, RAG demos), and
copied onto a shelf whole or not at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

# What git LFS stores in place of a file it keeps elsewhere: the file is not in the mirror.
LFS_POINTER = b"version https://git-lfs"
PART_SUFFIX = ".part"


def mirror_blob(git_dir: Path, path: str) -> bytes | None:
    """The file's bytes at the mirror's HEAD, or None when the mirror, the object or the file
    itself (an LFS pointer in its place) is missing."""
    run = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"],
                         capture_output=True)
    if run.returncode != 0 or run.stdout.startswith(LFS_POINTER):
        return None
    return run.stdout


def write_whole(target: Path, data: bytes) -> None:
    """Writes `data` beside `target` and renames it there, so an interrupted copy leaves no
    half file under the target's name (a later run would take it as copied)."""
    partial = target.with_name(target.name + PART_SUFFIX)
    partial.write_bytes(data)
    partial.rename(target)
