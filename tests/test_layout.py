"""The house rules of ``course_utils`` (CONTRIBUTING.md, "The package's layout"), checked on every run.

- rooms by audience: what a lesson imports never imports ``tooling`` or ``grading``;
- no import cycles inside the package;
- ``import`` of the root, the core modules, ``tooling``, ``grading``, ``claims`` and the
  ``dist`` and ``gpt`` packages stays light;
- tests mirror modules;
- functions of at most ~60 lines, modules of at most ~400 (``timing.py`` excepted);
- ``ruff format`` is clean, and no block of code is copied between modules;
- every subpackage is in the wheel.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "course_utils"
# Rooms whose modules a lesson or an exercise may import.
STUDENT_ROOMS = ("", "dist", "models", "convert", "gpt")
# What those rooms (and the notebooks) may never import.
FORBIDDEN = ("course_utils.tooling", "course_utils.grading")
# Rooms that import jax and torch only inside functions; `dist`, `models`,
# `convert` and `gpt` may import them at the top (scripts, model and converter
# files), but ``import course_utils.dist`` and ``import course_utils.gpt`` stay light.
LIGHT_ROOMS = ("", "tooling", "grading", "claims")
LIGHT_PACKAGES = ("course_utils.dist", "course_utils.gpt")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
LONG_MODULES_ALLOWED = {"course_utils/timing.py"}  # timing's one concept is big
# Where code lives that the size rule applies to (the lesson notebooks are exempt).
SIZED = ("course_utils", "tests", "benchmarks", "constraints", "conftest.py")


def _modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file (packages by their ``__init__``)."""
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _room(name: str) -> str:
    """``course_utils.grading.worker`` -> ``grading``; a top-level module -> ``""``."""
    parts = name.split(".")[1:]
    return parts[0] if len(parts) > 1 or (parts and parts[0] in _packages()) else ""


def _packages() -> set[str]:
    return {p.parent.name for p in PKG.glob("*/__init__.py")}


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every ``course_utils`` module ``path`` imports, at the top or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" for a in node.names]
            names = [n if n in MODULES else node.module for n in names]
        else:
            continue
        found += [(n, node.lineno) for n in names if n.split(".")[0] == "course_utils"]
    return found


def test_the_rooms_are_the_documented_ones():
    assert _packages() == {
        "claims",
        "convert",
        "dist",
        "gpt",
        "grading",
        "models",
        "tooling",
    }


def test_student_modules_never_import_tooling_or_grading():
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for name, path in MODULES.items()
        if _room(name) in STUDENT_ROOMS
        for target, line in _imports(path)
        if target.startswith(FORBIDDEN)
    ]
    assert not bad, "a lesson-facing module reaches into another room:\n" + "\n".join(
        bad
    )


NOTEBOOK_IMPORT = re.compile(
    r"^\s*(?:from|import)\s+(course_utils\.(?:tooling|grading))\b"
)


def test_no_notebook_imports_tooling_or_grading():
    sources = sorted(ROOT.glob("notebooks/*.py")) + sorted(ROOT.glob("solutions/*.py"))
    sources += sorted(ROOT.glob("exercises/*.ipynb"))
    assert len(sources) >= 20, "the lessons and masters were not found"
    bad = []
    for path in sources:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            text = line.strip().strip('"').replace("\\n", "")
            if match := NOTEBOOK_IMPORT.match(text):
                bad.append(f"{path.relative_to(ROOT)}:{n} imports {match[1]}")
    assert not bad, "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), or a self-import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c"]
    ]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = {
        name: {t for t, _ in _imports(path) if t in MODULES and t != name}
        for name, path in MODULES.items()
    }
    cycles = _cycles(graph)
    assert not cycles, (
        "modules that import each other (directly or not):\n"
        + "\n".join(", ".join(c) for c in cycles)
    )


def test_light_rooms_import_no_framework():
    light = [n for n in MODULES if _room(n) in LIGHT_ROOMS and n != "course_utils"]
    light += LIGHT_PACKAGES
    assert "course_utils.tooling.cli" in light and "course_utils.grading.batch" in light
    code = (
        "import importlib, sys\n"
        f"for m in {sorted(light)!r}:\n"
        "    importlib.import_module(m)\n"
        "    bad = [f for f in ('jax', 'torch', 'flax', 'optax', 'keras') if f in sys.modules]\n"
        "    if bad: print(m, bad); break\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "", (
        f"importing this module pulled in a framework: {out.stdout}"
    )


