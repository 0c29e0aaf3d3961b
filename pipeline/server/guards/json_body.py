"""What a JSON body must be before a route parses it: UTF-8, parseable within bounds, and
valid Unicode.

Each check names the problem in the route family's 4xx shape instead of leaving it to a
later layer that fails with a generic 400 or a 500:
- UTF-16/UTF-32 without a BOM: their NUL bytes are valid UTF-8, and Python's json detects
  and accepts those encodings; JSON in UTF-8 never holds a NUL byte (RFC 8259 §7-8).
- nesting deeper than MAX_DEPTH (10^5 levels exhaust the parser's recursion) and integers
  of more digits than Python converts (4300 by default, sys.get_int_max_str_digits).
- lone UTF-16 surrogates ("\\ud800" escaped in a string or key): Python accepts them in a
  str, but no tokenizer can encode them.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")
_DIGITS = re.compile(r"Exceeds the limit \((\d+) digits\)")


def json_problem(body: bytes) -> str | None:
    """A one-line message saying what to fix, or None when the body may go to the route
    (which reports plain syntax errors with their position itself)."""
    nul = body.find(b"\x00")
    if nul >= 0:
        return (f"body: NUL byte at position {nul}: the body looks UTF-16 or UTF-32 encoded; "
                "send UTF-8 encoded JSON")
    text = body.decode("utf-8")  # the caller checked it is UTF-8
    try:
        value = json.loads(text)
    except RecursionError:
        return f"body: JSON nested deeper than {MAX_DEPTH} levels; send a flatter object"
    except json.JSONDecodeError:
        return None
    except ValueError as exc:  # int() past the digit limit
        m = _DIGITS.search(str(exc))
        limit = m.group(1) if m else sys.get_int_max_str_digits()
        return (f"body: an integer with more than {limit} digits; send numbers of at most "
                f"{limit} digits")
    return _walk(value)


def _walk(value: Any) -> str | None:
    """The first too-deep container or lone surrogate, named by its path (messages.0.content)."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if len(where) > MAX_DEPTH:
            return f"body: JSON nested deeper than {MAX_DEPTH} levels; send a flatter object"
        if isinstance(item, str):
            m = _SURROGATE.search(item)
            if m:
                return (f"{'.'.join(where) or 'body'}: lone UTF-16 surrogate "
                        f"\\u{ord(m.group()):04x} at character {m.start()} (a \\uD800-\\uDFFF "
                        "escape must be part of a high+low pair); send valid Unicode text")
        elif isinstance(item, dict):
            for k, v in item.items():
                if _SURROGATE.search(k):
                    return (f"{'.'.join(where) or 'body'}: a key holds a lone UTF-16 surrogate; "
                            "send valid Unicode text")
                stack.append((v, (*where, k)))
        elif isinstance(item, list):
            stack.extend((v, (*where, str(i))) for i, v in enumerate(item))
    return None
