"""Authoring round trips: each pair is a fixed point of jupytext, both editing
directions end in a pair `course sync --check` accepts, and the pre-commit hooks."""

import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
import yaml
from jupytext.cli import jupytext as jupytext_cli

from course_utils.tooling import cheatsheet, notebooks, points_page

ROOT = Path(__file__).resolve().parents[2]


def _copy_course(tmp_path: Path, lessons: str | None = None) -> Path:
    """The course's notebooks, masters and student notebooks; with ``lessons`` (a glob
    of lesson numbers: "0[01]"), those lessons' only, for a test whose edits touch
    them alone (what sync does with two lessons it does with all of them)."""
    root = tmp_path / "course"
    for d in ("notebooks", "solutions", "exercises"):
        if lessons is None:
            shutil.copytree(
                ROOT / d, root / d, ignore=shutil.ignore_patterns("__pycache__")
            )
            continue
        (root / d).mkdir(parents=True)
        for path in sorted((ROOT / d).glob(f"{lessons}_*")):
            shutil.copy2(path, root / d / path.name)
    (root / "docs").mkdir()  # the copy's own pages: its lessons' and masters'
    (root / cheatsheet.PAGE).write_text(cheatsheet.render(root), encoding="utf-8")
    (root / points_page.PAGE).write_text(
        points_page.render(root, notebooks.read_py), encoding="utf-8"
    )
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in ("notebooks", "solutions")
        for p in sorted((root / d).glob("*.*"))
    }


def _make_newer(paths: list[Path]) -> None:
    """Give ``paths`` a later mtime than their twins: jupytext --sync reads the newer."""
    for p in paths:
        twin = p.with_suffix(".ipynb" if p.suffix == ".py" else ".py")
        t = twin.stat().st_mtime
        os.utime(p, (t + 10, t + 10))


def _jupytext_sync(paths: list[Path]) -> None:
    jupytext_cli(["--sync", "--quiet", *map(str, paths)])


@pytest.mark.parametrize("newer", ["py", "ipynb"])
def test_jupytext_sync_changes_no_pair(tmp_path, newer):
    root = _copy_course(tmp_path)
    before = _snapshot(root)
    pairs = notebooks.pairs(root)
    _make_newer([getattr(p, newer) for p in pairs])
    _jupytext_sync([p.ipynb for p in pairs])
    after = _snapshot(root)
    changed = sorted(k for k in before if before[k] != after.get(k))
    assert changed == [], f"jupytext --sync rewrote {changed}"
    assert sorted(after) == sorted(before), "jupytext --sync created files"