def _mirror(path: Path) -> Path:
    rel = path.relative_to(PKG)
    return ROOT / "tests" / rel.parent / f"test_{rel.stem.lstrip('_')}.py"


def test_tests_mirror_modules():
    missing = [
        f"{path.relative_to(ROOT)} -> {_mirror(path).relative_to(ROOT)}"
        for path in MODULES.values()
        if path.name != "__init__.py" and not _mirror(path).exists()
    ]
    assert not missing, "modules without their test module:\n" + "\n".join(missing)
    for folder in {_mirror(p).parent for p in MODULES.values()}:
        assert (folder / "__init__.py").exists(), f"{folder} needs an __init__.py"


def _sized_files() -> list[Path]:
    files = []
    for entry in SIZED:
        path = ROOT / entry
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts]


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} "
        f"({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_long_function_finder_counts_lines(tmp_path):
    src = "def f():\n" + "    x = 1\n" * 60 + "\n\ndef g():\n    pass\n"
    (tmp_path / "m.py").write_text(src)
    assert _long_functions(tmp_path / "m.py", tmp_path) == ["m.py:1 f (61 lines)"]


def test_functions_are_short():
    long = [line for path in _sized_files() for line in _long_functions(path)]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_modules_are_small():
    big = []
    for path in MODULES.values():
        rel = str(path.relative_to(ROOT))
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_MODULE_LINES and rel not in LONG_MODULES_ALLOWED:
            big.append(f"{rel} ({n} lines)")
    assert not big, f"modules over {MAX_MODULE_LINES} lines:\n" + "\n".join(big)


def test_ruff_format_is_clean():
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_code_is_copied_between_modules():
    """pylint's ``symilar``: blocks of 6 lines or more, ignoring comments, docstrings,
    imports and signatures, that stand in two modules."""
    pytest.importorskip(
        "pylint", reason="pylint is in the dev extra (make test installs it)"
    )
    files = [str(p) for p in MODULES.values()]
    code = "import sys; from pylint.checkers.symilar import Run; Run(sys.argv[1:])"
    args = ["-d", "6", "-i", "--ignore-docstrings", "--ignore-imports"]
    out = subprocess.run(
        [sys.executable, "-c", code, *args, "--ignore-signatures", *files],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert "duplicates=0 " in out.stdout, out.stdout[-6000:] + out.stderr


def test_every_subpackage_is_in_the_wheel():
    from setuptools import find_namespace_packages

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    find = meta["tool"]["setuptools"]["packages"]["find"]
    shipped = set(find_namespace_packages(where=str(ROOT), include=find["include"]))
    folders = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in PKG.rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert folders <= shipped, f"not in the wheel: {sorted(folders - shipped)}"
    assert all((ROOT / f.replace(".", "/") / "__init__.py").exists() for f in folders)


def test_the_package_docstring_lists_every_student_module():
    import course_utils

    public = sorted(p.stem for p in PKG.glob("*.py") if not p.stem.startswith("_")) + [
        "dist",
        "models",
        "convert",
        "gpt",
    ]
    doc = course_utils.__doc__
    missing = [m for m in public if f"``{m}``" not in doc and f"``{m}/``" not in doc]
    assert not missing, f"course_utils/__init__.py's docstring does not list {missing}"


@pytest.mark.parametrize(
    "room", ["claims", "convert", "gpt", "grading", "models", "tooling"]
)
def test_each_room_lists_its_modules(room):
    doc = ast.get_docstring(ast.parse((PKG / room / "__init__.py").read_text())) or ""
    missing = [
        p.stem
        for p in sorted((PKG / room).glob("*.py"))
        if p.stem != "__init__" and f"``{p.stem}``" not in doc
    ]
    assert not missing, (
        f"course_utils/{room}/__init__.py's docstring does not list {missing}"
    )


OUTSIDE = ("STYLE.md", "COURSE_DESIGN.md", "../shared/")


def test_no_file_refers_to_a_file_outside_the_repository():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    me = Path(__file__).relative_to(ROOT).as_posix()
    bad = []
    for rel in tracked:
        path = ROOT / rel
        if rel == me or path.suffix not in (".py", ".md", ".toml", ".yml", ".cfg", ""):
            continue
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        bad += [f"{rel}: {name}" for name in OUTSIDE if name in text]
    assert not bad, "files citing documents a clone does not have:\n" + "\n".join(bad)
