"""Source code for the lesson to show: marked regions of the scripts, a cell's function.

Only the standard library is imported; no script is imported to read it.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import Any


class Excerpt(str):
    """Source code that a notebook shows as a highlighted Python block."""

    def _repr_markdown_(self) -> str:
        return f"```python\n{self}\n```"


def script_path(module: str) -> Path:
    """The file of a launchable module, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise ValueError(f"script_path: no Python file for module {module!r}")
    return Path(spec.origin)


def excerpt(module: str, region: str) -> Excerpt:
    """The lines of ``module`` between ``# [region]`` and ``# [/region]``, dedented."""
    lines = script_path(module).read_text().splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == f"# [{region}]")
        stop = next(i for i, ln in enumerate(lines) if ln.strip() == f"# [/{region}]")
    except StopIteration:
        raise ValueError(
            f"excerpt: {module} has no region '# [{region}]' ... '# [/{region}]'"
        ) from None
    return Excerpt(textwrap.dedent("\n".join(lines[start + 1 : stop])).strip("\n"))


def function_source(fn: Any) -> str:
    """The source of a function defined in a notebook cell or a module, dedented."""
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(
            f"function_source: expected a Python function, got {type(fn).__name__}"
        )
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as err:
        raise ValueError(
            f"function_source: the source of {fn.__name__!r} cannot be found ({err}); "
            "define it in a notebook cell or a .py file"
        ) from None
