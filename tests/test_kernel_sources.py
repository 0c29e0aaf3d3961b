"""A static bar on the CPU kernels: C++ lives in llm_engine/csrc/*.cpp, never in Python
strings; no build targets the build machine's own CPU; the sources ship in the wheel."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from paths import REPO

from llm_engine.layers import cpu_ops
from llm_engine.layers.attention import (
    paged_attention_cpu,
    prefill_attention_bf16_cpu,
    prefill_attention_cpu,
)
from llm_engine.layers.quantization import int8_vnni_cpu
from llm_engine.utils.cpu_extension import CSRC
from llm_engine.utils.cpu_isa import CpuIsa

# Split so that this file does not hold what it looks for.
NATIVE = "-march=" + "native"
CPP_MARKERS = re.compile(r"#include\s*<|PYBIND11_MODULE|TORCH_CHECK\(")
# Where a build flag could hide: the code, the image, the docs, the build files.
SCANNED = ("llm_engine", "pipeline", "retriever_trt", "onnx_export", "benchmarks", "tests",
           "deploy", "docs", "Dockerfile", "Makefile", "README.md", "pyproject.toml")
KERNELS = (cpu_ops, int8_vnni_cpu, paged_attention_cpu, prefill_attention_cpu,
           prefill_attention_bf16_cpu)


def _files(*names: str, suffix: str = "") -> list[Path]:
    found = []
    for name in names:
        path = REPO / name
        found += [path] if path.is_file() else [p for p in path.rglob(f"*{suffix}") if p.is_file()]
    return [p for p in found if "__pycache__" not in p.parts]


def test_no_cpp_in_python_strings() -> None:
    offenders = []
    for path in _files("llm_engine", suffix=".py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and CPP_MARKERS.search(node.value):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, f"C++ in a Python string (move it to llm_engine/csrc/): {offenders}"


def test_no_build_for_the_build_machine_only() -> None:
    offenders = [str(p.relative_to(REPO)) for p in _files(*SCANNED)
                 if NATIVE in p.read_text(encoding="utf-8", errors="ignore")]
    assert not offenders, f"{NATIVE} (use the named ISA levels of utils/cpu_isa.py): {offenders}"
    assert all(NATIVE not in flag for isa in CpuIsa for flag in isa.cflags)


def test_every_kernel_is_a_cpp_source_with_its_levels() -> None:
    sources = {module.KERNEL.source for module in KERNELS}
    assert sources == {p.name for p in CSRC.glob("*.cpp")}, "a kernel without a source or back"
    for module in KERNELS:
        text = (CSRC / module.KERNEL.source).read_text()
        assert "PYBIND11_MODULE(TORCH_EXTENSION_NAME" in text, module.KERNEL.source
        assert module.KERNEL.levels, module.KERNEL.source
    # The kernels whose intrinsics need a level refuse to compile below it.
    for module, level in ((int8_vnni_cpu, CpuIsa.AVX512_VNNI),
                          (prefill_attention_bf16_cpu, CpuIsa.AVX512_VNNI_BF16)):
        assert module.KERNEL.levels == (level,)
        assert "#error" in (CSRC / module.KERNEL.source).read_text()


def test_the_wheel_ships_the_sources() -> None:
    text = (REPO / "pyproject.toml").read_text()
    package_data = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^llm_engine = \[.*"csrc/\*\.cpp"', package_data, re.M), package_data
