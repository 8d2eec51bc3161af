"""Which assignment a notebook belongs to: another lesson's exercise notebook, a lesson
notebook or an unrelated notebook is named as such instead of graded as a row of
missing exercises.

A notebook is this assignment's when one of its cells names one of the master's
exercises (the ``# EXERCISE: <id>`` / ``<!-- EXERCISE: <id> -->`` markers, nbgrader's
``grade_id``, a ``# TESTS: <id>`` header): that is checked first and costs nothing.
When none does, the notebook is compared with the course's other notebooks (the
:class:`NotebookIndex`): by exercise ids, then by the text of its other cells (whitespace-
normalised fingerprints of its markdown and setup cells, which students rarely edit).
:func:`check_assignment` raises :class:`WrongAssignment` ("this is the lesson 04
exercise notebook (…); this assignment is the lesson 05 exercise notebook (…)"),
unless the notebook names no exercise at all and shares more text with the master than
with any other notebook: then it is this assignment's notebook with its exercise and
test cells deleted, graded as usual (every exercise ``missing``).

The index is read from ``course-notebooks.json`` next to the master (the Gradescope
bundle writes one, :func:`write_index`), else built from the course checkout that
holds the master (``exercises/``, else ``solutions/``, and ``notebooks/``), else from
the other masters in the master's folder.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from course_utils import lessons, student_version
from course_utils.errors import CourseError
from course_utils.grading.inputs.ipynb import SubmissionError, nbgrader_meta, read_cells
from course_utils.grading.inputs.master import Master

INDEX_FILE = "course-notebooks.json"
PREFIX = "wrong assignment: "
MIN_TEXT = 40  # characters: shorter cells (a title, "import numpy as np") prove nothing
MIN_SHARED = 2  # fingerprints shared with a notebook before it is named
MAX_SIBLINGS = 200  # notebooks read from the master's folder when there is no index


class WrongAssignment(SubmissionError, CourseError):
    """A notebook of another assignment. A :class:`SubmissionError` for ``course grade``
    (the student is ``invalid`` with this reason) and a :class:`CourseError` for
    ``course check`` (one line, exit status 2)."""


@dataclass(frozen=True)
class Known:
    """One notebook of the course: its file name, kind, exercise ids and fingerprints."""

    name: str
    kind: str  # "exercises" (a student notebook or a master) or "lesson"
    ids: frozenset[str]
    prints: frozenset[str]

    def describe(self) -> str:
        """``the lesson 04 exercise notebook (04_training_loop_exercises.ipynb)``."""
        lesson = _lesson(self.name)
        if self.kind == "lesson":
            what = f"the lesson {lesson} notebook" if lesson else "a lesson notebook"
            return f"{what} ({self.name}), not an exercise notebook"
        if lesson:
            return f"the lesson {lesson} exercise notebook ({self.name})"
        return f"the exercise notebook {self.name}"

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "ids": sorted(self.ids),
            "prints": sorted(self.prints),
        }


def _lesson(name: str) -> str | None:
    m = re.match(r"(\d+)_", name)
    return m.group(1) if m else None


def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def cell_ids(cells: list[dict]) -> set[str]:
    """Every exercise id the cells name: markers, nbgrader's ``grade_id``, test headers."""
    ids = set()
    for cell in cells:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id")
        if meta.get("solution") and isinstance(gid, str):
            ids.add(gid)
        header = student_version.test_header(cell)
        marker = student_version.exercise_id(cell)
        ids |= {x for x in (marker, header[0] if header else None) if x}
    return ids


def fingerprints(cells: list[dict]) -> frozenset[str]:
    """Hashes of the cells that are neither exercises nor tests, whitespace-normalised."""
    out = set()
    for cell in cells:
        if cell.get("cell_type") not in ("code", "markdown"):
            continue
        if student_version.exercise_id(cell) or student_version.test_header(cell):
            continue
        if nbgrader_meta(cell).get("solution") or nbgrader_meta(cell).get("grade"):
            continue
        text = " ".join(_text(cell).split())
        if len(text) >= MIN_TEXT:
            out.add(hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16])
    return frozenset(out)


def known(path: Path, kind: str) -> Known | None:
    """The index entry of one notebook file; None when it cannot be read."""
    try:
        cells = read_cells(path)
    except SubmissionError:
        return None
    return Known(path.name, kind, frozenset(cell_ids(cells)), fingerprints(cells))


