"""Submissions: finding them in a folder, and matching a student's cells to the master.

:func:`discover` finds one submission per ``.ipynb`` file or sub-folder of the
submissions folder. :func:`match` builds the notebook to run for one student
from the master: its own setup and test cells, with each exercise slot filled
by the student's cells for that exercise, found by id (nbgrader's
``grade_id`` metadata, else the ``# EXERCISE: <id>`` marker text), so cells
the student added, moved or reordered do not matter and the tests are always
the master's own.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from course_utils import student_version
from course_utils.errors import CourseError
from course_utils.grading.inputs.assignment import check_assignment
from course_utils.grading.inputs.ipynb import nbgrader_meta
from course_utils.grading.inputs.master import Cell, Master
from course_utils.grading.inputs.names import folder_name, shown
from course_utils.tooling.notebooks import REPOSITORY
from course_utils.variants import NAME as VARIANT


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
    meta = nbgrader_meta(cell)
    gid = meta.get("grade_id")
    if meta.get("solution") and isinstance(gid, str) and gid in known:
        return gid, None
    marker = student_version.exercise_id(cell)
    if marker in known:
        return marker, None
    claimed = marker or (gid if meta.get("solution") and isinstance(gid, str) else None)
    if claimed:
        return (
            None,
            f"a cell names exercise {claimed!r}, which this assignment does not have; it was not graded",
        )
    return None, None


# A student's copy names their variant in the parameters cell where the master has
# ``VARIANT = None`` (``course release --variants``), and its setup cell installs from
# the instructor's repository (``--repo``): neither is an edit of theirs.
_VARIANT_LINE = re.compile(rf"^{VARIANT}[ \t]*=.*$", re.MULTILINE)
# The setup cell's install address, ``git+https://github.com/OWNER/NAME@TAG``, as
# ``course release --repo`` (``integrations.release.point_at``) may have rewritten it.
_INSTALL = re.compile(
    r"(?<=git\+https://github\.com/)[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+"
    r"@[A-Za-z0-9][\w./-]*"
)


def _as_given(text: str) -> str:
    """A cell's text, stripped, with its ``VARIANT = …`` line as the master has it and
    its install address as upstream's (the master's, each at no tag)."""
    text = _VARIANT_LINE.sub(f"{VARIANT} = None", text.strip())
    return _INSTALL.sub(REPOSITORY, text)


def _by_exercise(
    master: Master, student_cells: list[dict], notes: list[str]
) -> tuple[dict[str, list[dict]], int]:
    """The student's cells for each exercise, and how many other code cells they added."""
    known = set(master.exercises) | set(master.answers)
    master_sources = {_as_given(c.source) for c in master.cells}
    found: dict[str, list[dict]] = {}
    ignored = 0
    for cell in student_cells:
        ex, note = _student_exercise(cell, known)
        if note:
            notes.append(note)
        if ex is None:
            text = _as_given(cell["source"])
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
    return found, ignored


def match(master: Master, student_cells: list[dict]) -> Matched:
    """Put each student solution cell in its exercise's slot of the master."""
    check_assignment(master, student_cells)  # another assignment's notebook: raises
    notes: list[str] = []
    found, ignored = _by_exercise(master, student_cells, notes)
    result = Matched(cells=[], notes=notes)
    for cell in master.cells:
        if cell.role not in ("solution", "answer"):
            result.cells.append(cell)
            continue
        ex = cell.exercise or ""
        mine = found.get(ex, [])
        if not mine:
            result.missing.append(ex)
            continue
        if len(mine) > 1:
            result.duplicated[ex] = len(mine)
        result.student_code[ex] = [c["source"] for c in mine]
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
    problem: str | None = None  # why it cannot be graded: the student is ``invalid``
    error: str | None = None  # for the instructor: shown in the summary and the tables
    entry: str = ""  # its name in the submissions folder, as shown


