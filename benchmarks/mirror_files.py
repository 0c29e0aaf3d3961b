"""Files read out of the bare git mirrors of public repositories (FinanceBench, RAG demos), and
copied onto a shelf whole or not at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

# What git LFS stores in place of a file it keeps elsewhere: the file is not in the mirror.
LFS_POINTER = b"version https://git-lfs"
PART_SUFFIX = ".part"


def git(git_dir: Path, *args: str) -> bytes:
    """What a git command prints on the bare mirror `git_dir`; CalledProcessError when it
    fails (no such mirror, object or path)."""
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True).stdout


def mirror_blob(git_dir: Path, path: str, rev: str = "HEAD") -> bytes | None:
    """The file's bytes at the mirror's HEAD (or at `rev`, a commit that held a file HEAD no
    longer does), or None when the mirror, the object or the file itself (an LFS pointer in
    its place) is missing."""
    try:
        data = git(git_dir, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return None
    return None if data.startswith(LFS_POINTER) else data


def write_whole(target: Path, data: bytes) -> None:
    """Writes `data` beside `target` and renames it there, so an interrupted copy leaves no
    half file under the target's name (a later run would take it as copied)."""
    partial = target.with_name(target.name + PART_SUFFIX)
    partial.write_bytes(data)
    partial.rename(target)
