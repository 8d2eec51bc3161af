"""The grading package as a whole: its docstring, its tests, its size, its imports."""

from __future__ import annotations

import ast
import subprocess
import sys

import course_utils.grading
from tests.grading.helpers import ROOT

PACKAGE = ROOT / "course_utils" / "grading"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
OWN_FILES = [
    *PACKAGE.glob("*.py"),
    *(ROOT / "tests" / "grading").glob("*.py"),
    ROOT / "tests" / "fixtures" / "grader" / "make_fixtures.py",
    ROOT / "benchmarks" / "grade_bench.py",
]


def test_docstring_lists_every_module_and_each_has_tests():
    doc = course_utils.grading.__doc__
    listed = {
        line.split("``")[1] for line in doc.splitlines() if line.startswith("- ``")
    }
    assert listed == set(MODULES)
    for m in MODULES:
        assert (ROOT / "tests" / "grading" / f"test_{m}.py").is_file(), m
        assert ast.get_docstring(ast.parse((PACKAGE / f"{m}.py").read_text())), m


def test_no_function_over_60_lines_and_no_module_over_400():
    too_long = []
    for path in OWN_FILES:
        text = path.read_text()
        if len(text.splitlines()) > 400:
            too_long.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > 60:
                    too_long.append(f"{path.name}: {node.name} has {n} lines")
    assert too_long == []


def _imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports (at any level of the file)."""
    found = set()
    for node in ast.walk(ast.parse((PACKAGE / f"{module}.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "course_utils.grading":
                found |= {a.name for a in node.names}
            elif node.module.startswith("course_utils.grading."):
                found.add(node.module.split(".")[2])
    return found & set(MODULES)


def test_no_import_cycles():
    graph = {m: _imports(m) for m in MODULES}
    done: set[str] = set()

    def visit(m: str, path: tuple[str, ...]) -> None:
        assert m not in path, " -> ".join((*path, m))
        if m not in done:
            for dep in graph[m]:
                visit(dep, (*path, m))
            done.add(m)

    for m in MODULES:
        visit(m, ())


def test_no_module_imports_a_framework():
    code = (
        "import importlib, sys\n"
        f"for m in {MODULES!r}:\n"
        "    importlib.import_module('course_utils.grading.' + m)\n"
        "print(sorted(f for f in ('jax', 'torch', 'flax') if f in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
