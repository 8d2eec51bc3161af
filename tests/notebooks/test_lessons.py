"""The lessons run under nbval: every lesson, one Chinese twin, each with its lowering check.

No test function here runs a lesson. ``make test`` passes ``notebooks/`` to pytest with
``--nbval-lax``, so each code cell of a lesson is a test item, and the root
``conftest.py`` gives the kernels smoke mode and strict warnings and adds a ``lowering``
item after each lesson's last cell. This file checks that wiring: which notebooks the
suite collects, and what it collects for each.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat

import conftest
from course_utils import lessons

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
    twin = ROOT / lessons.LESSONS / lessons.CHINESE / conftest.TRANSLATED_RUN
    expected = [*english, twin]
    assert sorted(items) == sorted(str(p.relative_to(ROOT)) for p in expected)
    for path in expected:
        names = items[str(path.relative_to(ROOT))]
        code = [
            c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
        ]
        assert names[-1] == "lowering", f"{path.name}: {names[-3:]}"
        assert len(names) == len(code) + 1, f"{path.name}: {len(names)} items"
