"""``expect_error``: the sharp bit's error in a line, a failure when it does not happen."""

import re
import subprocess
import sys

import pytest

from course_utils.expect import ExpectedErrorMissing, expect_error, one_line


def test_the_expected_error_is_caught_and_printed_in_one_line(capsys):
    with expect_error(ZeroDivisionError) as caught:
        1 / 0  # noqa: B018
    assert capsys.readouterr().out == "ZeroDivisionError: division by zero\n"
    assert isinstance(caught.value, ZeroDivisionError)


def test_a_multi_line_message_prints_its_first_line_only(capsys):
    with expect_error(ValueError):
        raise ValueError("the shapes differ\n\n  (3,) vs (4,)\n  see the docs")
    assert capsys.readouterr().out == "ValueError: the shapes differ\n"


def test_lines_prints_more_of_the_message_skipping_blank_lines(capsys):
    with expect_error(ValueError, lines=2):
        raise ValueError("the shapes differ\n\n  (3,) vs (4,)\n  see the docs")
    assert capsys.readouterr().out == "ValueError: the shapes differ\n  (3,) vs (4,)\n"


def test_an_empty_message_prints_the_type_alone(capsys):
    with expect_error(KeyboardInterrupt):
        raise KeyboardInterrupt
    assert capsys.readouterr().out == "KeyboardInterrupt\n"


def test_nothing_raised_fails_the_cell_and_says_why():
    with pytest.raises(ExpectedErrorMissing) as info:
        with expect_error(TypeError, ValueError):
            pass
    message = str(info.value)
    assert message.startswith("expected TypeError or ValueError, nothing was raised")
    assert "the sharp bit may have been fixed in this version of" in message
    assert isinstance(
        info.value, AssertionError
    )  # a failed check, as pytest reports one


def test_nothing_raised_names_the_framework_of_the_expected_type(monkeypatch):
    fake = type("FakeJaxError", (Exception,), {"__module__": "jax.errors"})
    monkeypatch.setattr("course_utils.expect.version", lambda dist: "9.9")
    with pytest.raises(ExpectedErrorMissing, match=r"this version of jax 9\.9;"):
        with expect_error(fake):
            pass


def test_a_subclass_of_the_expected_type_is_caught(capsys):
    with expect_error(ArithmeticError) as caught:
        1 / 0  # noqa: B018
    assert type(caught.value) is ZeroDivisionError
    assert capsys.readouterr().out.startswith("ZeroDivisionError: ")


def test_an_error_of_another_type_passes_through_unchanged(capsys):
    original = KeyError("not the sharp bit")
    with pytest.raises(KeyError) as info:
        with expect_error(TypeError):
            raise original
    assert info.value is original
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert capsys.readouterr().out == ""


def test_match_is_searched_in_the_message(capsys):
    with expect_error(TypeError, match=r"does not support item assignment"):
        raise TypeError("'Array' object does not support item assignment. Use .at[]")
    assert capsys.readouterr().out.startswith("TypeError: 'Array' object")
    with expect_error(TypeError, match=re.compile("second line")):
        raise TypeError("first line\nsecond line")


def test_a_message_that_does_not_match_fails_the_cell(capsys):
    with pytest.raises(ExpectedErrorMissing) as info:
        with expect_error(TypeError, match="immutable"):
            raise TypeError("something else entirely\nmore detail")
    message = str(info.value)
    assert "expected TypeError matching 'immutable'" in message
    assert "got TypeError: something else entirely:" in message
    assert "more detail" not in message
    assert isinstance(info.value.__cause__, TypeError)
    assert capsys.readouterr().out == ""


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="at least one"):
        expect_error()
    with pytest.raises(TypeError, match="exception types"):
        expect_error("TypeError")
    with pytest.raises(ValueError, match="lines"):
        expect_error(TypeError, lines=0)


def test_one_line_of_an_error():
    assert one_line(ValueError("a\nb\nc")) == "ValueError: a"
    assert one_line(ValueError("\n  a\n\nb"), lines=3) == "ValueError: a\nb"
    assert one_line(RuntimeError()) == "RuntimeError"
    guard = (
        "Recompiling\n  - 1/0: lr == 0.05    # return w - lr * grad  # mp/x.py:4 in f"
    )
    assert (
        one_line(RuntimeError(guard), lines=2)
        == "RuntimeError: Recompiling\n  - 1/0: lr == 0.05"
    )
    assert one_line(ValueError("see issue #12")) == "ValueError: see issue #12"


def test_importing_it_imports_no_framework():
    code = (
        "import sys, course_utils.expect\n"
        "print([m for m in ('jax', 'torch', 'flax') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
