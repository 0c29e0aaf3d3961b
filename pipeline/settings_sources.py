"""Where settings come from, in order: defaults < YAML file < FINRAG_* environment < flags;
`load_settings` reads them and turns any invalid one into a one-line `SettingsError`
naming the setting and what to change (with no API key in it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

# ENGINE_FIELDS read through its module, at call time, as the CLI reads it: a field given
# to EngineConfig after import (tests/test_engine_settings.py) is seen by both.
from pipeline import engine_settings
from pipeline.engine_settings import takes_json
from pipeline.settings import FIELDS, SECRET_FIELDS, Settings


class SettingsError(ValueError):
    """A setting is missing or out of range; the message is one line."""


def _env_settings(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in environ.items():
        if not key.startswith("FINRAG_") or key == "FINRAG_ENGINES_DIR":
            continue
        name = key[len("FINRAG_"):].lower()
        if name in FIELDS and name != "intent_labels":
            out[name] = value
    return out


# Server settings given as JSON in a variable or flag, like the dict-valued engine arguments
# (FINRAG_API_KEYS='{"key-a": ["alpha"]}').
JSON_SETTINGS = ("api_keys",)


def engine_json(name: str, value: Any) -> Any:
    """A dict- or list-valued engine argument (or JSON_SETTINGS entry) given as a JSON
    string, decoded."""
    fields = engine_settings.ENGINE_FIELDS
    if isinstance(value, str) and (takes_json(fields.get(name)) or name in JSON_SETTINGS):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"invalid settings: {name}: not valid JSON ({exc}); give an "
                                'object such as \'{"key": 1}\'') from None
    return value


def _one_line(exc: ValidationError, values: dict[str, Any]) -> str:
    parts = []
    for err in exc.errors():
        loc = err["loc"][1:] if err["loc"][:1] == ("engine",) else err["loc"]
        where = ".".join(str(p) for p in loc) or "settings"
        msg = err["msg"]
        cause = (err.get("ctx") or {}).get("error")
        if err["loc"] == ("engine",) and isinstance(cause, ValueError):
            # EngineConfig's check: "block_size must be ..., got 3" names the field itself.
            name, sep, rest = str(cause).partition(" must be ")
            parts.append(f"{name}: must be {rest}" if sep and name in engine_settings.ENGINE_FIELDS
                         else f"engine: {cause}")
            continue
        if err["type"] == "extra_forbidden":
            msg = f"unknown setting (known: {', '.join(sorted(FIELDS))})"
        parts.append(f"{where}: {msg} (got {err.get('input')!r})")
    message = "invalid settings: " + "; ".join(parts)
    for name in SECRET_FIELDS:  # an error must not show a key, whatever part of it failed
        for secret in _secrets(values.get(name)):
            if len(secret.strip()) >= 4:
                message = message.replace(secret.strip(), "**********")
    return message


def _secrets(raw: Any) -> list[str]:
    """The keys a raw api_key ("k1,k2") or api_keys ({"k": [...]}, or its JSON) value holds."""
    if isinstance(raw, str) and raw.lstrip().startswith("{"):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return [raw]
    if isinstance(raw, dict):
        return [str(k) for k in raw]
    return [raw, *raw.split(",")] if isinstance(raw, str) and raw else []


def load_settings(config_file: str | Path | None = None,
                  overrides: dict[str, Any] | None = None,
                  environ: dict[str, str] | None = None) -> Settings:
    """Defaults, then the YAML file, then FINRAG_* variables, then `overrides` (flags)."""
    values: dict[str, Any] = {}
    if config_file:
        import yaml

        path = Path(config_file)
        if not path.is_file():
            raise SettingsError(f"config file {path}: no such file")
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            msg = f"config file {path}: not valid YAML ({exc})".replace("\n", " ")
            raise SettingsError(msg) from None
        if not isinstance(loaded, dict):
            raise SettingsError(f"config file {path}: must be a mapping of setting: value")
        values.update(loaded)
    values.update(_env_settings(dict(os.environ if environ is None else environ)))
    # None is "not given", except for an engine argument named explicitly: there it is the
    # value (`--speculative-config null` turns the server's drafts off).
    values.update({k: v for k, v in (overrides or {}).items()
                   if v is not None or k in engine_settings.ENGINE_FIELDS})
    values = {k: engine_json(k, v) for k, v in values.items()}
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise SettingsError(_one_line(exc, values)) from None
