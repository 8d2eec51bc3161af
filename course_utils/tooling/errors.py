"""The one error type of the ``course`` command (papermill keeps its own in ``exceptions.py``)."""

from __future__ import annotations


class CourseError(Exception):
    """An error the user can fix; its message says what happened and what to do about it."""