@dataclass(frozen=True)
class NotebookIndex:
    notebooks: tuple[Known, ...]

    def to_json(self) -> str:
        body = {"version": 1, "notebooks": [k.to_json() for k in self.notebooks]}
        return json.dumps(body, indent=0) + "\n"

    @classmethod
    def from_json(cls, text: str, where: Path) -> NotebookIndex:
        try:
            data = json.loads(text)
            return cls(
                tuple(
                    Known(
                        e["name"],
                        e["kind"],
                        frozenset(e["ids"]),
                        frozenset(e["prints"]),
                    )
                    for e in data["notebooks"]
                )
            )
        except (ValueError, KeyError, TypeError) as err:
            raise CourseError(
                f"{where}: not an index of the course's notebooks ({err})"
            ) from None


def course_index(root: Path) -> NotebookIndex:
    """The index of a course checkout: its exercise notebooks and its lessons."""
    exercises = lessons.files(root, lessons.STUDENTS) or lessons.files(
        root, lessons.MASTERS
    )
    found = [known(p, "exercises") for p in exercises]
    found += [known(p, "lesson") for p in lessons.files(root, lessons.LESSONS)]
    return NotebookIndex(tuple(k for k in found if k is not None))


def write_index(root: Path, path: Path) -> NotebookIndex:
    """Write the course checkout's index to ``path`` (the Gradescope bundle's)."""
    index = course_index(root)
    path.write_text(index.to_json(), encoding="utf-8")
    return index


def checkout(master: Path) -> Path | None:
    """The course checkout holding the master, if it lies inside one."""
    for d in master.resolve().parents:
        if (d / "notebooks").is_dir() and (d / "course_utils").is_dir():
            return d
    return None


@functools.lru_cache(maxsize=8)
def _index_for(master: Path, stamp: float) -> NotebookIndex:
    del stamp  # part of the cache key only: a changed master folder is read again
    beside = master.parent / INDEX_FILE
    if beside.is_file():
        return NotebookIndex.from_json(beside.read_text(encoding="utf-8"), beside)
    root = checkout(master)
    if root is not None:
        return course_index(root)
    siblings = sorted(p for p in master.parent.glob("*.ipynb") if p.name != master.name)
    found = [known(p, "exercises") for p in siblings[:MAX_SIBLINGS]]
    return NotebookIndex(tuple(k for k in found if k is not None and k.ids))


def index_for(master: Master) -> NotebookIndex:
    """The notebooks a submission of ``master`` is compared with (see the module's doc)."""
    path = master.path.resolve()
    return _index_for(path, path.parent.stat().st_mtime)


def assignment(master: Master) -> str:
    """``the lesson 05 exercise notebook (05_distributed_training_exercises.ipynb)``."""
    return Known(master.path.name, "exercises", frozenset(), frozenset()).describe()


def identify(master: Master, cells: list[dict]) -> str | None:
    """None when ``cells`` are this assignment's; else the reason, without :data:`PREFIX`."""
    wanted = set(master.exercises) | set(master.answers)
    if not any(c.role in ("solution", "answer") for c in master.cells):
        return None  # nothing a student writes: any notebook runs the tests
    ids = cell_ids(cells)
    if ids & wanted:
        return None
    mine = fingerprints(cells)
    try:
        own = len(mine & fingerprints(read_cells(master.path.resolve())))
    except SubmissionError:
        own = 0
    others = [
        k
        for k in index_for(master).notebooks
        if Path(k.name).stem != master.path.stem and not (k.ids and k.ids >= wanted)
    ]
    this = assignment(master)
    by_ids = [k for k in others if k.ids & ids]
    if by_ids:
        best = max(by_ids, key=lambda k: (len(k.ids & ids), len(k.prints & mine)))
        return f"this is {best.describe()}; this assignment is {this}"
    by_text = max(others, key=lambda k: len(k.prints & mine), default=None)
    shared = len(by_text.prints & mine) if by_text else 0
    if by_text and shared >= MIN_SHARED and shared > own:
        return f"this is {by_text.describe()}; this assignment is {this}"
    expected = ", ".join(sorted(wanted)[:5]) + (", …" if len(wanted) > 5 else "")
    if ids:
        theirs = ", ".join(sorted(ids)[:5]) + (", …" if len(ids) > 5 else "")
        return (
            f"this notebook's exercises ({theirs}) are not this assignment's; "
            f"this assignment is {this}, with exercises {expected}"
        )
    if own:
        return None  # this assignment's notebook, every exercise and test cell deleted
    return (
        "this notebook holds none of this assignment's exercise cells "
        f"(# EXERCISE: {expected}) and none of its text; this assignment is {this}"
    )


def check_assignment(master: Master, cells: list[dict]) -> None:
    """Raise :class:`WrongAssignment` when ``cells`` are another assignment's notebook."""
    reason = identify(master, cells)
    if reason is not None:
        raise WrongAssignment(PREFIX + reason)
