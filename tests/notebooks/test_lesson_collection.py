"""The lessons run under nbval: every lesson, one Chinese twin, each with its lowering check.

``make test`` passes ``notebooks/`` to pytest with ``--nbval-lax``: each code cell of a
lesson is a test item. ``lessons.py`` beside this file is the plugin that picks the
Chinese twin and adds a ``lowering`` item after each lesson's last cell. These tests
check what the suite collects, and that ``make test`` names the lessons' folder.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from course_utils import lessons
from tests.notebooks import lessons as lesson_runs

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


def test_every_lesson_and_one_chinese_twin_is_collected_with_its_lowering_check():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval-lax"]
        + ["-p", "no:cacheprovider", "-p", "no:xdist", "notebooks"],
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
    english = lessons.files(ROOT, lessons.LESSONS)
    twin = ROOT / lessons.LESSONS / lessons.CHINESE / lesson_runs.TRANSLATED_RUN
    expected = [*english, twin]
    assert sorted(items) == sorted(str(p.relative_to(ROOT)) for p in expected)
    for path in expected:
        names = items[str(path.relative_to(ROOT))]
        code = [
            c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
        ]
        assert names[-1] == "lowering", f"{path.name}: {names[-3:]}"
        assert len(names) == len(code) + 1, f"{path.name}: {len(names)} items"
