"""course_utils.tooling.args: argument types that name the bad value."""

import argparse

import pytest

from course_utils.tooling import args


def test_number_reads_the_kind_and_checks_the_minimum():
    assert args.number(int, 1)("3") == 3
    assert args.number(float, 0.1)("0.5") == 0.5
    with pytest.raises(argparse.ArgumentTypeError, match="at least 1, got '0'"):
        args.number(int, 1)("0")
    with pytest.raises(
        argparse.ArgumentTypeError, match="expected a number, got '2.5'"
    ):
        args.number(int, 1)("2.5")


def test_positive_seconds():
    assert args.positive_seconds("1.5") == 1.5
    for bad, message in (("0", "must be positive"), ("-2", "must be positive")):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            args.positive_seconds(bad)
    with pytest.raises(
        argparse.ArgumentTypeError, match="number of seconds, got 'soon'"
    ):
        args.positive_seconds("soon")


def test_a_bad_value_is_one_line_from_the_course_command(capsys):
    from course_utils import cli

    assert cli.main(["run", "--timeout", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("course: error:") and "must be positive" in err
    assert len(err.splitlines()) == 1
