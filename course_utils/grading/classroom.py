"""Old path of :mod:`course_utils.grading.integrations.classroom`, kept for the workflows
copied from earlier releases, which run ``python -m course_utils.grading.classroom``."""

import sys

from course_utils.grading.integrations.classroom import main

if __name__ == "__main__":
    sys.exit(main())
