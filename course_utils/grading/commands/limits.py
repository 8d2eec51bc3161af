"""The limits' arguments of every command that runs a submission (``grade``, ``check``,
``gradescope build``): one set of defaults, :class:`..batch.grader.Limits`'s, shown in
``--help``."""

from __future__ import annotations

from course_utils.tooling.args import number


def add_limits(g, memory: float | None = None, memory_why: str = "") -> None:
    """The limits every command that runs a submission takes, with one set of defaults
    (:class:`.grader.Limits`) shown in ``--help``; ``memory`` (and ``memory_why``) where
    another default is needed (Gradescope's container)."""
    from course_utils.grading.batch.grader import Limits

    default = Limits()
    g.add_argument(
        "--timeout",
        type=number(float, 0.1),
        default=default.timeout,
        metavar="S",
        help="seconds per cell (default %(default)g)",
    )
    g.add_argument(
        "--total-timeout",
        type=number(float, 1),
        default=default.total_timeout,
        metavar="S",
        help="seconds per submission (default %(default)g)",
    )
    g.add_argument(
        "--memory",
        type=number(float, 16),
        default=memory or default.memory_mb,
        metavar="MB",
        help="resident memory of a kernel and its children (default %(default)g"
        + (f"; {memory_why})" if memory_why else ")"),
    )
