"""Adjustments to graded records (late policy, manual grades)."""

from __future__ import annotations

import argparse

from course_utils.grading import adjust


def test_a_folder_without_a_policy_is_left_alone(tmp_path):
    adjust.after_grade(tmp_path, argparse.Namespace())
    assert list(tmp_path.iterdir()) == []
