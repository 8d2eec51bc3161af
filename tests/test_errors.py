"""course_utils.errors: one error base for the command, the grader and the claims."""

from __future__ import annotations

import pytest

from course_utils import config, errors
from course_utils.claims import command, devices
from course_utils.tooling import errors as tooling_errors


def test_the_command_and_the_claims_raise_the_one_base():
    assert tooling_errors.CourseError is errors.CourseError
    with pytest.raises(errors.CourseError, match="--device"):
        devices.plan_devices("nowhere", jax_kinds=["cpu"], torch_kinds=["cpu"])


def test_claims_outside_a_checkout_is_a_course_error(monkeypatch):
    def nowhere(start=None):
        raise FileNotFoundError("could not find the course folder")

    monkeypatch.setattr(config, "course_root", nowhere)
    with pytest.raises(errors.CourseError, match="^course claims: could not find"):
        command._course_root()
