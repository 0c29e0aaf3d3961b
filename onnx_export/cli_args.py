"""argparse that fails with one line naming the flag and exit code 2, never a traceback."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class UsageError(Exception):
    """A bad flag value or a missing file, reported as one line with exit code 2."""


class OneLineParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # trtexec spells flags out; no surprises
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(2)
