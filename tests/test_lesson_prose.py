"""Every lesson reads within its prose budget (course_utils/tooling/prose.py, docs/AUTHORING.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from course_utils.tooling import prose

ROOT = Path(__file__).resolve().parents[1]
LESSONS = prose.lessons(ROOT)


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_each_lesson_reads_within_its_budget(lesson):
    p = prose.measure(prose._read(lesson), lesson.name)
    failures = prose.budget_failures(p)
    assert not failures, (
        f"{lesson.name} is over its prose budget (docs/AUTHORING.md, How prose is counted):\n"
        f"{prose.HEADER}\n{prose.row(p)}\n  "
        + "\n  ".join(failures)
        + f"\nRun `course prose {lesson.stem[:2]} --long` for its long sentences."
    )


def test_the_whole_course_reads_within_its_budget():
    rows = [prose.measure(prose._read(p), p.name) for p in LESSONS]
    course = prose.total(rows, "all lessons")
    assert course.words <= prose.MAX_COURSE_WORDS, "\n".join(
        prose.row(p) for p in [*rows, course]
    )
