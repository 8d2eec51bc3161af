"""Expected errors in lessons are short: `%xmode Minimal` runs before any cell that raises on purpose."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
CELL = re.compile(r"^# %%(.*)$", re.MULTILINE)


def cells(source: str) -> list[tuple[str, str]]:
    """(header, body) of every cell in a jupytext percent file."""
    marks = list(CELL.finditer(source))
    return [
        (
            m.group(1),
            source[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None],
        )
        for i, m in enumerate(marks)
    ]


def first_unshortened_raise(source: str) -> int | None:
    """Index of the first cell tagged raises-exception before any `%xmode Minimal` cell."""
    minimal = False
    for i, (header, body) in enumerate(cells(source)):
        if "[markdown]" not in header and re.search(
            r"^# %xmode Minimal\s*$", body, re.M
        ):
            minimal = True
        if "raises-exception" in header and not minimal:
            return i
    return None


def test_the_rule_finds_a_raise_before_xmode():
    bad = '# %%\nx = 1\n\n# %% tags=["raises-exception"]\nraise ValueError\n'
    good = (
        '# %%\n# %xmode Minimal\n\n# %% tags=["raises-exception"]\nraise ValueError\n'
    )
    assert first_unshortened_raise(bad) == 1
    assert first_unshortened_raise(good) is None


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_expected_errors_are_short(lesson):
    index = first_unshortened_raise(lesson.read_text(encoding="utf-8"))
    assert index is None, (
        f"{lesson.name}: cell {index} raises on purpose before any `# %xmode Minimal` cell; "
        "add one before it so the traceback is one line (docs/AUTHORING.md)"
    )
