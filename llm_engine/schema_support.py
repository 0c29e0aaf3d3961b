"""Which JSON-schema keywords the grammar engine enforces, and a check that refuses the rest.

xgrammar turns a schema into a grammar, but some keywords it drops without a word: `not`,
`if`/`then`/`else`, an `allOf` of several schemas (the output becomes any JSON value), a
remote `$ref`, `uniqueItems`, an unknown `format`, a `pattern` with a look-around... A
request that relied on one would get output its schema forbids, while the README promises
that a finished answer follows its schema. So each such keyword is refused, naming where it
is (`properties.a.not`). Annotations (`title`, `description`, `default`, vendor keys) are
left alone: they constrain nothing, by the JSON Schema specification.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

# Validation keywords of JSON Schema 2020-12 (and draft-07's) that xgrammar 0.2 ignores.
UNENFORCED = frozenset({
    "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies",
    "uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems",
    "unevaluatedProperties", "propertyNames", "additionalItems", "contentEncoding",
    "contentMediaType", "contentSchema", "$dynamicRef", "$recursiveRef",
})
# The string formats xgrammar turns into a grammar; any other would be a plain string.
ENFORCED_FORMATS = frozenset({
    "email", "date", "time", "date-time", "duration", "uuid", "uri", "uri-reference", "ipv4",
    "ipv6", "hostname", "json-pointer", "relative-json-pointer", "uri-template",
})
# Keywords whose value is one subschema, a map of subschemas, or a list of them.
_ONE = ("items", "additionalProperties")
_MAP = ("properties", "patternProperties", "$defs", "definitions")
_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")


def _subschemas(schema: dict[str, Any], where: str) -> Iterator[tuple[Any, str]]:
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            yield schema[key], f"{where}{key}"
    for key in _MAP:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                yield sub, f"{where}{key}.{name}"
    for key in _LIST:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                yield sub, f"{where}{key}.{i}"


def _problem(schema: dict[str, Any], where: str,
             regex_problem: Callable[[str], str | None]) -> str | None:
    """What in this one schema object (not its subschemas) the grammar would not enforce."""
    for key in sorted(UNENFORCED & schema.keys()):
        return f"{where}{key}: not enforced by the grammar engine; remove it"
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) > 1:
        return (f"{where}allOf: an allOf of {len(all_of)} schemas is not enforced by the "
                "grammar engine; merge them into one schema")
    ref = schema.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        return f"{where}$ref: {ref[:100]!r} is not in this schema; only local refs (#/...) are supported"
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt not in ENFORCED_FORMATS:
        return (f"{where}format: {fmt[:100]!r} is not enforced by the grammar engine; use one "
                f"of {', '.join(sorted(ENFORCED_FORMATS))} or a pattern")
    patterns = [(schema["pattern"], f"{where}pattern")] if isinstance(schema.get("pattern"), str) \
        else []
    if isinstance(schema.get("patternProperties"), dict):
        patterns += [(p, f"{where}patternProperties") for p in schema["patternProperties"]]
    for pattern, at in patterns:
        detail = regex_problem(pattern)
        if detail is not None:
            return f"{at}: {pattern[:100]!r} is not a regex the grammar engine supports ({detail})"
    return None


def unenforced(schema: Any, regex_problem: Callable[[str], str | None]) -> str | None:
    """The first keyword of `schema` (a parsed JSON schema) that the grammar would silently
    drop, as `path.keyword: why`; None when every keyword is enforced or an annotation.
    `regex_problem` says why a pattern cannot be compiled (None when it can)."""
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        item, where = stack.pop()
        if not isinstance(item, dict):
            continue  # true/false schemas, or a malformed one the compiler reports itself
        problem = _problem(item, f"{where}." if where else "", regex_problem)
        if problem is not None:
            return problem
        stack.extend(_subschemas(item, f"{where}." if where else ""))
    return None
