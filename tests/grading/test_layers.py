"""The grader's layers (``course_utils/grading/__init__.py``): a module imports only
modules of its own layer and of the layers below it, whether the import is at the top
or inside a function, absolute or relative."""

from __future__ import annotations

import ast
from pathlib import Path

import course_utils.grading

GRADING = Path(course_utils.grading.__file__).resolve().parent
PACKAGE = "course_utils.grading"
# Lowest first: each layer may import the layers before it, never those after it.
LAYERS = ("sandbox", "inputs", "records", "policy", "batch", "integrations", "commands")
# Modules left at the package's root: old paths that published commands still run.
# They import their new place and nothing imports them: above every layer.
SHIMS = {"classroom"}


def _name(path: Path, root: Path = GRADING) -> str:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def rank(module: str) -> int:
    """The layer's place in ``LAYERS``; the package itself is below them, a shim above."""
    parts = module.split(".")[2:]
    if not parts:
        return -1
    return LAYERS.index(parts[0]) if parts[0] in LAYERS else len(LAYERS)


def imports(source: str, module: str, is_package: bool, known: set[str]):
    """``(imported grading module, line)`` for every import in ``source``, anywhere in it.

    ``from A import b`` counts as importing ``A.b`` when that is a module of ``known``, else
    ``A``; relative imports are resolved against ``module``'s package."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                for a in node.names
            ]
        else:
            continue
        found += [
            (t, node.lineno)
            for t in targets
            if t == PACKAGE or t.startswith(PACKAGE + ".")
        ]
    return found


def _layer(module: str) -> str:
    return "package" if rank(module) < 0 else (*LAYERS, "root")[rank(module)]


def violations(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Every import of ``graph`` that reaches a higher layer (a shim is above them all)."""
    return [
        f"{module}:{line} imports {target} ({_layer(module)} -> {_layer(target)})"
        for module, found in sorted(graph.items())
        for target, line in sorted(found, key=lambda t: t[1])
        if rank(target) > rank(module)
    ]


def _graph(root: Path = GRADING) -> dict[str, list[tuple[str, int]]]:
    files = {
        _name(p, root): p
        for p in sorted(root.rglob("*.py"))
        if "__pycache__" not in p.parts
    }
    known = set(files)
    return {
        name: imports(
            p.read_text(encoding="utf-8"), name, p.name == "__init__.py", known
        )
        for name, p in files.items()
    }


def test_every_module_is_in_a_layer():
    folders = {p.parent.name for p in GRADING.glob("*/__init__.py")}
    assert folders == set(LAYERS), "a folder of course_utils/grading/ outside LAYERS"
    loose = {p.stem for p in GRADING.glob("*.py")} - {"__init__"}
    assert loose == SHIMS, f"modules at grading's root: {sorted(loose - SHIMS)}"
    assert not (GRADING / "templates").exists()  # they belong to integrations


def test_the_package_docstring_gives_the_layers_lowest_first():
    doc = course_utils.grading.__doc__
    places = [doc.find(f"``{layer}/``") for layer in LAYERS]
    assert -1 not in places, f"course_utils/grading/__init__.py lacks {LAYERS}"
    assert places == sorted(places), "the docstring gives the layers out of order"


def test_no_module_imports_a_higher_layer():
    graph = _graph()
    edges = {(m, t) for m, found in graph.items() for t, _ in found}
    # The parser sees imports at the top and inside functions (the commands import
    # their work when they run): a graph without these would be a broken parser.
    assert (
        "course_utils.grading.batch.grader",
        "course_utils.grading.policy.feedback",
    ) in edges
    assert (
        "course_utils.grading.commands.grade",
        "course_utils.grading.batch.grader",
    ) in edges
    assert len(edges) > 60
    bad = violations(graph)
    assert not bad, "imports from a lower layer into a higher one:\n" + "\n".join(bad)


def test_a_planted_violation_is_found(tmp_path):
    root = tmp_path / "grading"
    files = {
        "__init__.py": "",
        "sandbox/__init__.py": "",
        "sandbox/session.py": "from . import outputs\n",
        "sandbox/outputs.py": (
            "import json\n"
            "from course_utils.grading.policy import scoring\n"
            "def f():\n"
            "    from ..batch.grader import Grader\n"
            "    import course_utils.grading.commands.grade\n"
            "    from .. import classroom\n"
        ),
        "policy/__init__.py": "",
        "policy/scoring.py": "from ..sandbox import session\nfrom . import scoring\n",
        "batch/__init__.py": "",
        "batch/grader.py": "from course_utils.grading.sandbox.outputs import f\n",
        "commands/__init__.py": "",
        "commands/grade.py": "",
        "classroom.py": "from course_utils.grading.commands import grade\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert violations(_graph(root)) == [
        "course_utils.grading.sandbox.outputs:2 imports course_utils.grading.policy.scoring"
        " (sandbox -> policy)",
        "course_utils.grading.sandbox.outputs:4 imports course_utils.grading.batch.grader"
        " (sandbox -> batch)",
        "course_utils.grading.sandbox.outputs:5 imports course_utils.grading.commands.grade"
        " (sandbox -> commands)",
        "course_utils.grading.sandbox.outputs:6 imports course_utils.grading.classroom"
        " (sandbox -> root)",
    ]
