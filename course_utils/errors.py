"""The course's one error base, shared by the ``course`` command, the grader and the claims.

:class:`CourseError` is an error the user can fix: its message says what happened and
what to do about it, and every command prints it as one line and exits with status 2
(``course_utils.cli``). It lives here, outside any room, so that ``claims``
(which lessons import) and ``grading`` raise it without importing ``tooling``.
Importing this module imports nothing.
"""

from __future__ import annotations


class CourseError(Exception):
    """An error the user can fix; its message says what happened and what to do about it."""
