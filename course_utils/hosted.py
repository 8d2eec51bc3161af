"""The setup cell of every published notebook imports this name: :mod:`course_utils.install.hosted`."""

from course_utils.install.hosted import *  # noqa: F403
