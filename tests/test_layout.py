"""The house rules of ``course_utils`` (CONTRIBUTING.md, "The package's layout" and "Code"), checked on every run.

- rooms by audience: what a lesson imports (the top level, ``distributed``, ``models``,
  ``convert``, ``gpt``, ``install``, ``claims``, ``timing``) never imports ``tooling``
  or ``grading``; the one exception is ``course_utils.cli``, the ``course`` command,
  which stands above every room;
- rooms depend one way: no two rooms import each other (``grading`` may use
  ``tooling``, which never imports ``grading``), counting imports inside functions;
- ``tooling`` keeps its concepts in folders, a dozen modules at most at its top;
- no import cycles inside the package. The scan sees every way a module gets
  imported: ``import``/``from`` at the top or inside a function, relative imports
  (``from .x import y``), ``importlib.import_module("course_utils.x")`` with a
  literal name, the lazy ``__getattr__`` of a package (the module names in the
  tuples or dicts it looks up), and the packages above an imported module (importing
  ``course_utils.claims.verdicts`` runs ``course_utils/claims/__init__.py`` first);
- ``import`` of the root, the core modules, ``tooling``, ``grading``, ``claims``,
  ``timing`` and the ``distributed`` and ``gpt`` packages stays light;
- tests mirror modules;
- one concept per module: its size follows from the concept, so no blanket cap; a
  module past :data:`MAX_MODULE_LINES` (far past any one concept) fails unless
  :data:`SIZE_EXEMPT` gives the reason in a sentence, and a function past
  :data:`LONG_FUNCTION_LINES` earns a :class:`LongFunctionWarning` (shown in the
  warnings summary, not a failure): worth splitting when the steps have names;
- ``ruff format`` is clean, and no block of code is copied between modules;
- every subpackage is in the wheel.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import subprocess
import sys
import textwrap
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "course_utils"
# Rooms whose modules a lesson or an exercise may import (lessons import claims
# and timing, so what those import is a lesson's import too).
STUDENT_ROOMS = (
    "",
    "distributed",
    "models",
    "convert",
    "gpt",
    "install",
    "claims",
    "timing",
)
# What those rooms (and the notebooks) may never import.
FORBIDDEN = ("course_utils.tooling", "course_utils.grading")
# The top of the house: the ``course`` command mounts every room's verbs, so it is the
# one top-level module that imports ``tooling`` and ``grading`` (nothing imports it).
ABOVE_ROOMS = ("course_utils.cli",)
# Rooms that import jax and torch only inside functions; `distributed`, `models`,
# `convert` and `gpt` may import them at the top (scripts, model and converter
# files), but ``import course_utils.distributed`` and ``import course_utils.gpt`` stay light.
LIGHT_ROOMS = ("", "tooling", "grading", "claims", "install", "timing")
LIGHT_PACKAGES = ("course_utils.distributed", "course_utils.gpt")
# Far past any one concept: the largest modules hold about 400 lines.
MAX_MODULE_LINES = 1500
# Modules allowed past MAX_MODULE_LINES: path -> why (a sentence). None needs it today.
SIZE_EXEMPT: dict[str, str] = {}
LONG_FUNCTION_LINES = 80
# Where code lives that the size rules apply to (the lesson notebooks are exempt).
SIZED = ("course_utils", "tests", "benchmarks", "constraints", "conftest.py")


class LongFunctionWarning(UserWarning):
    """A function past LONG_FUNCTION_LINES: a hint to split it, not a failure."""


def _module_name(path: Path, root: Path = ROOT) -> str:
    """``course_utils/claims/verdicts.py`` -> ``course_utils.claims.verdicts`` (a package by its ``__init__``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> file."""
    return {
        _module_name(path, root): path
        for path in sorted((root / "course_utils").rglob("*.py"))
        if "__pycache__" not in path.parts
    }


MODULES = _modules()


def _room(name: str) -> str:
    """``course_utils.grading.worker`` -> ``grading``; a top-level module -> ``""``."""
    parts = name.split(".")[1:]
    return parts[0] if len(parts) > 1 or (parts and parts[0] in _packages()) else ""


def _packages() -> set[str]:
    return {p.parent.name for p in PKG.glob("*/__init__.py")}


def _absolute(module: str | None, level: int, package: str) -> str:
    """The module a ``from`` import names: ``from ..x import y`` in ``a.b.c`` -> ``a.x``."""
    if not level:
        return module or ""
    base = package.split(".")
    base = base[: len(base) - level + 1]
    return ".".join(base + ([module] if module else []))


def _literal_import_module(node: ast.Call, package: str) -> str | None:
    """The module of ``importlib.import_module("...")`` (or ``import_module``) with a literal name."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "import_module" or not node.args:
        return None
    arg = node.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return None
    dots = len(arg.value) - len(arg.value.lstrip("."))
    anchor = node.args[1] if len(node.args) > 1 else None
    if dots and isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
        package = anchor.value
    return _absolute(arg.value[dots:] or None, dots, package)


def _lazy_names(tree: ast.Module) -> list[tuple[str, int]]:
    """The strings of the module-level tuples, lists, sets and dicts a ``__getattr__`` reads."""
    hook = [
        n
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
    ]
    if not hook:
        return []
    read = {n.id for n in ast.walk(hook[0]) if isinstance(n, ast.Name)}
    out = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if not any(isinstance(t, ast.Name) and t.id in read for t in targets):
            continue
        out += [
            (c.value, node.lineno)
            for c in ast.walk(node.value)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
    return out


def _imports(
    path: Path, root: Path = ROOT, modules: dict[str, Path] | None = None
) -> list[tuple[str, int]]:
    """Every ``course_utils`` module ``path`` imports, with the line, however it imports it.

    At the top or inside a function, absolute or relative, by
    ``importlib.import_module`` with a literal name, or lazily (the names a
    package's ``__getattr__`` looks up); and the packages above each imported
    module, which Python imports first (but not the importer's own packages).
    """
    modules = MODULES if modules is None else modules
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    named: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            for a in node.names:
                full = f"{base}.{a.name}"
                named.append((full if full in modules else base, node.lineno))
        elif isinstance(node, ast.Call):
            target = _literal_import_module(node, package)
            if target:
                named.append((target, node.lineno))
    for lazy, line in _lazy_names(tree):
        for candidate in (f"{package}.{lazy}", lazy):
            if candidate in modules:
                named.append((candidate, line))
                break
    found = []
    for target, line in named:
        if target.split(".")[0] != "course_utils":
            continue
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]  # an attribute of a module
        parents = [target.rsplit(".", k)[0] for k in range(1, target.count(".") + 1)]
        found += [
            (t, line)
            for t in [target, *parents]
            if t in modules and t != name and not name.startswith(t + ".")
        ]
    return found


def _graph(modules: dict[str, Path], root: Path = ROOT) -> dict[str, set[str]]:
    return {
        name: {t for t, _ in _imports(path, root, modules)}
        for name, path in modules.items()
    }


def test_the_rooms_are_the_documented_ones():
    assert _packages() == {
        "claims",
        "convert",
        "distributed",
        "gpt",
        "grading",
        "install",
        "models",
        "timing",
        "tooling",
    }


def test_student_modules_never_import_tooling_or_grading():
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {target}"
        for name, path in MODULES.items()
        if _room(name) in STUDENT_ROOMS and name not in ABOVE_ROOMS
        for target, line in _imports(path)
        if target.startswith(FORBIDDEN)
    ]
    assert not bad, "a lesson-facing module reaches into another room:\n" + "\n".join(
        bad
    )


