"""A missing prerequisite fails under CI and skips locally, naming the install step."""

from __future__ import annotations

import pytest
from prereqs import CHROMIUM, missing, require_module

# pytest's outcome exceptions derive from BaseException.
Failed, Skipped = pytest.fail.Exception, pytest.skip.Exception


def test_missing_fails_under_ci_and_skips_locally(monkeypatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(Failed, match="chromium not found; install it with: apt-get install chromium"):
        missing("chromium not found", CHROMIUM)
    monkeypatch.delenv("CI")
    with pytest.raises(Skipped, match="apt-get install chromium"):
        missing("chromium not found", CHROMIUM)


def test_require_module(monkeypatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_module("json", "-").dumps([1]) == "[1]"
    with pytest.raises(Failed, match=r"no_such_module_x.*pip install no-such"):
        require_module("no_such_module_x", "pip install no-such")
