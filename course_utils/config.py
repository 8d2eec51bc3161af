"""Smoke mode (one switch that shrinks every size so the course runs in minutes) and where the course lives."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ENV_VAR = "COURSE_SMOKE"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def smoke(override: bool | None = None) -> bool:
    """Whether smoke mode is on: ``override`` if given, else ``COURSE_SMOKE``."""
    if override is not None:
        if not isinstance(override, bool):
            raise TypeError(f"SMOKE must be True, False or None, got {override!r}")
        return override
    raw = os.environ.get(ENV_VAR, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(
        f"environment variable {ENV_VAR}={raw!r} is not understood; "
        "use 1/true/yes/on or 0/false/no/off"
    )


def smoke_environ(on: bool) -> dict[str, str]:
    """The environment entry that turns smoke mode on or off: for a child process (a
    kernel, a check's item) or this one, always written the one way :func:`smoke` reads."""
    return {ENV_VAR: "1" if on else "0"}


def pick(full: Any, smoke_value: Any, *, smoke_mode: bool | None = None) -> Any:
    """Return ``smoke_value`` in smoke mode and ``full`` otherwise."""
    return smoke_value if smoke(smoke_mode) else full


def sizes(table: Mapping[str, tuple[Any, Any]], smoke_mode: bool | None = None):
    """Pick each size from a ``{name: (full, smoke)}`` table.

    Returns a namespace (``S.n_steps``) with an extra ``smoke`` attribute. This
    lets a notebook keep every size in its papermill ``parameters`` cell while
    ``-p SMOKE True`` (injected after that cell) still takes effect. A mode given
    explicitly is the notebook's: it is written to ``COURSE_SMOKE`` too, so that
    :func:`smoke`, the environment line and child processes agree with it.
    """
    on = smoke(smoke_mode)
    if smoke_mode is not None:
        os.environ.update(smoke_environ(on))
    chosen: dict[str, Any] = {}
    for name, pair in table.items():
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise ValueError(
                f"size {name!r} must be a (full, smoke) tuple, got {pair!r}"
            )
        chosen[name] = pair[1] if on else pair[0]
    return SimpleNamespace(smoke=on, **chosen)


def course_root(start: str | os.PathLike | None = None) -> Path:
    """The checkout holding ``notebooks/``: searched upwards from ``start`` (cwd), then from this package."""
    candidates = [Path(start or os.getcwd()).resolve()]
    candidates.append(Path(__file__).resolve().parent.parent)
    for base in candidates:
        for d in (base, *base.parents):
            if (d / "notebooks").is_dir() and (d / "course_utils").is_dir():
                return d
    raise FileNotFoundError(
        "could not find the course folder (one holding notebooks/ and course_utils/); "
        "run this inside a clone of the course repository"
    )