def _room_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """Which subpackage imports which (the top level left out): (from, to) -> the imports."""
    edges: dict[tuple[str, str], list[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            pair = (_room(name), _room(target))
            if "" not in pair and pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{name} -> {target}")
    return edges


def _two_way(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    return [
        f"{a} and {b} import each other: " + "; ".join(sorted(edges[a, b])[:3])
        for a, b in sorted(edges)
        if a < b and (b, a) in edges
    ]


def test_two_way_rooms_are_found(tmp_path):
    files = {
        "course_utils/__init__.py": "",
        "course_utils/low/__init__.py": "",
        "course_utils/low/a.py": "def f():\n    from course_utils.high import b\n",
        "course_utils/high/__init__.py": "",
        "course_utils/high/b.py": "from course_utils.low import a\n",
    }
    modules = _write(tmp_path, files)
    found = _two_way(_room_edges(_graph(modules, tmp_path)))
    assert len(found) == 1 and found[0].startswith("high and low import each other")


def test_rooms_depend_one_way():
    two_way = _two_way(_room_edges(_graph(MODULES)))
    assert not two_way, (
        "rooms that depend on each other (a function both need lives below both, "
        "the command above both in course_utils/cli.py):\n" + "\n".join(two_way)
    )
    assert ("tooling", "grading") not in _room_edges(_graph(MODULES))


# Rooms whose concepts stand in folders: at most this many modules at their top.
FOLDERED_ROOMS = {"tooling": 12}


@pytest.mark.parametrize("room", sorted(FOLDERED_ROOMS))
def test_a_foldered_room_keeps_few_modules_at_its_top(room):
    top = sorted(p.stem for p in (PKG / room).glob("*.py") if p.stem != "__init__")
    assert len(top) <= FOLDERED_ROOMS[room], (
        f"course_utils/{room}/ holds {len(top)} modules at its top ({', '.join(top)}): "
        "put a concept of several modules in a folder of its own"
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


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return _modules(root)


SYNTHETIC = {
    "course_utils/__init__.py": (
        "import importlib\n_LAZY = {'a': 'alpha'}\n"
        "def __getattr__(name):\n"
        "    return importlib.import_module(f'{__name__}.{_LAZY[name]}')\n"
    ),
    "course_utils/alpha.py": "def f():\n    from .beta import g\n    return g\n",
    "course_utils/beta.py": (
        "import importlib\ng = importlib.import_module('course_utils.room.gamma')\n"
    ),
    "course_utils/room/__init__.py": "from ..alpha import f\n",
    "course_utils/room/gamma.py": "from . import delta\n",
    "course_utils/room/delta.py": "import course_utils.room  # its own package\n",
}


def test_the_scan_sees_every_kind_of_import(tmp_path):
    modules = _write(tmp_path, SYNTHETIC)
    edges = {
        (n, t, line)
        for n, path in modules.items()
        for t, line in _imports(path, tmp_path, modules)
    }
    assert ("course_utils", "course_utils.alpha", 2) in edges  # a lazy __getattr__ map
    assert (
        "course_utils.alpha",
        "course_utils.beta",
        2,
    ) in edges  # relative, in a function
    # a literal import_module, and the package Python imports before the module
    assert ("course_utils.beta", "course_utils.room.gamma", 2) in edges
    assert ("course_utils.beta", "course_utils.room", 2) in edges
    assert ("course_utils.room", "course_utils.alpha", 1) in edges  # two dots
    assert ("course_utils.room.gamma", "course_utils.room.delta", 1) in edges
    # a module's own packages are being imported already: not an edge
    assert not [e for e in edges if e[0] == "course_utils.room.delta"]
    assert _cycles(_graph(modules, tmp_path)) == [
        ["course_utils.alpha", "course_utils.beta", "course_utils.room"]
    ]


def test_no_import_cycles():
    cycles = _cycles(_graph(MODULES))
    assert not cycles, (
        "modules that import each other (directly or not, at the top, inside a "
        "function or lazily):\n" + "\n".join(", ".join(c) for c in cycles)
    )


def test_light_rooms_import_no_framework():
    light = [n for n in MODULES if _room(n) in LIGHT_ROOMS and n != "course_utils"]
    light += LIGHT_PACKAGES
    assert "course_utils.cli" in light and "course_utils.grading.batch" in light
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


# Test modules named for what they test where ``test_<module>.py`` would mislead:
# module (relative to course_utils/) -> its test module (relative to tests/).
MIRROR_NAMES = {
    # "test_lessons" reads as "the lessons run"; lessons run under nbval (Makefile).
    "lessons.py": "test_lesson_manifest.py",
}


def _mirror(path: Path) -> Path:
    rel = path.relative_to(PKG)
    if rel.as_posix() in MIRROR_NAMES:
        return ROOT / "tests" / MIRROR_NAMES[rel.as_posix()]
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


def _long_functions(
    path: Path, root: Path = ROOT, limit: int = LONG_FUNCTION_LINES
) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} "
        f"({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_long_function_finder_counts_lines(tmp_path):
    src = "def f():\n" + "    x = 1\n" * 80 + "\n\ndef g():\n    pass\n"
    (tmp_path / "m.py").write_text(src)
    assert _long_functions(tmp_path / "m.py", tmp_path) == ["m.py:1 f (81 lines)"]


def test_long_functions_are_reported_not_failed():
    long = [line for path in _sized_files() for line in _long_functions(path)]
    if long:
        warnings.warn(
            LongFunctionWarning(
                f"functions over {LONG_FUNCTION_LINES} lines (split them where the "
                "steps have names):\n" + "\n".join(long)
            ),
            stacklevel=1,
        )


def _size_problems(
    sizes: dict[str, int], exempt: dict[str, str], limit: int = MAX_MODULE_LINES
) -> list[str]:
    """Modules past ``limit`` without a reason, and exemptions that do not hold."""
    out = [
        f"{rel} ({n} lines): more than one concept? split it, or give SIZE_EXEMPT "
        "the reason"
        for rel, n in sizes.items()
        if n > limit and rel not in exempt
    ]
    for rel, why in exempt.items():
        if rel not in sizes:
            out.append(f"SIZE_EXEMPT names {rel}, which is not a module")
        elif sizes[rel] <= limit:
            out.append(f"SIZE_EXEMPT: {rel} is {sizes[rel]} lines, within the cap")
        if not re.fullmatch(r"[A-Z].{20,}\.", why):
            out.append(f"SIZE_EXEMPT[{rel!r}] is not a sentence: {why!r}")
    return out


def test_size_problems_are_found():
    sizes = {"a.py": 1600, "b.py": 1700, "c.py": 40}
    assert _size_problems(sizes, {}) == [
        "a.py (1600 lines): more than one concept? split it, or give SIZE_EXEMPT the reason",
        "b.py (1700 lines): more than one concept? split it, or give SIZE_EXEMPT the reason",
    ]
    reason = "Generated from the schema, one table in one file."
    assert _size_problems(sizes, {"a.py": reason, "b.py": reason}) == []
    assert _size_problems(
        sizes, {"a.py": reason, "b.py": "big", "c.py": reason, "d.py": reason}
    ) == [
        "SIZE_EXEMPT['b.py'] is not a sentence: 'big'",
        "SIZE_EXEMPT: c.py is 40 lines, within the cap",
        "SIZE_EXEMPT names d.py, which is not a module",
    ]


def test_no_module_is_far_past_one_concept():
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in _sized_files()
    }
    problems = _size_problems(sizes, SIZE_EXEMPT)
    assert not problems, "\n".join(problems)


def test_ruff_format_is_clean():
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def _astroid_start(node: ast.stmt) -> int:
    """A statement's first line as astroid numbers it: a decorated function starts at
    its first decorator (a decorated class at its ``class`` line, as in :mod:`ast`)."""
    if (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.decorator_list
    ):
        return node.decorator_list[0].lineno
    return node.lineno


def _signature_and_import_lines(source: str) -> set[int]:
    """The lines symilar's ``--ignore-imports`` and ``--ignore-signatures`` drop, found
    with :mod:`ast` as pylint finds them with astroid (whose ``parse`` infers and loads
    every module a file touches: 20 s here for the whole package). Imports anywhere,
    whole; each function's lines from its first decorator to its first statement after
    the docstring (to its last line when the docstring is all it holds), for functions
    at the top and in classes and functions, as pylint's ``stripped_lines`` walks them."""
    tree = ast.parse(source)
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))

    def functions(scope: ast.AST) -> None:
        for node in scope.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = (
                    node.body[1:]
                    if ast.get_docstring(node, clean=False) is not None
                    else node.body
                )
                end = _astroid_start(body[0]) if body else node.end_lineno + 1
                lines.update(range(_astroid_start(node), end))
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                functions(node)

    functions(tree)
    return lines


