"""The lessons run under nbval: every lesson, one Chinese twin, each with its lowering check.

``make test`` passes ``notebooks/`` to pytest with ``--nbval-lax``: each code cell of a
lesson is a test item. ``nbval_lessons.py`` beside this file is the plugin that picks the
Chinese twin, leaves its English lesson to JupyterLab, and adds a ``lowering`` item after
each lesson's last cell. These tests check what the suite collects, and that ``make test``
names the lessons' folder.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from course_utils import lessons
from tests.notebooks import nbval_lessons as lesson_runs

ROOT = Path(__file__).resolve().parents[2]


def _test_recipe() -> str:
    """The pytest line of the Makefile's ``test`` target."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test: .*\n((?:\t.*\n)+)", text, re.M)
    assert recipe, "Makefile: no `test:` target"
    return recipe.group(1)


def test_make_test_runs_the_lessons_folder_under_nbval():
    recipe = _test_recipe()
    assert "--nbval-lax" in recipe
    assert re.search(r"\stests notebooks\s", recipe), recipe


def _collected(*paths: str) -> dict[str, list[str]]:
    """The items a collect-only run of ``paths`` yields, by file."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax"]
        + ["-p", "no:cacheprovider", "-p", "no:xdist", *paths],
        cwd=ROOT,
        env={**os.environ, "COURSE_LOWERING_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    items: dict[str, list[str]] = {}
    for line in out.stdout.splitlines():
        if "::" in line:
            path, name = line.split("::", 1)
            items.setdefault(path, []).append(name)
    return items


def test_every_lesson_runs_once_with_its_lowering_check():
    """Every lesson but one under nbval, and the Chinese twin of that one: its English
    lesson runs in JupyterLab (tests/tooling/test_lab_browser.py)."""
    items = _collected("notebooks")
    english = lessons.files(ROOT, lessons.LESSONS)
    in_lab = ROOT / lessons.LESSONS / lesson_runs.IN_JUPYTERLAB
    twin = ROOT / lessons.LESSONS / lessons.CHINESE / lesson_runs.TRANSLATED_RUN
    assert in_lab in english and twin.name == in_lab.name
    expected = [*(p for p in english if p != in_lab), twin]
    assert sorted(items) == sorted(str(p.relative_to(ROOT)) for p in expected)
    for path in expected:
        names = items[str(path.relative_to(ROOT))]
        code = [
            c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
        ]
        assert names[-1] == "lowering", f"{path.name}: {names[-3:]}"
        assert len(names) == len(code) + 1, f"{path.name}: {len(names)} items"


def test_the_lesson_left_to_jupyterlab_runs_there_and_when_named():
    from tests.tooling import test_lab_browser

    name = f"{lessons.LESSONS}/{lesson_runs.IN_JUPYTERLAB}"
    assert test_lab_browser.LESSON == name
    assert "lowering" in _collected(name)[name]
