"""A kernel start that is tried again when the kernel dies as it starts.

nbval starts each notebook's kernel once, with its stderr sent to /dev/null: a kernel
that dies while the machine is loaded fails every cell of the notebook, and nobody
sees why. :func:`retrying` wraps such a start function.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

TRIES = 3
SHOWN = 3000  # characters of the kernel's stderr in the final error


def retrying(start: Callable[..., T], tries: int = TRIES) -> Callable[..., T]:
    """``start(*args, stderr=..., **kwargs)`` tried up to ``tries`` times while it raises
    ``RuntimeError``; the kernel's stderr goes to a temporary file, whose end the last
    error shows."""

    @functools.wraps(start)
    def wrapped(*args, **kwargs):
        kwargs.pop("stderr", None)
        for attempt in range(1, tries + 1):
            with tempfile.TemporaryFile() as err:
                try:
                    return start(*args, stderr=err, **kwargs)
                except RuntimeError as exc:
                    if attempt == tries:
                        err.seek(0)
                        said = err.read().decode(errors="replace")[-SHOWN:]
                        raise RuntimeError(
                            f"{exc} ({tries} starts; the kernel's stderr, last start:\n"
                            f"{said or '(nothing)'})"
                        ) from exc
        raise AssertionError("unreachable")

    return wrapped
