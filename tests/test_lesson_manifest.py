"""The lesson manifest: the course's lessons, and the one module that reads their folders."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from course_utils import lessons

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "course_utils"
# Calls that list a folder.
LISTING = {"glob", "rglob", "iglob", "iterdir", "listdir", "scandir", "walk"}


def test_the_course_has_its_thirteen_lessons():
    found = lessons.lessons(ROOT)
    assert [lesson.number for lesson in found] == [f"{n:02d}" for n in range(13)]
    for lesson in found:
        assert lesson.source.is_file() and lesson.notebook.is_file()
        assert lesson.title and not lesson.title.startswith(lesson.number)
        assert lesson.master.parent == ROOT / "solutions"
        assert lesson.student == ROOT / "exercises" / f"{lesson.master.stem}.ipynb"
        assert lesson.master.name.startswith(f"{lesson.number}_")
        assert lesson.twin().is_file(), lesson.twin()
        assert lesson.student_twin().is_file(), lesson.student_twin()
    assert found[3].title == "JIT compilation"


def test_a_small_course(tmp_path):
    for rel in (
        "notebooks/01_a.py",
        "notebooks/01_a.ipynb",
        "notebooks/02_b.ipynb",
        "notebooks/zh/01_a.ipynb",
        "solutions/01_a_exercises.py",
        "exercises/01_a_exercises.ipynb",
        "exercises/notes.txt",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# # 01 · A lesson\n" if rel.endswith("py") else "")
    a, b = lessons.lessons(tmp_path)
    assert (a.name, a.number, a.title, b.title) == ("01_a", "01", "A lesson", "")
    assert a.master.name == "01_a_exercises.py" and b.master is None
    assert a.student_twin() == tmp_path / "exercises/zh/01_a_exercises.ipynb"
    assert lessons.files(tmp_path, "notebooks", language="zh") == [a.twin()]
    assert [p.name for p in lessons.files(tmp_path, "exercises", "")] == [
        "01_a_exercises.ipynb",
        "notes.txt",
    ]
    assert lessons.numbered(tmp_path, "solutions", "01_a", ".py") == a.master
    assert lessons.number("01_a_exercises.ipynb") == "01"
    assert lessons.number("notes") == "notes"
    with pytest.raises(ValueError, match="not one of the notebook folders"):
        lessons.files(tmp_path, "docs")


def _names_a_folder(node: ast.AST, known: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` holds ``"notebooks"``, ``"solutions/"``, ``f"exercises/{x}"``...,
    or one of the ``known`` names that hold one."""
    return any(
        (
            isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and n.value.strip("/").split("/")[0] in lessons.FOLDERS
        )
        or (isinstance(n, ast.Name) and n.id in known)
        for n in ast.walk(node)
    )


def _folder_constants(tree: ast.Module) -> frozenset[str]:
    """The module's names bound at its top to a value naming a folder (``DIRS = (...)``)."""
    return frozenset(
        t.id
        for stmt in tree.body
        if isinstance(stmt, ast.Assign | ast.AnnAssign)
        and stmt.value is not None
        and _names_a_folder(stmt.value)
        for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
        for t in ast.walk(target)
        if isinstance(t, ast.Name)
    )


def _bound_to_a_folder(
    scope: ast.AST, names: set[str], known: frozenset[str] = frozenset()
) -> bool:
    """Whether one of ``names`` is bound, in ``scope``, to a value naming a folder
    (``for kind in ("notebooks", "solutions")``, ``folder = root / "notebooks"``)."""
    for n in ast.walk(scope):
        if isinstance(n, ast.For | ast.comprehension):
            target, value = n.target, n.iter
        elif isinstance(n, ast.Assign):
            target, value = ast.Tuple(elts=n.targets), n.value
        elif isinstance(n, ast.NamedExpr | ast.AnnAssign) and n.value is not None:
            target, value = n.target, n.value
        else:
            continue
        bound = {t.id for t in ast.walk(target) if isinstance(t, ast.Name)}
        if bound & names and _names_a_folder(value, known):
            return True
    return False


def _listings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, function) of each listing of a folder (``glob``, ``iterdir``, ``listdir``,
    ...) whose path names a notebook folder, directly or through a name bound to one in
    the innermost function around it."""
    scope_of: dict[ast.AST, ast.AST] = {}
    for scope in ast.walk(tree):  # outer functions first: inner ones overwrite them
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            scope_of |= {n: scope for n in ast.walk(scope)}
    known = _folder_constants(tree)  # ``DIRS = ("notebooks", ...)``, read anywhere
    out = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in LISTING:
            continue
        paths = [func.value] if isinstance(func, ast.Attribute) else []
        paths += call.args
        names = {n.id for p in paths for n in ast.walk(p) if isinstance(n, ast.Name)}
        scope = scope_of.get(call, tree)
        if any(_names_a_folder(p, known) for p in paths) or _bound_to_a_folder(
            scope, names, known
        ):
            out.append((call.lineno, getattr(scope, "name", "<module>")))
    return sorted(out)


def test_the_scan_finds_a_folder_listed_by_name():
    source = (
        "def a(root):\n    return (root / 'notebooks').glob('*.ipynb')\n"
        "def b(root):\n    for kind in ('solutions',):\n        yield from os.listdir(kind)\n"
        "def c(root):\n    folder = root / 'exercises'\n    return folder.rglob('*')\n"
        "def d(root):\n    return (root / 'docs').glob('*.md'), 'exercises/'\n"
        "def e(root):\n    return glob.glob(f'{root}/solutions/*.py')\n"
        "DIRS = ('notebooks',)\n"
        "def f(root):\n    return [(root / d).iterdir() for d in DIRS]\n"
    )
    assert _listings(ast.parse(source)) == [
        (2, "a"),
        (5, "b"),
        (8, "c"),
        (12, "e"),
        (15, "f"),
    ]


def test_only_the_manifest_lists_the_notebook_folders():
    manifest = Path(lessons.__file__).resolve()
    found = [
        f"{path.relative_to(ROOT)}:{line} ({name})"
        for path in sorted(PKG.rglob("*.py"))
        if path.resolve() != manifest
        for line, name in _listings(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, (
        "these read notebooks/, solutions/ or exercises/ themselves; ask "
        "course_utils.lessons instead:\n" + "\n".join(found)
    )


def test_generated_files_are_marked_generated_and_sources_are_not():
    # .gitattributes marks what the course's commands write (linguist-generated: GitHub
    # folds them in a diff), so that a reviewer reads the sources.
    import subprocess

    from course_utils.tooling import cheatsheet, points_page

    generated = [ROOT / "README.zh.md", ROOT / cheatsheet.PAGE, ROOT / points_page.PAGE]
    sources = [ROOT / "README.md", ROOT / "docs" / "AUTHORING.md"]
    for lesson in lessons.lessons(ROOT):
        generated += [lesson.notebook, lesson.master.with_suffix(".ipynb")]
        generated += [lesson.student, lesson.twin(), lesson.student_twin()]
        sources += [lesson.source, lesson.master]
    sources += sorted((ROOT / "locale").rglob("*.po"))
    paths = [p.relative_to(ROOT).as_posix() for p in generated + sources]
    out = subprocess.run(
        ["git", "check-attr", "-z", "linguist-generated", "--", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")[:-1]  # path, attribute, value, ...: each ends with NUL
    marked = {
        path
        for path, _, value in zip(out[::3], out[1::3], out[2::3], strict=True)
        if value == "set"
    }
    n = len(generated)
    assert [p for p in paths[:n] if p not in marked] == []  # generated, not marked
    assert [p for p in paths[n:] if p in marked] == []  # sources marked generated
