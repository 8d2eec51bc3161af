"""The class-level verbs of ``course grade``: which command lines they take, usage errors."""

from __future__ import annotations

import argparse

import pytest

from course_utils.cli import main as course_main
from course_utils.grading.commands import verbs


def _args(submissions: str, *more: str, only=None, student=None) -> argparse.Namespace:
    return argparse.Namespace(
        submissions=submissions, more=list(more), only=only, student=student
    )


def test_verbs_and_regrades_are_handed_over_and_grading_is_not():
    assert verbs.handles(_args("report", "d")) and verbs.handles(_args("export", "d"))
    assert verbs.handles(_args("subs", only="square"))
    assert verbs.handles(_args("subs", student="ada"))
    assert not verbs.handles(_args("subs")) and not verbs.handles(_args("./report"))


@pytest.mark.parametrize(
    "words, message",
    [
        (["grade", "report"], "expected DIR"),
        (["grade", "export", "a", "b"], "expected DIR"),
        (["grade", "manual", "DIR"], "expected DIR FILE"),
        (["grade", "report", "DIR"], "not a graded report folder"),
    ],
)
def test_usage_errors_are_one_line(words, message, tmp_path, capsys):
    argv = [str(tmp_path) if w == "DIR" else w for w in words]
    assert course_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
