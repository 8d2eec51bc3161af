"""course_utils.claims as a package: its modules depend one way, and lesson 08's names stay.

The rules every room follows (docstring, sizes, light imports, mirrored tests) are
in tests/test_layout.py.
"""

import ast
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


def test_each_module_imports_only_modules_listed_above_it():
    order = _documented_order()
    for i, m in enumerate(order):
        imported = _claims_imports(m)
        assert imported <= set(order[:i]), f"{m} imports {imported - set(order[:i])}"


def test_the_lessons_names_are_re_exported_unchanged():
    from course_utils.claims import command, report, verdict_rule, verdicts

    assert claims.run is command.run and claims.plot is report.plot
    assert claims.judge is verdicts.judge and claims.Measured is verdict_rule.Measured
    assert claims.faster is verdicts.faster and claims.get("faster").id == "faster"
    for name in claims.__all__:
        assert getattr(claims, name) is not None, name
