"""`retrexec`: trtexec's flags for finrag's retriever engines."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("retrexec: not built yet (see issue 3)", file=sys.stderr)
    return 2