MAX_FILES = 10_000  # entries walked in one student's folder
_SPECIAL = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}
_PLAIN = "submissions must be plain files and folders"


def _walk(entry: Path) -> tuple[list[Path], list[str], bool]:
    """(notebooks, links and special files, too many): never follows a link, skips hidden names."""
    nbs: list[Path] = []
    odd: list[str] = []
    todo, seen = [entry], 0
    while todo:
        folder = todo.pop()
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: e.name)
        for item in items:
            seen += 1
            if seen > MAX_FILES:
                return nbs, odd, True
            if item.name.startswith("."):
                continue
            mode = item.stat(follow_symlinks=False).st_mode
            path = Path(item.path)
            if stat.S_ISDIR(mode):
                todo.append(path)
            elif not stat.S_ISREG(mode):
                kind = _SPECIAL.get(stat.S_IFMT(mode), "a special file")
                odd.append(f"{shown(str(path.relative_to(entry)))} is {kind}")
            elif item.name.endswith(".ipynb"):
                nbs.append(path)
    return sorted(nbs), odd, False


def _from_folder(entry: Path, master_name: str) -> Submission:
    """A student's folder: its one notebook, or the one named like the master."""
    sub = Submission(shown(entry.name), None)
    try:
        nbs, odd, too_many = _walk(entry)
    except OSError as err:
        sub.problem = f"the student's folder cannot be read: {err.strerror or err}"
        return sub
    named = [p for p in nbs if p.name == master_name]
    if too_many:
        sub.problem = f"the student's folder holds more than {MAX_FILES} files"
    elif odd:
        sub.problem = f"{'; '.join(odd[:3])}: {_PLAIN}"
    elif len(nbs) == 1:
        sub.path = nbs[0]
    elif len(named) == 1:
        sub.path = named[0]
    elif not nbs:
        sub.problem = "the student's folder holds no .ipynb notebook"
    else:
        found = ", ".join(shown(str(p.relative_to(entry))) for p in nbs[:5])
        sub.problem = (
            f"the student's folder holds {len(nbs)} notebooks ({found}) and "
            f"{'several are' if named else 'none is'} named {master_name}"
        )
    return sub


def _entry(entry: os.DirEntry, master_name: str) -> Submission | None:
    """The submission an entry of the submissions folder holds; None when it holds none."""
    path = Path(entry.path)
    mode = entry.stat(follow_symlinks=False).st_mode
    if stat.S_ISDIR(mode):
        return _from_folder(path, master_name)
    is_nb = entry.name.endswith(".ipynb")
    student = shown(entry.name[: -len(".ipynb")] if is_nb else entry.name)
    if stat.S_ISREG(mode):
        return Submission(student, path) if is_nb else None
    if stat.S_ISLNK(mode) and (is_nb or path.is_dir()):
        return Submission(
            student, None, f"{shown(entry.name)} is a symbolic link: {_PLAIN}"
        )
    if is_nb:
        kind = _SPECIAL.get(stat.S_IFMT(mode), "a special file")
        return Submission(student, None, f"{shown(entry.name)} is {kind}: {_PLAIN}")
    return None


# The names an LMS gives a bulk download of an assignment's submissions: Canvas's files
# login_[LATE_]userid_submissionid_filename, Moodle's folders (or files) "Full
# Name_userid_assignsubmission_file_[filename]". The student id is the login or the name.
LMS_NAMES = {
    "canvas": re.compile(r"^(?P<who>[^_]+?)_(?:late_)?\d+_\d+_.+$", re.IGNORECASE),
    "moodle": re.compile(
        r"^(?P<who>.+?)_\d+_assign(?:submission|feedback)_\w*?_(?P<rest>.*)$"
    ),
}
LMS_SHOWN = {"canvas": "Canvas", "moodle": "Moodle"}


