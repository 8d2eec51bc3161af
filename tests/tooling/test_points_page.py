"""The points page adds up each master's test-cell headers, and build-exercises keeps it."""

import re
import shutil
from pathlib import Path

from course_utils import lessons
from course_utils.tooling import notebooks, points_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / points_page.PAGE).read_text(encoding="utf-8")
HEADER = re.compile(r"^# (HIDDEN )?TESTS: \S+ points=(\d+(?:\.\d+)?)$", re.M)


def _sums(master: Path) -> tuple[float, float]:
    """Visible and hidden points, read from the master's headers with a regex of its own."""
    found = HEADER.findall(master.read_text(encoding="utf-8"))
    return (
        sum(float(n) for hidden, n in found if not hidden),
        sum(float(n) for hidden, n in found if hidden),
    )


def test_every_master_has_its_row_with_its_headers_added_up():
    masters = lessons.files(ROOT, lessons.MASTERS, ".py")
    assert len(masters) >= 13
    rows = {}
    for line in PAGE.splitlines():
        found = re.search(
            r"\(`(solutions/[^`]+)`\) \|.*\| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", line
        )
        if found:
            rows[found[1]] = tuple(float(x) for x in found.groups()[1:])
    assert list(rows) == [f"solutions/{m.name}" for m in masters]
    for master in masters:
        visible, hidden = _sums(master)
        assert visible > 0 and hidden > 0, master.name
        assert rows[f"solutions/{master.name}"] == (visible, hidden, visible + hidden)
    total = re.search(
        r"^\| the course \| \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", PAGE, re.M
    )
    assert total and float(total[3]) == sum(sum(_sums(m)) for m in masters)


def test_an_exercise_row_names_its_points_and_a_written_answer_says_so():
    assert "`sync-timer` 2 + 3" in PAGE
    assert re.search(r"`silent-why` written", PAGE)  # lesson 07's written answer


def test_build_exercises_names_a_stale_points_page_and_rewrites_it(tmp_path):
    root = tmp_path / "course"
    (root / "solutions").mkdir(parents=True)
    for path in sorted((ROOT / "solutions").glob("00_*.py")):
        shutil.copy2(path, root / "solutions" / path.name)
    assert points_page.PAGE in notebooks.build_exercises(root, check=True)  # none yet
    notebooks.build_exercises(root)
    page = (root / points_page.PAGE).read_text(encoding="utf-8")
    assert "| 6 | 9 | 15 |" in page and "| the course | | 6 | 9 | 15 |" in page

    master = root / "solutions" / "00_welcome_exercises.py"
    text = master.read_text(encoding="utf-8")
    assert text.count("# HIDDEN TESTS: sync-timer points=3") == 1
    master.write_text(
        text.replace(
            "# HIDDEN TESTS: sync-timer points=3", "# HIDDEN TESTS: sync-timer points=5"
        )
    )
    assert points_page.PAGE in notebooks.build_exercises(root, check=True)
    notebooks.build_exercises(root)
    page = (root / points_page.PAGE).read_text(encoding="utf-8")
    assert "`sync-timer` 2 + 5" in page and "| 6 | 11 | 17 |" in page
    assert notebooks.build_exercises(root, check=True) == []