def _copied_code(files: list[Path], min_lines: int = 6) -> str:
    """pylint's ``symilar`` report (``-d min_lines -i --ignore-docstrings --ignore-imports
    --ignore-signatures``): its own reading of each file and its own pairing, with the
    import and signature lines found by :func:`_signature_and_import_lines`."""
    from pylint.checkers import symilar

    sim = symilar.Symilar(
        min_lines=min_lines, ignore_comments=True, ignore_docstrings=True
    )
    for path in files:
        with open(path, encoding="utf-8") as stream:
            sim.append_stream(str(path), stream)
        lineset = sim.linesets[-1]
        drop = _signature_and_import_lines("".join(lineset.real_lines))
        lineset._stripped_lines = [
            line for line in lineset.stripped_lines if line.line_number + 1 not in drop
        ]
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        sim.run()
    return report.getvalue()


def test_the_copied_code_scan_drops_what_pylint_drops_and_finds_a_copy(tmp_path):
    pytest.importorskip(
        "pylint", reason="pylint is in the dev extra (make test installs it)"
    )
    from pylint.checkers.symilar import stripped_lines

    # The same stripped lines as pylint's own astroid reading, on a module with every case.
    source = textwrap.dedent(
        '''\
        """A module."""
        import os
        from os.path import (
            join,
            split,
        )


        @staticmethod
        @property
        def decorated(a,
                      b=1):
            """Its docstring,
            on two lines."""
            import sys
            return a


        def only_a_docstring():
            """Nothing else."""


        async def without_docstring(x):  # a comment
            return x


        class Shape:
            """A class."""

            @classmethod
            def make(cls):
                @decorated
                class Inner:
                    def deep(self):
                        return join("a", "b")

                return Inner

            def area(self) -> float:
                # a comment first
                return split("a")
        '''
    )
    lines = source.splitlines(keepends=True)
    drop = _signature_and_import_lines(source)
    ours = [
        s
        for s in stripped_lines(lines, True, True, False, False)
        if s.line_number + 1 not in drop
    ]
    assert ours == stripped_lines(lines, True, True, True, True)
    assert len(drop) > 12  # imports and signatures were dropped
    block = "".join(f"    total = total * {i} + len(items)\n" for i in range(7))
    for name in ("a", "b"):
        (tmp_path / f"{name}.py").write_text(
            f"import os\n\n\ndef {name}(items):\n    total = 0\n{block}    return total\n"
        )
    report = _copied_code(sorted(tmp_path.glob("*.py")))
    assert "duplicates=0 " not in report and "similar lines in 2 files" in report


