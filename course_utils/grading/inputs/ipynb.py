"""Reading a ``.ipynb`` file that may be anything: empty, truncated, not JSON, the wrong shape.

:func:`read_cells` returns a notebook's cells as plain dicts (type, source,
metadata) or raises :class:`SubmissionError` with a one-line reason a student
can act on. Masters and submissions are both read this way; nothing here
needs nbformat (slow to import, and strict where the grader must be lenient:
cell ids, kernel names and outputs are ignored). Files are opened without
following symbolic links and without blocking, and checked to be regular
files of bounded size before a byte is read (:func:`read_file`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_NOTEBOOK_BYTES = 50 * 2**20
MAX_DEPTH = 100  # nesting of JSON arrays and objects
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFDIR: "a folder",
}


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
    truncated, non-JSON, too deeply nested or wrongly shaped file, a symbolic
    link, a special file (FIFO, device, socket) or one over the size limit. Cell ids, kernel names and
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


def read_file(path: Path, limit: int | None = None) -> bytes:
    """The bytes of a regular file, never through a symbolic link, never blocking.

    Raises :class:`SubmissionError` for a link, a FIFO, a device, a socket, a
    file over ``limit`` bytes (default :data:`MAX_NOTEBOOK_BYTES`) or one that
    cannot be read.
    """
    limit = MAX_NOTEBOOK_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise SubmissionError(
                "the notebook is a symbolic link; submit the file itself"
            ) from None
        raise SubmissionError(
            f"cannot read the notebook: {err.strerror or err}"
        ) from None
    _check_plain(fd, limit)
    with os.fdopen(fd, "rb") as f:
        try:
            raw = f.read(limit + 1)
        except OSError as err:
            raise SubmissionError(
                f"cannot read the notebook: {err.strerror or err}"
            ) from None
    if len(raw) > limit:
        raise SubmissionError(_too_big(len(raw), limit))
    return raw


def _check_plain(fd: int, limit: int) -> None:
    """Nothing for a regular file within ``limit``; else closes ``fd`` and says why."""
    st = os.fstat(fd)
    why = None
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        why = f"the notebook is {kind}, not a file"
    elif st.st_size > limit:
        why = _too_big(st.st_size, limit)
    if why:
        os.close(fd)
        raise SubmissionError(why)


def _too_big(size: int, limit: int) -> str:
    return f"notebook is {size / 2**20:.0f} MiB, over the {limit >> 20} MiB limit"


def _read_json(path: Path) -> Any:
    raw = read_file(path)
    if not raw.strip():
        raise SubmissionError("the notebook file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SubmissionError(
            "the notebook is not UTF-8 text (is it really a .ipynb?)"
        ) from None
    if _depth(text) > MAX_DEPTH:
        raise SubmissionError(
            f"the notebook's JSON is nested more than {MAX_DEPTH} levels deep"
        )
    try:
        return json.loads(text)
    except RecursionError:
        raise SubmissionError("the notebook's JSON is nested too deeply") from None
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


def _depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings (an upper bound for bad JSON)."""
    deepest = depth = 0
    for token in _TOKENS.findall(text):
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


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
    text = cell_source(cell)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise SubmissionError(
            f"cell {i} holds a character that is not valid Unicode (a lone surrogate escape)"
        ) from None
    meta = cell.get("metadata")
    return {
        "cell_type": cell["cell_type"],
        "source": text,
        "metadata": meta if isinstance(meta, dict) else {},
    }
