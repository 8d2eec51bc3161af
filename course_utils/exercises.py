"""``check``: the self-test after every exercise stub, shown to the student as expected vs yours.

An untouched stub reads "not implemented yet" rather than a crash, except inside
the instructor's grader (``COURSE_GRADING=1``), where it must fail. The marker
grammar that turns masters into student notebooks is in
:mod:`course_utils.student_version`. The exercises themselves, their tests and their
points (``# TESTS: <id> points=<n>``) are the masters, ``solutions/NN_*_exercises.py``;
``docs/POINTS.md`` adds the points up per assignment.
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

GRADING_ENV = "COURSE_GRADING"


class CheckFailed(AssertionError):
    """A visible self-check found a wrong answer.

    In a notebook it shows as its message alone, a few lines: the course's own
    frames say nothing about the student's answer (IPython asks an exception for
    ``_render_traceback_`` before it formats the usual traceback).
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class NotChecked(Exception):  # noqa: N818 - an outcome, like NotImplementedError
    """A check that cannot run on this machine, such as one that launches processes
    where TCP is refused: the answer is neither passed nor failed.

    ``check`` prints one line with the reason and returns, in the grader too, so the
    student loses no point for what the machine could not do. The test cell's output
    keeps the line, so the feedback says what was not checked.
    """


_MISSING = object()

# The cell whose untouched stubs were last reported, and the exercises it reported:
# a test cell that checks one stub fifteen times says so once.
_stub_cell: Any = None
_stub_reported: set[str] = set()


def _first_stub_report(exercise: str, frame: Any) -> bool:
    """True the first time one run of a test cell finds ``exercise`` untouched.

    In a notebook the run is IPython's execution count (each statement of a cell runs
    in a frame of its own; a rerun has a new count). Elsewhere it is the calling
    ``frame``, new at every call of the function that checks; holding it keeps its
    identity from being reused by a later one.
    """
    from course_utils import cell_notes

    global _stub_cell, _stub_reported
    count = cell_notes.cell()
    run = frame if count is None else ("cell", count)
    if run is not _stub_cell and run != _stub_cell:
        _stub_cell, _stub_reported = run, set()
    if exercise in _stub_reported:
        return False
    _stub_reported.add(exercise)
    return True


# Read when the module is first imported: the grader's kernel imports it before any
# student code runs, so a submission that clears the variable cannot turn stubs into passes.
_GRADING_AT_IMPORT = os.environ.get(GRADING_ENV, "") == "1"


def grading() -> bool:
    """True inside the instructor's grader, where stubs must fail instead of passing."""
    return _GRADING_AT_IMPORT or os.environ.get(GRADING_ENV, "") == "1"


def _summary(x: Any) -> str:
    """One line: a number as itself, an array as dtype[shape] and its first values."""
    if x is None:
        return "None"
    import numpy as np

    from course_utils.parity import to_numpy

    try:
        arr = to_numpy(x)
    except Exception:
        return _clip_line(repr(x))
    if isinstance(arr, np.ndarray) and arr.ndim > 0:
        shown = np.array2string(
            arr.reshape(-1)[:6], precision=4, separator=", ", max_line_width=10**6
        )
        more = " ..." if arr.size > 6 else ""
        return f"{arr.dtype}{list(arr.shape)} {shown[:-1]}{more}]"
    return _clip_line(repr(arr))


def _cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last space when one is near."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space].rstrip() if space > limit * 2 // 3 else cut


def _clip_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else _cut(text, limit - 4) + " ..."


# Where Python, the installed packages and the course live: no frame there is the student's.
_LIBRARY_DIRS = tuple(
    str(Path(p).resolve()) + os.sep
    for p in {
        *(
            sysconfig.get_paths()[k]
            for k in ("stdlib", "platstdlib", "purelib", "platlib")
        ),
        os.path.dirname(os.__file__),
        os.path.dirname(__file__),
    }
    if len(Path(p).resolve().parts) > 2
)


