"""Paths and small helpers shared by the grader's tests."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import nbformat
import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "grader"
MASTER = FIX / "tiny_master.ipynb"
STUDENT = FIX / "tiny_student.ipynb"
SUBS = FIX / "submissions"


def quiet(*_args) -> None:
    """An ``echo`` for ``grade`` that prints nothing."""


def class_folder(folder: Path, names: dict[str, str]) -> Path:
    """A submissions folder: ``student -> fixture name`` (from tests/fixtures/grader/submissions)."""
    folder.mkdir()
    for student, fixture in names.items():
        shutil.copy(SUBS / f"{fixture}.ipynb", folder / f"{student}.ipynb")
    return folder


def graded(out: Path) -> dict[str, dict]:
    """Every student's ``grade.json`` in a report folder."""
    return {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/grade.json")}


def with_env(run_env: str, run_ids: set[str]) -> list[psutil.Process]:
    """Processes whose environment marks them as part of one of ``run_ids``."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(run_env) in run_ids:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting to be reaped counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def nbgrader_only(tmp_path: Path) -> Path:
    """The tiny master with our header lines removed: only nbgrader's metadata is left."""
    nb = nbformat.read(MASTER, as_version=4)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            cell.source = cell.source.split("\n", 1)[1]
    path = tmp_path / "tiny_master.ipynb"
    nbformat.write(nb, path)
    return path


def require_sandbox() -> None:
    """Skip a test that needs the bubblewrap sandbox when it cannot run here; in CI
    (``CI=true``, set by ``.ci/run``, which installs bubblewrap) fail instead."""
    from course_utils.grading.sandbox import isolation

    problem = isolation.problem()
    if problem is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI needs the grader's sandbox: {problem}")
    pytest.skip(f"no sandbox: {problem}")


def stale_master(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout's master whose ``.py`` had a hidden test edited, never synced."""
    folder = tmp_path / "course" / "solutions"
    folder.mkdir(parents=True)
    name = "00_welcome_exercises"
    for ext in (".py", ".ipynb"):
        shutil.copy(ROOT / "solutions" / f"{name}{ext}", folder / f"{name}{ext}")
    py = folder / f"{name}.py"
    text = py.read_text()
    head = "# HIDDEN TESTS: port-mlp points=3\n### BEGIN HIDDEN TESTS\n"
    assert head in text
    py.write_text(text.replace(head, head + "assert 1 + 1 == 2  # a fixed test\n", 1))
    return folder / f"{name}.ipynb", py
