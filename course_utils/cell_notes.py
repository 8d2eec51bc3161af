"""Say a note once per notebook cell: what several tables or verdicts of one cell share.

A cell that prints three timing tables, or six verdicts from contended rounds,
needs the reason ("contended: other processes used 90 % of the cores") and its
remedy once, not under every table or on every line. :func:`seen` records a
note's key for the cell that is running (IPython's execution count) and says
whether this cell, or the cell just before it, already said it. Outside a
notebook (a script, a test, ``course claims``) there is no cell, every note is
new, and every printout stays complete on its own.

Standard library only; IPython is consulted only if already imported.
"""

from __future__ import annotations

import sys

NEW = "new"  # not said in this cell nor in the one before: say it whole
IN_CELL = "in cell"  # already said in this cell: leave it out
PREVIOUS = "previous"  # said in the cell just before (not yet in this one): a few words

_said: dict[int, set[str]] = {}


def cell() -> int | None:
    """The running cell's execution count, or None outside a notebook."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    count = getattr(shell, "execution_count", None)
    return count if isinstance(count, int) else None


def seen(key: str) -> str:
    """Record ``key`` for this cell; :data:`NEW`, :data:`IN_CELL` or :data:`PREVIOUS`."""
    now = cell()
    if now is None:
        return NEW
    for old in [c for c in _said if c < now - 1]:
        del _said[old]  # only this cell and the one before matter
    here = _said.setdefault(now, set())
    if key in here:
        return IN_CELL
    here.add(key)
    return PREVIOUS if key in _said.get(now - 1, ()) else NEW


def reset() -> None:
    """Forget every note (tests)."""
    _said.clear()
