"""course_utils.claims as a package: light imports, one-way dependencies, sizes, docs, tests."""

import ast
import subprocess
import sys
from pathlib import Path

import course_utils.claims as claims

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "course_utils" / "claims"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _documented_order() -> list[str]:
    """The modules as the package docstring lists them, one ``- ``name``: ...`` line each."""
    return [
        line.split("``")[1]
        for line in claims.__doc__.splitlines()
        if line.startswith("- ``")
    ]


def _claims_imports(module: str) -> set[str]:
    """The sibling modules ``module`` imports, at its top or inside a function."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "course_utils.claims":
                found |= {a.name for a in node.names}
            elif node.module.startswith("course_utils.claims."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("course_utils.claims."):
                    found.add(a.name.split(".")[2])
    return found


def test_docstring_lists_every_module_once():
    assert sorted(_documented_order()) == MODULES
    for m in MODULES:
        assert ast.get_docstring(ast.parse((PACKAGE / f"{m}.py").read_text())), m


def test_each_module_imports_only_modules_listed_above_it():
    order = _documented_order()
    for i, m in enumerate(order):
        imported = _claims_imports(m)
        assert imported <= set(order[:i]), f"{m} imports {imported - set(order[:i])}"


def test_no_module_imports_a_framework_at_import_time():
    code = (
        "import importlib, sys\n"
        "importlib.import_module('course_utils.claims')\n"
        f"for m in {MODULES!r}:\n"
        "    importlib.import_module('course_utils.claims.' + m)\n"
        "print([f for f in ('jax', 'torch', 'flax', 'optax') if f in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def _long_functions(path: Path, limit: int = 60) -> list[str]:
    tree = ast.parse(path.read_text())
    return [
        f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_size_rules_for_modules_functions_and_tests():
    for path in PACKAGE.glob("*.py"):
        assert len(path.read_text().splitlines()) <= 400, path.name
    paths = [*PACKAGE.glob("*.py"), *Path(__file__).parent.glob("*.py")]
    assert [f for p in paths for f in _long_functions(p)] == []


def test_every_module_has_its_test_module():
    here = Path(__file__).parent
    assert [m for m in MODULES if not (here / f"test_{m}.py").exists()] == []


def test_the_lessons_names_are_re_exported_unchanged():
    from course_utils.claims import command, report, verdicts

    assert claims.run is command.run and claims.plot is report.plot
    assert claims.verdict is verdicts.verdict and claims.Measured is verdicts.Measured
    for name in claims.__all__:
        assert getattr(claims, name) is not None, name
