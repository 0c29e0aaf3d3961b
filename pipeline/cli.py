"""The `finrag` command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("finrag: the server is not built yet (see issue 4)", file=sys.stderr)
    return 2
