"""Imports only go down: pipeline -> retriever_trt -> onnx_export, pipeline -> llm_engine,
which imports none of the others; the RAG core knows nothing of HTTP; inside the server,
app.py wires routes and guards, which never import it back (no import cycle).

Every import statement counts, the lazy ones inside functions too (read with ast)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("llm_engine", "retriever_trt", "onnx_export", "pipeline")
# What each package may import of the others.
ALLOWED = {"llm_engine": set(), "onnx_export": set(), "retriever_trt": {"onnx_export"},
           "pipeline": {"llm_engine", "retriever_trt", "onnx_export"}}
HTTP = ("fastapi", "starlette", "uvicorn")
# The settings: the model, its engine arguments and intent labels, and where they are read from.
SETTINGS = ("pipeline.settings", "pipeline.engine_settings", "pipeline.intent_labels",
            "pipeline.settings_sources")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                base = package[:len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return found


def _files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _violations(path: Path) -> list[str]:
    """One line per broken rule per import statement, naming file, line and rule."""
    module = _module(path)
    top = module.split(".")[0]
    bad: dict[tuple[int, str], str] = {}
    for line, name in _imports(path):
        target = name.split(".")[0]
        rules = []
        if target in PACKAGES and target != top and target not in ALLOWED[top]:
            rules.append(f"up or sideways: {top} may import {sorted(ALLOWED[top])}")
        if module.startswith("pipeline.rag") and (target in HTTP or
                                                  name.startswith("pipeline.server")):
            rules.append("the RAG core must not know HTTP")
        if module in SETTINGS and name.startswith(("pipeline.rag", "pipeline.server")):
            rules.append("settings sit below the RAG core and the server")
        if (module.startswith("pipeline.server") and module != "pipeline.server.app"
                and name.startswith(("pipeline.server.app", "pipeline.cli"))):
            rules.append("only app.py wires the server; importing it back is a cycle")
        if module.startswith("pipeline.server.guards") and name.startswith(
                "pipeline.server.routes"):
            rules.append("guards sit below the routes")
        for rule in rules:
            bad.setdefault((line, rule),
                           f"{path.relative_to(ROOT)}:{line} imports {name} ({rule})")
    return list(bad.values())


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_go_down(path: Path) -> None:
    assert _violations(path) == []


def test_the_rule_catches_what_it_forbids(tmp_path, monkeypatch) -> None:
    # The checker itself: files that break each rule are reported, with file and line.
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    cases = {"onnx_export/x.py": "def f():\n    from retriever_trt.embedders.loader import load_embedder\n",
             "llm_engine/y.py": "import pipeline.settings\n",
             "retriever_trt/z.py": "from llm_engine import LLM\n",
             "pipeline/rag/w.py": "from fastapi import Request\n",
             "pipeline/server/routes/v.py": "from pipeline.server.app import create_app\n",
             "pipeline/server/guards/u.py": "from ..routes import ask\n",
             "pipeline/settings_sources.py": "from pipeline.rag.pipeline import RAGPipeline\n"}
    for rel, text in cases.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for rel in cases:
        found = _violations(tmp_path / rel)
        assert len(found) == 1 and found[0].startswith(f"{rel}:"), (rel, found)
    (tmp_path / "pipeline/rag/ok.py").write_text("from llm_engine import LLM\n"
                                                  "from pipeline.settings import Settings\n")
    assert _violations(tmp_path / "pipeline/rag/ok.py") == []


def _module_graph(root: Path) -> dict[str, set[str]]:
    """Each module under `root`'s packages -> the modules of those packages it imports
    (`from a.b import c` counts as a.b.c where that is a module, else as a.b)."""
    files = sorted(p for pkg in PACKAGES for p in (root / pkg).rglob("*.py"))
    modules = {_module(p) for p in files}
    graph: dict[str, set[str]] = {}
    for path in files:
        targets = set()
        for _, name in _imports(path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                targets.add(name)
        graph[_module(path)] = targets - {_module(path)}
    return graph


def _mutual_pairs(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if a < b and a in graph.get(b, set()))


def test_no_two_modules_import_each_other() -> None:
    """Lazily or not: a pair that imports each other is one concept split in two, or a
    helper in the wrong place (pipeline.replicas.artifacts came out of such a pair)."""
    assert _mutual_pairs(_module_graph(ROOT)) == []


def test_the_pair_check_catches_a_lazy_circle(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline/a.py").write_text("from pipeline.b import f\n")
    (tmp_path / "pipeline/b.py").write_text("def f():\n    from pipeline import a\n")
    (tmp_path / "pipeline/c.py").write_text("import pipeline.a\n")
    assert _mutual_pairs(_module_graph(tmp_path)) == [("pipeline.a", "pipeline.b")]