def lms_student(name: str, lms: str) -> str | None:
    """The student id in an LMS download's entry name (a file's without ``.ipynb``);
    None when the name has another shape."""
    m = LMS_NAMES[lms].match(name)
    return m["who"].strip() if m and m["who"].strip() else None


def lms_lookalike(
    subs: list[Submission], each: str = "is graded as a student of that whole name"
) -> str | None:
    """A warning when submissions read without ``--lms`` are named as an LMS's bulk
    download names them: each would be graded under its whole name (a student of its
    own, on the variant and the file time of that name), not the student's login;
    ``each`` says what a command other than ``course grade`` does with such a name."""
    for lms, shown_as in LMS_SHOWN.items():
        hits = [
            s.entry
            for s in subs
            if s.entry and lms_student(s.entry.rstrip("/").removesuffix(".ipynb"), lms)
        ]
        if hits:
            more = f" and {len(hits) - 1} more" if len(hits) > 1 else ""
            return (
                f"warning: {len(hits)} of {len(subs)} submission(s) are named as "
                f"{shown_as}'s download names them ({hits[0]}{more}): without --lms "
                f"{lms} each {each}; give --lms "
                f"{lms} if they are {shown_as}'s"
            )
    return None


def _entry_name(entry: os.DirEntry) -> str:
    return shown(entry.name) + ("/" if entry.is_dir(follow_symlinks=False) else "")


def discover(
    folder: str | Path, master_name: str, lms: str | None = None
) -> tuple[list[Submission], list[str]]:
    """One submission per ``.ipynb`` file or sub-folder; notes for what was ignored.

    Nothing is followed through a symbolic link or opened here: a link or a
    special file (FIFO, device, socket) where a notebook or a student's folder
    should be is an ``invalid`` submission with its reason. Names are shown
    with undecodable bytes and control characters escaped (:func:`.names.shown`).
    Entries that give one student id (``ada.ipynb`` and ``ada/``, or two names
    shown alike) are never silently reduced to one: the student is ``invalid``,
    with an ``error`` naming every entry, until the instructor keeps one.
    """
    folder = Path(folder)
    if lms is not None and lms not in LMS_NAMES:
        raise CourseError(f"--lms {lms}: one of {', '.join(LMS_NAMES)}")
    if not folder.is_dir():
        raise CourseError(f"SUBMISSIONS {folder}: not a folder")
    claims: dict[str, list[Submission]] = {}
    notes: list[str] = []
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        sub = _entry(entry, master_name)
        if sub is None:
            notes.append(f"ignored {shown(entry.name)}: not a notebook or a folder")
            continue
        sub.entry = _entry_name(entry)
        if lms is not None:
            stem = entry.name.removesuffix(".ipynb")
            who = lms_student(stem, lms)
            if who is None:
                notes.append(
                    f"{shown(entry.name)}: not a {LMS_SHOWN[lms]} download name; "
                    f"graded as {sub.student!r}"
                )
            else:
                sub.student = shown(who)
        claims.setdefault(sub.student, []).append(sub)
    subs = [_one(student, found) for student, found in claims.items()]
    by_folder: dict[str, list[Submission]] = {}
    for sub in subs:
        by_folder.setdefault(folder_name(sub.student), []).append(sub)
    # two ids, one folder: a hash collision, never silent
    for same in by_folder.values():
        if len(same) > 1:
            ids = ", ".join(repr(s.student) for s in same)
            for sub in same:
                sub.path = None
                sub.problem = sub.error = (
                    f"the ids {ids} share the report folder {folder_name(sub.student)!r}; "
                    "rename one submission and grade again"
                )
    return subs, notes


def _one(student: str, found: list[Submission]) -> Submission:
    """The submission of one id; several entries with that id make it ``invalid``."""
    if len(found) == 1:
        return found[0]
    names = ", ".join(s.entry for s in found)
    why = (
        f"{len(found)} submissions have the student id {student!r} ({names}): "
        "none was graded; keep one and grade again"
    )
    return Submission(student, None, why, why, names)
