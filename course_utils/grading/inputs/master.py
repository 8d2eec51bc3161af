"""The master: the notebook that says what runs for every student and what it is worth.

A master is any notebook whose test cells start with ``# TESTS: <id>
points=<n>`` / ``# HIDDEN TESTS: <id> points=<n>`` (this course's markers) or
carry nbgrader's autograder metadata; solution cells are found by ``#
EXERCISE: <id>`` or nbgrader's ``solution: true`` with a ``grade_id``, and
markdown answers by ``<!-- EXERCISE: id -->``. Other code cells are setup
(context) cells. :func:`load_master` reads one into a :class:`Master`, or
raises a one-line :class:`CourseError` naming ``--source``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from course_utils import student_version
from course_utils.errors import CourseError
from course_utils.grading.inputs.ipynb import SubmissionError, nbgrader_meta, read_cells

_HIDDEN_BLOCK = re.compile(
    rf"^[ \t]*{re.escape(student_version.BEGIN_HIDDEN)}[ \t]*$.*?^[ \t]*{re.escape(student_version.END_HIDDEN)}[ \t]*$\n?",
    re.MULTILINE | re.DOTALL,
)


@dataclass
class Cell:
    """One cell of the notebook the grader runs (or shows, for markdown answers)."""

    role: str  # context | solution | answer | test
    source: str
    exercise: str | None = None
    points: float = 0.0
    hidden: bool = False
    name: str = ""


@dataclass
class Master:
    path: Path
    cells: list[Cell]
    exercises: list[str]
    answers: list[str]
    sha256: str

    @property
    def tests(self) -> list[Cell]:
        return [c for c in self.cells if c.role == "test"]

    def max_points(self, exercise: str | None = None) -> float:
        return sum(
            t.points for t in self.tests if exercise is None or t.exercise == exercise
        )

    def exercise_keys(self, options: dict) -> dict[str, str]:
        """Per exercise, a hash of what its grade depends on: setup, its tests, the options."""
        setup = [c.source for c in self.cells if c.role == "context"]
        keys = {}
        for ex in self.exercises:
            tests = [(c.source, c.points) for c in self.tests if c.exercise == ex]
            text = json.dumps([setup, tests, options], sort_keys=True, default=str)
            keys[ex] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return keys

    def hidden_sources(self) -> list[str]:
        return [c.source for c in self.tests if c.hidden]


def _strip_test_suffix(grade_id: str, known: list[str]) -> str | None:
    for suffix in ("-hidden-tests", "-tests"):
        if grade_id.endswith(suffix) and grade_id[: -len(suffix)] in known:
            return grade_id[: -len(suffix)]
    return grade_id if grade_id in known else None


@dataclass
class _Reader:
    """The master's cells as they are read, in order; ``error`` words a problem."""

    path: Path
    visible_only: bool
    cells: list[Cell] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)

    def error(self, message: str) -> CourseError:
        return CourseError(f"--source {self.path}: {message}")

    def add(self, index: int, raw: dict) -> None:
        meta, kind = nbgrader_meta(raw), raw["cell_type"]
        header = student_version.test_header(raw)
        if kind == "code" and (
            header or (meta.get("grade") and not meta.get("solution"))
        ):
            self.add_test(index, raw, meta, header)
            return
        ex = student_version.exercise_id(raw) or (
            str(meta["grade_id"])
            if meta.get("solution") and meta.get("grade_id")
            else None
        )
        if ex and kind in ("code", "markdown"):
            if any(
                c.exercise == ex and c.role in ("solution", "answer")
                for c in self.cells
            ):
                raise self.error(f"cell {index}: exercise id {ex!r} is used twice")
            role = "solution" if kind == "code" else "answer"
            (self.ids if role == "solution" else self.answers).append(ex)
            self.cells.append(Cell(role, raw["source"], ex))
        elif kind == "code":
            self.cells.append(Cell("context", raw["source"]))

    def add_test(self, index: int, raw: dict, meta: dict, header) -> None:
        src = raw["source"]
        hidden = student_version.BEGIN_HIDDEN in src
        if header:
            ex, points = header[0], header[1]
            hidden = hidden or header[2]
        else:
            gid = str(meta.get("grade_id") or f"cell-{index}")
            ex = _strip_test_suffix(gid, self.ids) or (
                self.ids[-1] if self.ids else gid
            )
            try:
                points = float(meta.get("points", 0) or 0)
            except (TypeError, ValueError):
                raise self.error(
                    f"cell {index} has points {meta.get('points')!r}, not a number"
                ) from None
        if points < 0:
            raise self.error(f"cell {index} has negative points")
        if hidden and self.visible_only:
            if header and header[2]:
                return
            src = _HIDDEN_BLOCK.sub("", src)
        if ex not in self.ids:
            self.ids.append(ex)
        self.cells.append(Cell("test", src, ex, points, hidden, self.name(ex, hidden)))

    def name(self, ex: str, hidden: bool) -> str:
        """``<id>: tests`` or ``<id>: hidden tests``, numbered when it repeats."""
        kind = "hidden tests" if hidden else "tests"
        name, n = f"{ex}: {kind}", 2
        while name in self.names:
            name, n = f"{ex}: {kind} ({n})", n + 1
        self.names.add(name)
        return name


def load_master(path: str | Path, *, visible_only: bool = False) -> Master:
    """Read a master (ours, or any nbgrader source notebook); :class:`CourseError` if unusable.

    ``visible_only`` drops hidden test cells and hidden blocks (``course check``).
    """
    path = Path(path)
    if not path.is_file():
        raise CourseError(f"--source {path}: no such notebook")
    try:
        raw_cells = read_cells(path.resolve())  # the instructor's file: links are fine
    except SubmissionError as err:
        raise CourseError(f"--source {path}: {err}") from None
    reader = _Reader(path, visible_only)
    for index, raw in enumerate(raw_cells):
        reader.add(index, raw)
    if not any(c.role == "test" for c in reader.cells):
        raise reader.error(
            "no test cells ('# TESTS: <id> points=<n>' or nbgrader "
            "autograder metadata); is it a master from solutions/?"
        )
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return Master(path, reader.cells, reader.ids, reader.answers, sha)


def in_sync(master: Master) -> None:
    """The master's ``.ipynb`` is what ``course sync`` writes from the ``.py`` source
    beside it (as ``course sync --check`` judges it): a hidden test fixed in the
    ``.py`` and never synced would grade the class on the old test. A master without
    a ``.py`` beside it (nbgrader's, a Gradescope bundle's) has nothing to drift from."""
    from course_utils.tooling.notebooks import twin_drift

    py = twin_drift(master.path)
    if py is not None:
        raise CourseError(
            f"--source {master.path}: its source {py} differs from it (edited since "
            "the notebook was written?): run `course sync` in the course checkout to "
            f"write {master.path.name} from it, then run this command again"
        )
