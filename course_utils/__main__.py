"""``python -m course_utils``: the ``course`` command run by a given interpreter, so a
notebook can call it as ``!"{sys.executable}" -m course_utils check NAME`` where the
kernel's PATH has no ``course`` (Jupyter started as ``.venv/bin/jupyter lab``)."""

from __future__ import annotations

if __name__ == "__main__":
    import sys

    from course_utils.tooling.cli import main

    sys.exit(main())
