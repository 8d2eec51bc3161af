"""The cheat sheet: every lesson's Summary table on one page, ``docs/CHEATSHEET.md``.

Each lesson ends with a ``## Summary`` section whose first Markdown table puts the
PyTorch way beside the JAX way. This module gathers those tables, lesson by lesson,
into one page. ``course sync`` writes it with the notebooks, and ``course sync
--check`` reports it when it is out of step with a lesson's source.
"""

from __future__ import annotations

from pathlib import Path

from course_utils import lessons

PAGE = "docs/CHEATSHEET.md"
HEADING = "# ## Summary"  # a lesson's Summary heading in its jupytext source
HEADER = """\
# JAX and PyTorch: the cheat sheet

Each lesson ends with a table of what it taught: the PyTorch way beside the JAX way.
This page gathers those tables in the lessons' order.
A row names the calls; the lesson shows them running.

`course sync` writes this page from the lessons' sources.
To change a row, edit the lesson's Summary table, then run `course sync`.
"""


def summary_table(source: str) -> list[str]:
    """The first Markdown table under the ``## Summary`` heading of a lesson's
    jupytext source, as lines without the comment mark; ``[]`` where there is none."""
    lines = source.splitlines()
    try:
        start = lines.index(HEADING)
    except ValueError:
        return []
    table: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("# |"):
            table.append(line[2:])
        elif table or line.startswith("# %%"):
            break
    return table


def render(root: Path) -> str:
    """The page for the checkout at ``root``: a section per lesson that has a table."""
    parts = [HEADER]
    for lesson in lessons.lessons(root):
        if not lesson.source.exists():
            continue
        table = summary_table(lesson.source.read_text(encoding="utf-8"))
        if not table:
            continue
        link = f"../{lessons.LESSONS}/{lesson.notebook.name}"
        title = f"{lesson.number} · {lesson.title}"
        parts.append(f"## [{title}]({link})\n\n" + "\n".join(table) + "\n")
    return "\n".join(parts)
