"""``check``: the self-test after every exercise stub, shown to the student as expected vs yours.

An untouched stub reads "not implemented yet" rather than a crash, except inside
the instructor's grader (``COURSE_GRADING=1``), where it must fail. The marker
grammar that turns masters into student notebooks is in
:mod:`course_utils.tooling.markers`.
"""

from __future__ import annotations

import os
from typing import Any

GRADING_ENV = "COURSE_GRADING"


class CheckFailed(AssertionError):
    """A visible self-check found a wrong answer."""


_MISSING = object()


# Read when the module is first imported: the grader's kernel imports it before any
# student code runs, so a submission that clears the variable cannot turn stubs into passes.
_GRADING_AT_IMPORT = os.environ.get(GRADING_ENV, "") == "1"


def grading() -> bool:
    """True inside the instructor's grader, where stubs must fail instead of passing."""
    return _GRADING_AT_IMPORT or os.environ.get(GRADING_ENV, "") == "1"


def _summary(x: Any) -> str:
    if x is None:
        return "None"
    from course_utils.parity import to_numpy

    try:
        arr = to_numpy(x)
    except Exception:
        return repr(x)
    text = repr(arr)
    return text if len(text) <= 300 else text[:300] + " ..."


def check(
    exercise: str,
    fn,
    expected: Any = _MISSING,
    *,
    hint: str = "",
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """Run one self-check and say plainly how it went (it returns nothing, so a
    notebook's check cell shows only the printed line).

    ``fn()`` either makes its own assertions, or returns a value compared with
    ``expected`` (via :func:`course_utils.parity.assert_close`). An untouched
    stub (``NotImplementedError``) prints "not implemented yet", so Run All
    finishes; under the grader it raises instead, so a stub never scores. A
    wrong answer raises :class:`CheckFailed` with expected vs got and the hint;
    so does any other error the answer raises (a wrong shape's ``ValueError``),
    named by its type, with the hint.
    """
    try:
        got = fn()
        if expected is not _MISSING:
            from course_utils.parity import assert_close

            try:
                assert_close(got, expected, rtol=rtol, atol=atol, name=exercise)
            except AssertionError as err:
                raise CheckFailed(
                    f"{exercise}: expected {_summary(expected)}\n"
                    f"{' ' * len(exercise)}  but got {_summary(got)}\n{err}"
                    + (f"\nHint: {hint}" if hint else "")
                ) from None
    except NotImplementedError:
        if grading():
            raise
        print(f"… {exercise}: not implemented yet")
        return None
    except CheckFailed:
        raise
    except AssertionError as err:
        raise CheckFailed(
            f"{exercise}: {err}" + (f"\nHint: {hint}" if hint else "")
        ) from None
    except Exception as err:  # the answer crashed: say how, and still give the hint
        raise CheckFailed(
            f"{exercise}: your code raised {type(err).__name__}: {err}"
            + (f"\nHint: {hint}" if hint else "")
        ) from err
    print(f"✓ {exercise}: passed")
    return None