def _edit_ipynb(path: Path, old: str, new: str) -> str:
    """Change one code cell as JupyterLab would (same id, metadata kept); its id."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and old in c.source)
    cell.source = cell.source.replace(old, new, 1)
    nbformat.write(nb, path)
    return cell.id


def test_edit_in_jupyterlab_then_jupytext_writes_the_py(tmp_path):
    root = _copy_course(tmp_path, "0[01]")
    lesson = root / "notebooks" / "01_design_philosophy.ipynb"
    master = root / "solutions" / "00_welcome_exercises.ipynb"
    ids = [
        _edit_ipynb(lesson, "SMOKE = None", "SMOKE = None  # edited in JupyterLab"),
        _edit_ipynb(master, "### BEGIN SOLUTION", "# edited\n    ### BEGIN SOLUTION"),
    ]
    _make_newer([lesson, master])
    _jupytext_sync([lesson, master])
    assert (
        "SMOKE = None  # edited in JupyterLab" in lesson.with_suffix(".py").read_text()
    )
    master_py = master.with_suffix(".py").read_text()
    assert "# edited\n    ### BEGIN SOLUTION" in master_py
    # the header's cell filter keeps nbgrader's metadata in the .ipynb only
    assert "nbgrader={" not in master_py
    assert notebooks.sync(root, check=True) == []
    for path, cell_id in zip((lesson, master), ids, strict=True):
        nb = nbformat.read(path, as_version=4)
        assert cell_id in [c.id for c in nb.cells]  # the edited cell kept its id
    graded = [
        c for c in nbformat.read(master, as_version=4).cells if "nbgrader" in c.metadata
    ]
    assert graded, "the master lost its nbgrader metadata"
    # the master changed, so the student version must be rebuilt; then all is clean
    assert notebooks.build_exercises(root, check=True) == [
        "exercises/00_welcome_exercises.ipynb"
    ]
    notebooks.build_exercises(root)
    assert notebooks.build_exercises(root, check=True) == []


def test_edit_in_an_editor_then_course_sync(tmp_path):
    root = _copy_course(tmp_path, "0[01]")
    py = root / "notebooks" / "01_design_philosophy.py"
    text = py.read_text()
    header_end = text.index("# ---\n", 5) + len("# ---\n")
    # An editor's habits: no jupytext header, extra blank lines between cells.
    py.write_text(text[header_end:].lstrip() + "\n\n\n# %%\nx = 1\n\n\n# %%\nx + 1\n")
    assert notebooks.sync(root, check=True) == [
        "notebooks/01_design_philosophy.py",
        "notebooks/01_design_philosophy.ipynb",
    ]
    notebooks.sync(root)
    assert notebooks.sync(root, check=True) == []
    assert py.read_text().startswith(text[:header_end])  # the header is back
    assert py.read_text().endswith(
        "\n# %%\nx = 1\n\n# %%\nx + 1\n"
    )  # jupytext's layout
    before = _snapshot(root)
    _make_newer([py.with_suffix(".ipynb")])
    _jupytext_sync([py.with_suffix(".ipynb")])
    assert _snapshot(root) == before


def test_every_py_carries_the_jupytext_header():
    for pair in notebooks.pairs(ROOT):
        head = pair.py.read_text().split("# ---\n", 2)
        assert head[0] == "" and "#     formats: ipynb,py:percent\n" in head[1], pair.py
        assert "#       jupytext_version:" not in head[1], (
            f"{pair.py}: version in header"
        )


# ------------------------------------------------------------------ pre-commit


def _hooks() -> dict[str, dict]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    out = {}
    for repo in config["repos"]:
        for hook in repo["hooks"]:
            out[hook["id"]] = {"repo": repo["repo"], "rev": repo.get("rev"), **hook}
    return out


def _pinned(name: str) -> str:
    text = (ROOT / "constraints" / "known-good.txt").read_text()
    return re.search(rf"^{name}==(\S+)$", text, re.MULTILINE).group(1)


def test_pre_commit_runs_jupytext_sync_ruff_and_the_course_checks():
    hooks = _hooks()
    assert {
        "jupytext",
        "ruff-check",
        "ruff-format",
        "course-sync-check",
        "course-build-exercises-check",
    } <= set(hooks)
    jupytext = hooks["jupytext"]
    assert jupytext["repo"] == "https://github.com/mwouts/jupytext"
    assert "--sync" in jupytext["args"]
    assert jupytext["rev"] == f"v{_pinned('jupytext')}"
    assert (
        hooks["ruff-format"]["repo"] == "https://github.com/astral-sh/ruff-pre-commit"
    )
    assert hooks["ruff-check"]["rev"] == f"v{_pinned('ruff')}"
    sync = hooks["course-sync-check"]
    assert sync["repo"] == "local" and sync["entry"].endswith("course sync --check")
    assert hooks["course-build-exercises-check"]["entry"].endswith(
        "course build-exercises --check"
    )


def test_authoring_guide_explains_the_convention_and_pre_commit():
    guide = (ROOT / "docs" / "AUTHORING.md").read_text()
    for needle in ("jupytext --sync", "pre-commit install", "ruff format", "header"):
        assert needle in guide, needle
