"""The CPU kernels' build helper: it says it is compiling only where no build is cached."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_engine.utils.cpu_extension import _cached


def test_a_build_is_cached_only_where_its_library_is(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    (tmp_path / "py311_cpu" / "ext_v2").mkdir(parents=True)
    (tmp_path / "py311_cpu" / "ext_v2" / "ext_v2.so").write_bytes(b"")
    (tmp_path / "py311_cpu" / "ext_v3").mkdir()  # a build that failed or is under way
    assert _cached("ext_v2", str(tmp_path))
    assert not _cached("ext_v3", str(tmp_path))
    assert not _cached("ext_v4", str(tmp_path))
    # TORCH_EXTENSIONS_DIR: the extensions' folders directly under it.
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "py311_cpu"))
    assert _cached("ext_v2", "/nonexistent")
    assert not _cached("ext_v3", "/nonexistent")
