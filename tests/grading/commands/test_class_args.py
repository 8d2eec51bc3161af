"""The arguments `course grade similarity` and `course grade answers` share."""

from __future__ import annotations

import argparse

import pytest

from course_utils.errors import CourseError
from course_utils.grading.commands import class_args


def _args(**kw):
    base = {"more": [], "master": None, "source": None, "out": None}
    return argparse.Namespace(**{**base, **kw})


def test_one_folder_and_a_master_are_required():
    with pytest.raises(
        CourseError, match="grade x: expected one SUBMISSIONS folder, got 2"
    ):
        class_args.submissions_and_master(_args(more=["a", "b"]), "x", "NB")
    with pytest.raises(CourseError, match="grade x: --master is required: .*e.g. NB"):
        class_args.submissions_and_master(_args(more=["a"]), "x", "NB")


def test_a_missing_master_is_named_by_the_option_given(tmp_path):
    nope = str(tmp_path / "nope.ipynb")
    with pytest.raises(CourseError, match="no such notebook") as err:
        class_args.submissions_and_master(_args(more=["a"], master=nope), "x", "NB")
    assert "--source" not in str(err.value)


def test_the_output_folder_stays_outside_the_submissions(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    inside = _args(out=str(subs / "r"))
    with pytest.raises(CourseError, match="inside SUBMISSIONS .*; go elsewhere"):
        class_args.out_folder(inside, subs, "d", "; go elsewhere")
    (tmp_path / "file").write_text("")
    with pytest.raises(CourseError, match="not a folder"):
        class_args.out_folder(_args(out=str(tmp_path / "file")), subs, "d", "")
    assert class_args.out_folder(_args(), subs, "report-x", "").name == "report-x"
