"""The limits' arguments: one set of defaults for ``grade``, ``check`` and the
Gradescope bundle, shown in ``--help``."""

from __future__ import annotations

import pytest

from course_utils.grading.batch import grader


def test_one_set_of_default_limits_shown_in_every_help(capsys):
    from course_utils.cli import build_parser

    parser = build_parser()
    want = grader.Limits()
    for argv in (["grade", "s"], ["check", "n"], ["gradescope", "build", "--source",
                 "m", "--out", "a.zip"]):  # fmt: skip
        args = parser.parse_args(argv)
        assert (args.timeout, args.total_timeout) == (
            want.timeout,
            want.total_timeout,
        ), argv
    assert parser.parse_args(["check", "n"]).memory == want.memory_mb
    for argv in (["grade", "--help"], ["check", "--help"]):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        text = " ".join(capsys.readouterr().out.split())
        assert f"(default {want.timeout:g})" in text, argv
        assert f"(default {want.total_timeout:g})" in text, argv
        assert f"(default {want.memory_mb:g})" in text, argv
