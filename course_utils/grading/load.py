"""What the grader reads: the master's cells, the submissions, and the notebook it runs.

The master gives every cell that runs: its own setup cells, its visible and
hidden test cells, and one slot per exercise. Each slot is filled with the
student's cells for that exercise, found by id (nbgrader's ``grade_id``
metadata, else the ``# EXERCISE: <id>`` marker text), so cells the student
added, moved or reordered do not matter and their tests are always the
master's own.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course_utils.tooling import markers
from course_utils.tooling.errors import CourseError

MAX_NOTEBOOK_BYTES = 50 * 2**20
RESERVED = {
    "grades.csv",
    "grades.json",
}  # names of the class tables in the report folder
_HIDDEN_BLOCK = re.compile(
    rf"^[ \t]*{re.escape(markers.BEGIN_HIDDEN)}[ \t]*$.*?^[ \t]*{re.escape(markers.END_HIDDEN)}[ \t]*$\n?",
    re.MULTILINE | re.DOTALL,
)


class SubmissionError(Exception):
    """A submission that cannot be graded at all; the message is the student's reason."""


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

    def hidden_sources(self) -> list[str]:
        return [c.source for c in self.tests if c.hidden]


def cell_source(cell: Any) -> str:
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def _nbgrader(cell: dict) -> dict:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def read_cells(path: Path) -> list[dict]:
    """The cells of a notebook file, each ``{cell_type, source, metadata}``.

    Raises :class:`SubmissionError` with a one-line reason for an empty,
    truncated, non-JSON or wrongly shaped file. Cell ids, kernel names and
    outputs are not needed and are ignored.
    """
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise SubmissionError(
                f"notebook is {size / 2**20:.0f} MiB, over the {MAX_NOTEBOOK_BYTES >> 20} MiB limit"
            )
        raw = path.read_bytes()
    except OSError as err:
        raise SubmissionError(
            f"cannot read the notebook: {err.strerror or err}"
        ) from None
    if not raw.strip():
        raise SubmissionError("the notebook file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError(
            "the notebook is not UTF-8 text (is it really a .ipynb?)"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        body = text.strip()
        if body.startswith("{") and (
            not body.endswith("}") or err.pos >= len(body) - 1
        ):
            raise SubmissionError(
                f"the notebook is truncated: its JSON ends early ({err.msg})"
            ) from None
        raise SubmissionError(
            f"the notebook is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    if not isinstance(data, dict):
        raise SubmissionError(
            f"the notebook is JSON but not a notebook: a {type(data).__name__}, not an object"
        )
    if "worksheets" in data and "cells" not in data:
        raise SubmissionError(
            "nbformat 3 notebook: open and save it in Jupyter to upgrade it"
        )
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise SubmissionError(
            "the notebook is JSON but not a notebook: it has no 'cells' list"
        )
    out = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in (
            "code",
            "markdown",
            "raw",
        ):
            raise SubmissionError(
                f"cell {i} is not a notebook cell (no valid 'cell_type')"
            )
        src = cell.get("source", "")
        if not (
            isinstance(src, str)
            or (isinstance(src, list) and all(isinstance(s, str) for s in src))
        ):
            raise SubmissionError(f"cell {i} has a 'source' that is not text")
        meta = cell.get("metadata")
        out.append(
            {
                "cell_type": cell["cell_type"],
                "source": cell_source(cell),
                "metadata": meta if isinstance(meta, dict) else {},
            }
        )
    return out


def _strip_test_suffix(grade_id: str, known: list[str]) -> str | None:
    for suffix in ("-hidden-tests", "-tests"):
        if grade_id.endswith(suffix) and grade_id[: -len(suffix)] in known:
            return grade_id[: -len(suffix)]
    return grade_id if grade_id in known else None


def load_master(path: str | Path, *, visible_only: bool = False) -> Master:
    """Read a master (ours, or any nbgrader source notebook); :class:`CourseError` if unusable."""
    path = Path(path)
    if not path.is_file():
        raise CourseError(f"--source {path}: no such notebook")
    try:
        raw_cells = read_cells(path)
    except SubmissionError as err:
        raise CourseError(f"--source {path}: {err}") from None
    cells: list[Cell] = []
    ids: list[str] = []
    answers: list[str] = []
    names: set[str] = set()
    for index, raw in enumerate(raw_cells):
        src, meta, kind = raw["source"], _nbgrader(raw), raw["cell_type"]
        header = markers.test_header(raw)
        if kind == "code" and (
            header or (meta.get("grade") and not meta.get("solution"))
        ):
            hidden = markers.BEGIN_HIDDEN in src
            if header:
                ex, points = header[0], header[1]
                hidden = hidden or header[2]
            else:
                gid = str(meta.get("grade_id") or f"cell-{index}")
                ex = _strip_test_suffix(gid, ids) or (ids[-1] if ids else gid)
                try:
                    points = float(meta.get("points", 0) or 0)
                except (TypeError, ValueError):
                    raise CourseError(
                        f"--source {path}: cell {index} has points {meta.get('points')!r}, not a number"
                    ) from None
            if points < 0:
                raise CourseError(f"--source {path}: cell {index} has negative points")
            if hidden and visible_only:
                if header and header[2]:
                    continue
                src = _HIDDEN_BLOCK.sub("", src)
            name = f"{ex}: {'hidden tests' if hidden else 'tests'}"
            n = 2
            while name in names:
                name, n = f"{ex}: {'hidden tests' if hidden else 'tests'} ({n})", n + 1
            names.add(name)
            if ex not in ids:
                ids.append(ex)
            cells.append(Cell("test", src, ex, points, hidden, name))
            continue
        ex = markers.exercise_id(raw) or (
            str(meta["grade_id"])
            if meta.get("solution") and meta.get("grade_id")
            else None
        )
        if ex and kind in ("code", "markdown"):
            if any(
                c.exercise == ex and c.role in ("solution", "answer") for c in cells
            ):
                raise CourseError(
                    f"--source {path}: cell {index}: exercise id {ex!r} is used twice"
                )
            role = "solution" if kind == "code" else "answer"
            (ids if role == "solution" else answers).append(ex)
            cells.append(Cell(role, src, ex))
        elif kind == "code":
            cells.append(Cell("context", src))
    if not any(c.role == "test" for c in cells):
        raise CourseError(
            f"--source {path}: no test cells ('# TESTS: <id> points=<n>' or nbgrader "
            "autograder metadata); is it a master from solutions/?"
        )
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return Master(path, cells, ids, answers, sha)


@dataclass
class Matched:
    """The notebook to run for one student, and what matching noticed."""

    cells: list[Cell]
    missing: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    student_code: dict[str, list[str]] = field(default_factory=dict)


def _student_exercise(cell: dict, known: set[str]) -> tuple[str | None, str | None]:
    """(id, note): metadata first, then the marker text (metadata lost by copy-paste)."""
    meta = _nbgrader(cell)
    gid = meta.get("grade_id")
    if meta.get("solution") and isinstance(gid, str) and gid in known:
        return gid, None
    marker = markers.exercise_id(cell)
    if marker in known:
        return marker, None
    claimed = marker or (gid if meta.get("solution") and isinstance(gid, str) else None)
    if claimed:
        return (
            None,
            f"a cell names exercise {claimed!r}, which this assignment does not have; it was not graded",
        )
    return None, None


def match(master: Master, student_cells: list[dict]) -> Matched:
    """Put each student solution cell in its exercise's slot of the master."""
    known = set(master.exercises) | set(master.answers)
    master_sources = {c.source.strip() for c in master.cells}
    found: dict[str, list[dict]] = {}
    notes: list[str] = []
    ignored = 0
    for cell in student_cells:
        ex, note = _student_exercise(cell, known)
        if note:
            notes.append(note)
        if ex is None:
            text = cell["source"].strip()
            if cell["cell_type"] == "code" and text and text not in master_sources:
                ignored += 1
            continue
        want = "code" if ex in master.exercises else "markdown"
        if cell["cell_type"] != want:
            notes.append(
                f"exercise {ex!r}: a {cell['cell_type']} cell was ignored (the answer is a {want} cell)"
            )
            continue
        found.setdefault(ex, []).append(cell)
    result = Matched(cells=[], notes=notes)
    for cell in master.cells:
        if cell.role not in ("solution", "answer"):
            result.cells.append(cell)
            continue
        mine = found.get(cell.exercise or "", [])
        if not mine:
            result.missing.append(cell.exercise or "")
            continue
        if len(mine) > 1:
            result.duplicated[cell.exercise or ""] = len(mine)
        result.student_code[cell.exercise or ""] = [c["source"] for c in mine]
        for c in mine:
            result.cells.append(Cell(cell.role, c["source"], cell.exercise))
    for ex in result.missing:
        notes.append(
            f"exercise {ex!r}: no cell starts with '# EXERCISE: {ex}' (deleted?); it scores 0"
        )
    for ex, n in result.duplicated.items():
        notes.append(f"exercise {ex!r}: {n} cells hold it; all ran, in notebook order")
    if ignored:
        notes.append(
            f"{ignored} added or edited code cell(s) outside the exercise cells "
            "were not run: only exercise cells are graded, with the original tests"
        )
    return result


@dataclass
class Submission:
    student: str
    path: Path | None
    problem: str | None = None


def discover(
    folder: str | Path, master_name: str
) -> tuple[list[Submission], list[str]]:
    """One submission per ``.ipynb`` file or sub-folder; notes for what was ignored."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseError(f"SUBMISSIONS {folder}: not a folder")
    subs: dict[str, Submission] = {}
    notes: list[str] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            sub = Submission(entry.stem, entry)
        elif entry.is_dir():
            nbs = sorted(
                p
                for p in entry.rglob("*.ipynb")
                if not any(part.startswith(".") for part in p.relative_to(entry).parts)
            )
            sub = Submission(entry.name, None)
            named = [p for p in nbs if p.name == master_name]
            if len(nbs) == 1:
                sub.path = nbs[0]
            elif len(named) == 1:
                sub.path = named[0]
            elif not nbs:
                sub.problem = "the student's folder holds no .ipynb notebook"
            else:
                shown = ", ".join(str(p.relative_to(entry)) for p in nbs[:5])
                sub.problem = (
                    f"the student's folder holds {len(nbs)} notebooks ({shown}) and "
                    f"{'several are' if named else 'none is'} named {master_name}"
                )
        else:
            notes.append(f"ignored {entry.name}: not a notebook or a folder")
            continue
        if sub.student in RESERVED:
            sub.student = f"student-{sub.student}"
        if sub.student in subs:
            notes.append(
                f"ignored {entry.name}: student {sub.student!r} already has a submission"
            )
            continue
        subs[sub.student] = sub
    return list(subs.values()), notes
