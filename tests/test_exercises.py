"""course_utils.exercises: ``check``, the self-test after every stub."""

import pytest

from course_utils import exercises
from course_utils.exercises import check


def test_check_passes_and_reports(capsys):
    assert (
        check("double", lambda: 4, 4) is None
    )  # nothing for a notebook to echo as Out
    assert "✓ double: passed" in capsys.readouterr().out


def test_check_turns_stub_into_not_implemented(capsys, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)

    def stub():
        raise NotImplementedError()

    assert check("double", stub, 4) is None
    assert "double: not implemented yet" in capsys.readouterr().out


def test_check_raises_for_stub_under_the_grader(monkeypatch):
    monkeypatch.setenv("COURSE_GRADING", "1")
    with pytest.raises(NotImplementedError):
        check("double", lambda: (_ for _ in ()).throw(NotImplementedError()), 4)


def test_check_wrong_answer_shows_expected_got_and_hint():
    with pytest.raises(exercises.CheckFailed) as err:
        check("double", lambda: 5.0, 4.0, hint="multiply by two")
    msg = str(err.value)
    assert "expected" in msg and "but got" in msg and "Hint: multiply by two" in msg


def test_check_with_own_assertions():
    def test():
        assert 1 + 1 == 3, "arithmetic is off"

    with pytest.raises(exercises.CheckFailed, match="arithmetic is off"):
        check("sum", test)


class _AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _TrueFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


@pytest.mark.parametrize("liar", [_AlwaysEqual(), _TrueFloat(0.0), [_AlwaysEqual()]])
def test_check_rejects_an_answer_that_lies_about_equality(liar):
    expected = [79] if isinstance(liar, list) else 79
    with pytest.raises(exercises.CheckFailed, match="lie about equality"):
        check("break-even", lambda: liar, expected)


def test_the_grading_switch_is_fixed_when_the_module_is_imported():
    import subprocess
    import sys

    code = (
        "import os; os.environ['COURSE_GRADING'] = '1'\n"
        "from course_utils import exercises\n"
        "os.environ.pop('COURSE_GRADING')\n"
        "print(exercises.grading())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_an_answer_that_crashes_gets_the_hint_too():
    def wrong_shape():
        raise ValueError("operands could not be broadcast together")

    with pytest.raises(exercises.CheckFailed) as err:
        check("shape", wrong_shape, 4, hint="transpose W first")
    text = str(err.value)
    assert "your code raised ValueError: operands could not be broadcast" in text
    assert text.endswith("Hint: transpose W first")


def test_none_reads_as_none():
    with pytest.raises(exercises.CheckFailed, match="but got None"):
        check("returns", lambda: None, 4)
