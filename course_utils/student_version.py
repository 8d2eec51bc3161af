"""The exercise marker grammar: masters in ``solutions/`` become student notebooks in ``exercises/``.

Markers (nbgrader's syntax; docs/AUTHORING.md, "Exercise masters"):

- a solution code cell starts with ``# EXERCISE: <id>`` and holds one or more
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` regions, replaced in the
  student version by ``# YOUR CODE HERE`` and ``raise NotImplementedError()``
  at the same indentation;
- a markdown answer holds ``<!-- BEGIN SOLUTION -->`` / ``<!-- END SOLUTION -->``
  (replaced by ``YOUR ANSWER HERE``) and names its id with ``<!-- EXERCISE: <id> -->``;
- a test cell's first line is ``# TESTS: <id> points=<n>`` (shipped to
  students) or ``# HIDDEN TESTS: <id> points=<n>`` (removed from the student
  version; its body sits between ``### BEGIN HIDDEN TESTS`` and
  ``### END HIDDEN TESTS`` so nbgrader reads the master too).

:func:`annotate` gives these cells nbgrader's metadata; :func:`student_version`
builds what students get, and ``course build-exercises`` (``tooling/notebooks.py``)
writes it to ``exercises/``. Any missing, unbalanced or nested marker raises
:class:`MarkerError` naming the file and the cell.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_MD = "<!-- BEGIN SOLUTION -->"
END_MD = "<!-- END SOLUTION -->"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
TEXT_STUB = "YOUR ANSWER HERE"

_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
EXERCISE_RE = re.compile(rf"^#\s*EXERCISE:\s*({_ID})\s*$")
MD_EXERCISE_RE = re.compile(rf"<!--\s*EXERCISE:\s*({_ID})\s*-->")
TEST_RE = re.compile(rf"^#\s*(HIDDEN )?TESTS:\s*({_ID})\s+points=(\d+(?:\.\d+)?)\s*$")


class MarkerError(ValueError):
    """A solution or test marker is missing, unbalanced, nested or malformed."""


@dataclass
class TestCell:
    exercise: str
    points: float
    hidden: bool
    index: int

    @property
    def grade_id(self) -> str:
        return f"{self.exercise}-{'hidden-tests' if self.hidden else 'tests'}"


@dataclass
class Exercise:
    id: str
    solution_cells: list[int] = field(default_factory=list)
    tests: list[TestCell] = field(default_factory=list)

    @property
    def points(self) -> float:
        return sum(t.points for t in self.tests)


def _source(cell: Any) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _first_line(text: str) -> str:
    return text.lstrip("\n").split("\n", 1)[0].strip()


def test_header(cell: Any) -> tuple[str, float, bool] | None:
    """``(exercise id, points, hidden)`` when the code cell is a test cell, else None."""
    if cell.get("cell_type") != "code":
        return None
    line = _first_line(_source(cell))
    m = TEST_RE.match(line)
    if m:
        return m.group(2), float(m.group(3)), bool(m.group(1))
    return None


def exercise_id(cell: Any) -> str | None:
    """The id a solution cell declares (``# EXERCISE: id`` / ``<!-- EXERCISE: id -->``)."""
    text = _source(cell)
    if cell.get("cell_type") == "code":
        m = EXERCISE_RE.match(_first_line(text))
        return m.group(1) if m else None
    if cell.get("cell_type") == "markdown":
        m = MD_EXERCISE_RE.search(text)
        return m.group(1) if m else None
    return None


def _regions(
    lines: list[str], begin: str, end: str, where: str
) -> list[tuple[int, int]]:
    """(begin, end) line pairs of balanced, non-nested marker regions."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped == begin:
            if start is not None:
                raise MarkerError(f"{where}: nested '{begin}' on line {i + 1}")
            start = i
        elif stripped == end:
            if start is None:
                raise MarkerError(f"{where}: '{end}' on line {i + 1} without '{begin}'")
            out.append((start, i))
            start = None
        elif begin in stripped or end in stripped:
            raise MarkerError(
                f"{where}: line {i + 1} has a marker with other text on it: {stripped!r}; "
                "a marker stands alone on its line"
            )
    if start is not None:
        raise MarkerError(f"{where}: '{begin}' on line {start + 1} has no '{end}'")
    return out


def parse(nb: Any, path: str = "<notebook>") -> dict[str, Exercise]:
    """Validate every marker and return the exercises in notebook order."""
    exercises: dict[str, Exercise] = {}
    seen_tests: set[tuple[str, bool]] = set()
    for index, cell in enumerate(nb.get("cells", [])):
        where = f"{path}: cell {index}"
        kind = cell.get("cell_type")
        if kind == "code":
            _parse_code(cell, index, where, exercises, seen_tests)
        elif kind == "markdown":
            _parse_markdown(cell, index, where, exercises)
    return exercises


def _parse_code(
    cell: Any,
    index: int,
    where: str,
    exercises: dict[str, Exercise],
    seen_tests: set[tuple[str, bool]],
) -> None:
    """A code cell: a test cell, a solution cell, or neither (no marker then)."""
    text = _source(cell)
    lines = text.split("\n")
    solution = _regions(lines, BEGIN_SOLUTION, END_SOLUTION, where)
    hidden = _regions(lines, BEGIN_HIDDEN, END_HIDDEN, where)
    header = test_header(cell)
    if (
        _first_line(text).lstrip("# ").upper().startswith(("TESTS", "HIDDEN TESTS"))
        and not header
    ):
        raise MarkerError(
            f"{where}: malformed test header {_first_line(text)!r}; "
            "write '# TESTS: <id> points=<n>' or '# HIDDEN TESTS: <id> points=<n>'"
        )
    ex_id = exercise_id(cell)
    if header:
        if solution:
            raise MarkerError(f"{where}: a test cell cannot hold a solution region")
        _add_tests(header, bool(hidden), index, where, exercises, seen_tests)
    elif hidden:
        raise MarkerError(f"{where}: '{BEGIN_HIDDEN}' outside a hidden test cell")
    elif solution or ex_id:
        if not ex_id:
            raise MarkerError(
                f"{where}: solution region in a cell without a first line "
                "'# EXERCISE: <id>'"
            )
        if not solution:
            raise MarkerError(
                f"{where}: exercise {ex_id!r} has no '{BEGIN_SOLUTION}' region"
            )
        _add_exercise(ex_id, index, where, exercises)


def _add_tests(
    header: tuple[str, float, bool],
    has_hidden_region: bool,
    index: int,
    where: str,
    exercises: dict[str, Exercise],
    seen_tests: set[tuple[str, bool]],
) -> None:
    """Record a test cell under its exercise, which must come before it."""
    tid, points, is_hidden = header
    if is_hidden and not has_hidden_region:
        raise MarkerError(
            f"{where}: hidden test cell for {tid!r} needs its body between "
            f"'{BEGIN_HIDDEN}' and '{END_HIDDEN}'"
        )
    if not is_hidden and has_hidden_region:
        raise MarkerError(f"{where}: '{BEGIN_HIDDEN}' in a visible test cell")
    if (tid, is_hidden) in seen_tests:
        kind_name = "hidden test" if is_hidden else "test"
        raise MarkerError(f"{where}: a second {kind_name} cell for {tid!r}")
    seen_tests.add((tid, is_hidden))
    if tid not in exercises:
        raise MarkerError(
            f"{where}: tests for {tid!r} come before (or without) a cell "
            f"starting with '# EXERCISE: {tid}'"
        )
    exercises[tid].tests.append(TestCell(tid, points, is_hidden, index))


def _parse_markdown(
    cell: Any, index: int, where: str, exercises: dict[str, Exercise]
) -> None:
    """A markdown cell: a written answer when it holds a solution region."""
    text = _source(cell)
    regions = _regions(text.split("\n"), BEGIN_MD, END_MD, where)
    if BEGIN_SOLUTION in text or BEGIN_HIDDEN in text:
        raise MarkerError(f"{where}: code markers in a markdown cell; use '{BEGIN_MD}'")
    if regions:
        ex_id = exercise_id(cell)
        if not ex_id:
            raise MarkerError(
                f"{where}: markdown answer without '<!-- EXERCISE: <id> -->'"
            )
        _add_exercise(ex_id, index, where, exercises)


def _add_exercise(
    ex_id: str, index: int, where: str, exercises: dict[str, Exercise]
) -> None:
    if ex_id in exercises:
        raise MarkerError(f"{where}: exercise id {ex_id!r} is used twice")
    exercises[ex_id] = Exercise(ex_id, [index])


def _replace_regions(
    text: str, begin: str, end: str, stub: tuple[str, ...], where: str
) -> str:
    lines = text.split("\n")
    regions = _regions(lines, begin, end, where)
    for start, stop in reversed(regions):
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        lines[start : stop + 1] = [indent + s for s in stub]
    return "\n".join(lines)


def _nbgrader_meta(**kwargs: Any) -> dict[str, Any]:
    meta = {"schema_version": 3, "locked": False, "solution": False, "grade": False}
    meta.update(kwargs)
    return meta


def annotate(nb: Any, path: str = "<notebook>") -> Any:
    """Give solution and test cells nbgrader's metadata (in place); return ``nb``."""
    exercises = parse(nb, path)
    tests = {t.index: t for ex in exercises.values() for t in ex.tests}
    solutions = {i: ex.id for ex in exercises.values() for i in ex.solution_cells}
    for index, cell in enumerate(nb["cells"]):
        cell.get("metadata", {}).pop("nbgrader", None)
        if index in solutions:
            markdown = cell["cell_type"] == "markdown"
            # A written answer is read by the instructor: nbgrader's "manually graded answer".
            cell["metadata"]["nbgrader"] = _nbgrader_meta(
                grade_id=solutions[index],
                solution=True,
                grade=markdown,
                **({"points": 0} if markdown else {}),
            )
        elif index in tests:
            t = tests[index]
            cell["metadata"]["nbgrader"] = _nbgrader_meta(
                grade_id=t.grade_id, grade=True, locked=True, points=t.points
            )
    return nb


def student_version(nb: Any, path: str = "<notebook>") -> Any:
    """The student notebook: solutions replaced by stubs, hidden tests removed, no outputs."""
    parse(nb, path)  # validates everything first
    out = copy.deepcopy(nb)
    cells = []
    for index, cell in enumerate(out["cells"]):
        where = f"{path}: cell {index}"
        header = test_header(cell)
        if header and header[2]:
            continue
        text = _source(cell)
        if cell["cell_type"] == "code":
            text = _replace_regions(
                text, BEGIN_SOLUTION, END_SOLUTION, CODE_STUB, where
            )
            cell["outputs"] = []
            cell["execution_count"] = None
        elif cell["cell_type"] == "markdown":
            text = _replace_regions(text, BEGIN_MD, END_MD, (TEXT_STUB,), where)
        cell["source"] = text
        cells.append(cell)
    out["cells"] = cells
    return out