def _is_library(filename: str) -> bool:
    """A frame of Python, an installed package or the course itself: not the student's."""
    if filename.startswith("<frozen") or filename.startswith("<string"):
        return True
    if filename.startswith("<"):  # a cell run with exec
        return False
    try:
        path = str(Path(filename).resolve())
    except OSError:
        return False
    return path.startswith(_LIBRARY_DIRS) or "site-packages" in path


def _marked(filename: str, marker: str) -> bool:
    """Whether the cell (or file) ``filename`` starts with ``marker`` (``# EXERCISE:``)."""
    return linecache.getline(filename, 1).lstrip().startswith(marker)


def _student_frame(err: BaseException, test_file: str) -> traceback.FrameSummary | None:
    """The deepest frame of the student's own code in ``err``, or None.

    In a course notebook (the test cell starts with ``# TESTS:``) that is a frame of
    an exercise cell (``# EXERCISE:``), so a helper the notebook defined elsewhere
    (a context cell) is not blamed; elsewhere, any frame outside the test's file,
    the course and the installed packages.
    """
    frames = [
        f
        for f in traceback.extract_tb(err.__traceback__)
        if f.filename not in (test_file, __file__) and not _is_library(f.filename)
    ]
    if _marked(test_file, "# TESTS:") or _marked(test_file, "# HIDDEN TESTS:"):
        frames = [f for f in frames if _marked(f.filename, "# EXERCISE:")]
    return frames[-1] if frames else None


def _error_text(err: BaseException) -> str:
    """The error as its type and first lines (JAX's long explanations cut)."""
    lines = [ln for ln in str(err).strip().splitlines() if ln.strip()]
    text = "\n  ".join(_clip_line(ln, 300) for ln in lines[:3])
    if len(lines) > 3:
        text += " ..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


HINT_MARK = "\nHint: "


