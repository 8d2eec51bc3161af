"""The late policy's arithmetic: deadlines, extensions, per-day penalty, cut-off, file times."""

from __future__ import annotations

import argparse
import os

import pytest

from course_utils.errors import CourseError
from course_utils.grading.policy import late


def _policy(tmp_path, **kw):
    base = {"deadline": "2026-03-01T12:00", "penalty_per_day": 10.0, "cutoff": 3.0}
    base |= {"extensions": None, "times": None} | kw
    return late.policy_from_args(argparse.Namespace(**base)), base


def test_days_late_count_each_started_day(tmp_path):
    manifest = tmp_path / "times.csv"
    manifest.write_text("student,submitted_at\nann,2026-03-01T11:00Z\nbo,2026-03-01T13:00\n"
                        "cy,2026-03-03T11:30\ndi,2026-03-05T00:00\n")  # fmt: skip
    ext = tmp_path / "ext.csv"
    ext.write_text("cy,2\n")
    policy, _ = _policy(tmp_path, times=str(manifest), extensions=str(ext))
    notes: list[str] = []
    got = {
        s: late.lateness({"student": s}, policy, notes)
        for s in ("ann", "bo", "cy", "di")
    }
    assert got["ann"]["why"] == "on time" and got["ann"]["fraction"] == 0
    assert got["bo"]["days"] == 1 and got["bo"]["fraction"] == pytest.approx(0.1)
    assert got["cy"]["why"] == "on time"  # two more days
    assert got["di"]["fraction"] == 1.0 and "cut-off" in got["di"]["why"]
    assert not notes and got["bo"]["source"] == "manifest"


def test_without_a_manifest_the_file_time_counts_with_a_warning(tmp_path):
    policy, _ = _policy(tmp_path)
    notes: list[str] = []
    for name in ("ann", "bo"):
        sub = tmp_path / f"{name}.ipynb"
        sub.write_text("{}")
        os.utime(sub, (1772539200, 1772539200))  # 2026-03-03T12:00Z: two days late
        info = late.lateness({"student": name, "submission": str(sub)}, policy, notes)
        assert info["days"] == 2 and info["source"] == "file time"
    assert notes == ["ann", "bo"]
    assert "2 student(s) (ann, bo)" in late.file_time_warning(notes)
    assert (
        late.lateness({"student": "gone", "submission": "/nope"}, policy, notes) is None
    )


def test_policy_options_need_a_deadline_and_good_times(tmp_path):
    with pytest.raises(CourseError, match="--cutoff needs --deadline"):
        late.policy_from_args(argparse.Namespace(deadline=None, cutoff=2.0))
    assert late.policy_from_args(argparse.Namespace()) is None
    with pytest.raises(CourseError, match="not an ISO 8601 time"):
        late.parse_time("next tuesday", "--deadline")


def test_a_grace_period_forgives_the_first_minutes(tmp_path):
    manifest = tmp_path / "times.csv"
    manifest.write_text("ann,2026-03-01T12:20\nbo,2026-03-01T12:40\n")
    policy, _ = _policy(tmp_path, times=str(manifest), grace=30.0)
    got = {s: late.lateness({"student": s}, policy, []) for s in ("ann", "bo")}
    assert got["ann"]["why"] == "on time (within the 30-minute grace period)"
    assert got["bo"]["days"] == 1 and got["bo"]["fraction"] == pytest.approx(0.1)


def test_a_submission_time_in_the_future_is_flagged(tmp_path):
    manifest = tmp_path / "times.csv"
    manifest.write_text("ann,2099-03-01T12:20\n")
    policy, _ = _policy(tmp_path, times=str(manifest))
    info = late.lateness({"student": "ann"}, policy, [])
    assert info["future"] and "in the future" in info["why"]
