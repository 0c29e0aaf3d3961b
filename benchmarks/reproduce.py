"""The command line that reproduces a benchmark's run, which every script prints last."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def command_line(script: str, argv: list[str] | None = None, prefix: str = "") -> str:
    """`[PREFIX ]python3 benchmarks/NAME.py ARGS`, run from the repository root whatever the
    caller's folder; ARGS are `argv` when main() was called with them (a test, another
    script), else the process's own arguments."""
    given = sys.argv[1:] if argv is None else argv
    line = shlex.join(["python3", f"benchmarks/{Path(script).name}", *given])
    return f"{prefix} {line}" if prefix else line


def print_command(script: str, argv: list[str] | None = None, prefix: str = "") -> None:
    """Prints `reproduce: <command_line>` after a blank line: a run's first words (flushed,
    so a run cut short still names itself) or its last."""
    print(f"\nreproduce: {command_line(script, argv, prefix)}", flush=True)
