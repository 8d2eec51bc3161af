"""Reading a ``.ipynb`` file that may be anything: empty, truncated, not JSON, the wrong shape.

:func:`read_cells` returns a notebook's cells as plain dicts (type, source,
metadata) or raises :class:`SubmissionError` with a one-line reason a student
can act on. Masters and submissions are both read this way; nothing here
needs nbformat (slow to import, and strict where the grader must be lenient:
cell ids, kernel names and outputs are ignored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_NOTEBOOK_BYTES = 50 * 2**20


class SubmissionError(Exception):
    """A submission that cannot be graded at all; the message is the student's reason."""


def cell_source(cell: Any) -> str:
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def nbgrader_meta(cell: dict) -> dict:
    """The cell's ``metadata.nbgrader`` dict, or an empty one."""
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def read_cells(path: Path) -> list[dict]:
    """The cells of a notebook file, each ``{cell_type, source, metadata}``.

    Raises :class:`SubmissionError` with a one-line reason for an empty,
    truncated, non-JSON or wrongly shaped file. Cell ids, kernel names and
    outputs are not needed and are ignored.
    """
    data = _read_json(path)
    if not isinstance(data, dict):
        raise SubmissionError(
            f"the notebook is JSON but not a notebook: a {type(data).__name__}, not an object"
        )
    if "worksheets" in data and "cells" not in data:
        raise SubmissionError(
            "nbformat 3 notebook: open and save it in Jupyter to upgrade it"
        )
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise SubmissionError(
            "the notebook is JSON but not a notebook: it has no 'cells' list"
        )
    return [_cell(i, cell) for i, cell in enumerate(cells)]


def _read_json(path: Path) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise SubmissionError(
                f"notebook is {size / 2**20:.0f} MiB, over the {MAX_NOTEBOOK_BYTES >> 20} MiB limit"
            )
        raw = path.read_bytes()
    except OSError as err:
        raise SubmissionError(
            f"cannot read the notebook: {err.strerror or err}"
        ) from None
    if not raw.strip():
        raise SubmissionError("the notebook file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError(
            "the notebook is not UTF-8 text (is it really a .ipynb?)"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        body = text.strip()
        if body.startswith("{") and (
            not body.endswith("}") or err.pos >= len(body) - 1
        ):
            raise SubmissionError(
                f"the notebook is truncated: its JSON ends early ({err.msg})"
            ) from None
        raise SubmissionError(
            f"the notebook is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None


def _cell(i: int, cell: Any) -> dict:
    if not isinstance(cell, dict) or cell.get("cell_type") not in (
        "code",
        "markdown",
        "raw",
    ):
        raise SubmissionError(f"cell {i} is not a notebook cell (no valid 'cell_type')")
    src = cell.get("source", "")
    if not (
        isinstance(src, str)
        or (isinstance(src, list) and all(isinstance(s, str) for s in src))
    ):
        raise SubmissionError(f"cell {i} has a 'source' that is not text")
    meta = cell.get("metadata")
    return {
        "cell_type": cell["cell_type"],
        "source": cell_source(cell),
        "metadata": meta if isinstance(meta, dict) else {},
    }
