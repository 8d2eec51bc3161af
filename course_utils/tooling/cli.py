"""The ``course`` command's old address, kept for the ``course`` script of installed
environments and the published notebooks' ``python -m course_utils.tooling.cli check``:
the command is :mod:`course_utils.cli`."""

import sys

from course_utils.cli import main

if __name__ == "__main__":
    sys.exit(main())