def test_no_code_is_copied_between_modules():
    """pylint's ``symilar``: blocks of 6 lines or more, ignoring comments, docstrings,
    imports and signatures, that stand in two modules."""
    pytest.importorskip(
        "pylint", reason="pylint is in the dev extra (make test installs it)"
    )
    report = _copied_code(list(MODULES.values()))
    assert "duplicates=0 " in report, report[-6000:]


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


def test_every_data_file_of_the_package_is_in_the_wheel():
    """A file the package reads (a quiz, a template) ships only when package-data names it."""
    import fnmatch

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = meta["tool"]["setuptools"]["package-data"]
    tracked = subprocess.run(
        ["git", "ls-files", "course_utils"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout: no list of the package's files")
    data = [f for f in tracked if not f.endswith(".py")]
    assert data, "the package has no data file: the test reads nothing"

    def shipped(path: str) -> bool:
        for package, patterns in globs.items():
            folder = package.replace(".", "/") + "/"
            if path.startswith(folder):
                rel = path[len(folder) :]
                if any(fnmatch.fnmatchcase(rel, p) for p in patterns):
                    return True
        return False

    assert [f for f in data if not shipped(f)] == []


def test_the_package_docstring_lists_every_student_module():
    import course_utils

    public = sorted(p.stem for p in PKG.glob("*.py") if not p.stem.startswith("_")) + [
        "distributed",
        "models",
        "convert",
        "gpt",
        "install",
    ]
    doc = course_utils.__doc__
    missing = [m for m in public if f"``{m}``" not in doc and f"``{m}/``" not in doc]
    assert not missing, f"course_utils/__init__.py's docstring does not list {missing}"


@pytest.mark.parametrize(
    "room",
    ["claims", "convert", "gpt", "grading", "install", "models", "timing", "tooling"],
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
