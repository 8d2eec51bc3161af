"""The error type of the ``course`` command: :class:`course_utils.errors.CourseError`.

Re-exported here, where the command's modules have always found it; papermill keeps
its own errors in ``exceptions.py``.
"""

from __future__ import annotations

from course_utils.errors import CourseError

__all__ = ["CourseError"]