def clip(message: str, limit: int = 2000) -> str:
    """``message`` in at most ``limit`` characters, keeping its first lines and its hint.

    A failed check's message ends with its hint (``Hint: ...``): cutting the end
    off would lose the one line that says what to do.
    """
    if len(message) <= limit:
        return message
    at = message.rfind(HINT_MARK)
    hint = message[at:] if at >= 0 else ""
    if len(hint) > limit // 2:
        hint = _cut(hint, limit // 2 - 4) + " ..."
    cut = " [...]"
    return _cut(message, max(0, limit - len(hint) - len(cut))) + cut + hint


def check(
    exercise: str,
    fn,
    expected: Any = _MISSING,
    *,
    hint: str = "",
    crash_hint: str | Callable[[BaseException], str] = "",
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """Run one self-check and say plainly how it went (it returns nothing, so a
    notebook's check cell shows only the printed line).

    ``fn()`` either makes its own assertions, or returns a value compared with
    ``expected`` (via :func:`course_utils.parity.assert_close`). An untouched
    stub (``NotImplementedError``) prints "not implemented yet", once per run of
    a test cell however many checks meet it, so Run All finishes; under the
    grader it raises instead, so a stub never scores. A
    check that cannot run here raises :class:`NotChecked`: one line says so, and
    the check neither passes nor fails (raised from the answer's own code, it is a
    crash like any other). A wrong answer raises :class:`CheckFailed` with expected vs got and ``hint``.
    An error raised in the student's own code is told apart: the message names
    the error, the function and line it came from, and ``crash_hint`` (what
    such an error usually means here), not the hint meant for a wrong value.
    An error raised after the student's code returned (the framework or the
    check could not use the answer: a wrong structure, shape or dtype) is told
    as such, with ``crash_hint`` when there is one, else ``hint``. ``crash_hint`` may
    be a function of the error that returns the hint for it, so that each kind of
    crash names its own likely cause first ('' for none). A name the
    check cannot find (the student's function, when its cell failed to compile
    or never ran) is told as that cell not having run, with no hint.
    """
    caller = sys._getframe(1)
    test_file = caller.f_code.co_filename
    try:
        got = fn()
        if expected is not _MISSING:
            from course_utils.parity import assert_close

            try:
                assert_close(
                    got,
                    expected,
                    rtol=rtol,
                    atol=atol,
                    name=exercise,
                    sides=("your answer", "the expected"),
                )
            except AssertionError as err:
                raise _wrong_value(exercise, expected, got, err, hint) from None
    except NotImplementedError:
        if grading():
            raise
        if _first_stub_report(exercise, caller):
            print(f"… {exercise}: not implemented yet")
        return None
    except CheckFailed as err:
        err.__traceback__ = None
        raise
    except NotChecked as why:
        if _student_frame(why, test_file) is not None:  # raised by the answer: no pass
            raise _crash(exercise, why, test_file, hint, crash_hint) from None
        print(f"– {exercise}: not checked here: {why}")
        return None
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    # BaseException: some libraries' errors derive from it rather than from Exception
    # (torch.distributed.checkpoint's CheckpointException, raised by a failed dcp.load)
    except BaseException as err:  # noqa: BLE001 - told apart below
        raise _crash(exercise, err, test_file, hint, crash_hint) from None
    print(f"✓ {exercise}: passed")
    return None


def _wrong_value(
    exercise: str, expected: Any, got: Any, err: AssertionError, hint: str
) -> CheckFailed:
    """Expected vs got, with which leaves differ (from ``assert_close``) and the hint."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].endswith("not close:"):
        lines = lines[1:]  # which leaves differ, and by how much, follows
    if len(lines) == 1 and f"{exercise}: " in lines[0] and " != " in lines[0]:
        lines = []  # one number against another: expected and got say it all
    # the exercise is named once, on the first line
    lines = [ln.removeprefix(f"{exercise}: ") for ln in lines]
    detail = "".join(f"\n  {ln}" for ln in lines[:3])
    return CheckFailed(
        f"{exercise}: wrong value\n"
        f"  expected {_summary(expected)}\n"
        f"  but got  {_summary(got)}{detail}" + _hint(hint)
    )


def _crash(
    exercise: str,
    err: BaseException,
    test_file: str,
    hint: str,
    crash_hint: str | Callable[[BaseException], str],
) -> CheckFailed:
    """An error on the way: the course's guard, the student's code, or checking the answer."""
    if callable(crash_hint):
        crash_hint = crash_hint(err) or ""
    frame = _student_frame(err, test_file)
    raised_at = traceback.extract_tb(err.__traceback__)[-1:]
    if isinstance(err, NameError) and frame is None and err.name:
        return _undefined(exercise, err.name)
    if isinstance(err, AssertionError) and frame not in raised_at:
        # an assertion of the course's, met on the way (a guard the check put in place)
        return CheckFailed(f"{exercise}: {err}" + _hint(hint))
    if frame is not None:  # the student's code raised: say where
        where = f"at line {frame.lineno} of {frame.name}"
        line = f"\n    {frame.line}" if frame.line else ""
        return CheckFailed(
            f"{exercise}: your function raised {type(err).__name__} {where}:"
            f"{line}\n  {_error_text(err)}" + _hint(crash_hint)
        )
    # raised after the student's code returned: an answer of the wrong kind (a
    # structure, a shape, a dtype) that the framework or the check could not use
    return CheckFailed(
        f"{exercise}: checking your answer raised {_error_text(err)}"
        + _hint(crash_hint or hint)
    )


def _undefined(exercise: str, name: str) -> CheckFailed:
    """The check met a name no cell defined: a cell above did not run, not a wrong answer.

    The usual cause is the exercise cell itself: an ``IndentationError`` or a
    ``SyntaxError`` stops a cell before any of it runs, so its function is never
    defined, and a hint about the answer's value would only mislead.
    """
    return CheckFailed(
        f"{exercise}: `{name}` is not defined: the cell above that defines it has not "
        "run, or stopped with an error (an IndentationError or a SyntaxError stops the "
        f"whole cell before `{name}` exists). Run that cell, fix the error it shows, "
        "then run this check again."
    )


def _hint(hint: str) -> str:
    return f"{HINT_MARK}{hint}" if hint else ""
