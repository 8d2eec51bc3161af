"""Helpers for the *JAX and PyTorch, side by side* course.

Importing this package is cheap and has no side effects: jax and torch are
imported only inside the functions that need them. Submodules:

- ``env``: environment report, device choice, simulated CPU devices
- ``timing``: honest benchmarks (``sync``, ``bench``, ``compare``, ``compile_report``)
- ``plots``: training curves, timing bars, break-even plots
- ``data``: scikit-learn's digits, layout helpers, a shared batch order
- ``parity``: ``to_numpy`` and ``assert_close`` over mixed pytrees
- ``config``: smoke mode and sizes
- ``exercises``: student notebooks from masters, and the ``check`` self-test
- ``runner``: executes notebooks with papermill
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_SUBMODULES = (
    "config",
    "data",
    "env",
    "exercises",
    "notebooks",
    "parity",
    "plots",
    "runner",
    "strict",
    "timing",
)

__all__ = list(_SUBMODULES)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
