"""course_utils.tooling.errors: every ``course`` command reports a CourseError as one line, exit 2."""

from __future__ import annotations

import argparse

import pytest

from course_utils import cli
from course_utils.tooling.errors import CourseError


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return dict(sub.choices)


def leaf(parser: argparse.ArgumentParser) -> tuple[argparse.ArgumentParser, list[str]]:
    """The parser that runs, following required verbs (their first), and a command line
    with a placeholder for everything it cannot do without."""
    args: list[str] = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction) and a.required:
            verb = next(iter(a.choices))
            inner, rest = leaf(a.choices[verb])
            return inner, [*args, verb, *rest]
        if a.required and a.option_strings:
            args += [a.option_strings[0], "x"]
        elif a.required and not a.option_strings and a.nargs not in ("*", "?"):
            args.append("x")
    return parser, args


def test_course_error_is_an_exception_carrying_its_message():
    err = CourseError("no lessons found; run `course sync`")
    assert (
        isinstance(err, Exception) and str(err) == "no lessons found; run `course sync`"
    )


def test_the_command_has_the_verbs_this_test_goes_through():
    assert {"doctor", "run", "sync", "check-device"} <= set(commands())


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_reports_a_course_error_as_one_line_and_exit_2(
    name, monkeypatch, capsys
):
    def fail(args):
        raise CourseError(f"{name} cannot go on; do this instead")

    real = cli.build_parser

    def parser_whose_command_fails() -> argparse.ArgumentParser:
        parser = real()
        sub = next(a for a in parser._actions if a.dest == "command")
        leaf(sub.choices[name])[0].set_defaults(func=fail)
        return parser

    monkeypatch.setattr(cli, "build_parser", parser_whose_command_fails)
    assert cli.main([name, *leaf(commands()[name])[1]]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"course: error: {name} cannot go on; do this instead"
    ]
    assert "Traceback" not in captured.err + captured.out


def test_an_argument_error_is_a_course_error_too(capsys):
    assert cli.main(["run", "--timeout", "soon"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("course: error: ") and "expected a number of seconds" in line
