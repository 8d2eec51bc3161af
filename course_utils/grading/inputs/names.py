"""Names and text from outside: file names as safe text, report folder names, CSV cells.

A submission's file name is bytes on Linux; Python hands non-UTF-8 bytes over
as lone surrogates (``surrogateescape``), which a strict UTF-8 writer refuses.
:func:`shown` turns such text into plain, printable text (``caf\\xe9``) once,
where names enter the grader, so every report, table and console line can be
written. :func:`folder_name` gives each student one safe path component of
bounded length in the report folder, in a namespace of its own: a plain id is its
own folder, any other id (and an id equal to one of the report folder's own names)
gets a folder with a ``+`` in it, which no plain id and none of the report's own
names holds, so no student can share a folder with another or with the grader's
files. :func:`csv_cell` keeps a spreadsheet from reading a cell as a formula;
:func:`clean` makes any JSON value writable as UTF-8.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

MAX_FOLDER = 80  # characters of a report folder name, hash suffix included
# The report folder's own entries: the class tables, the instructor's files, the class report
# (and, starting with a dot, its key and scratch folders, which no student folder can start with).
RESERVED = frozenset(
    {"grades.csv", "grades.json", "_instructor", "class-report", "regrades.csv"}
)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
# Only in a rewritten folder name: never in a plain id (``_UNSAFE`` refuses it), nor in
# a name of RESERVED, so a rewritten name can never be a plain id or a report's own name.
REWRITTEN = "+"
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def utf8(text: str) -> str:
    """``text`` with lone surrogates written as escapes (``\\xe9``, ``\\ud800``)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:  # bytes smuggled in by surrogateescape: show the bytes
        raw = text.encode("utf-8", "surrogateescape")
        return raw.decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def shown(name: str) -> str:
    """A file name as one printable line: bad bytes and control characters escaped."""
    text = utf8(name)
    if text.isprintable():
        return text
    return "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )


def plain(student: str) -> bool:
    """An id that is its own folder: letters, digits, ``._-``, at most 80 characters,
    not starting with a dot or a dash, and not one of the report folder's own names."""
    return bool(
        student
        and len(student) <= MAX_FOLDER
        and not _UNSAFE.search(student)
        and student[0] not in ".-"
        and student not in RESERVED
    )


def folder_name(student: str) -> str:
    """The student's folder in the report folder: one safe path component, at most 80 characters.

    A plain id (:func:`plain`) is used as it is; any other is reduced to its safe
    characters and gets ``+`` and a hash of the whole id, so two ids never share a
    folder, and a rewritten name (it holds a ``+``) is never a plain id nor one of
    the report folder's own names.
    """
    if plain(student):
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    stem = _UNSAFE.sub("_", student).lstrip(".-")[: MAX_FOLDER - 13]
    return f"{stem or 'student'}{REWRITTEN}{digest}"


def csv_cell(value: Any) -> str:
    """A table cell that a spreadsheet shows as text: a leading ``= + - @``, tab or CR gets a ``'``."""
    text = utf8(str(value))
    if text.startswith(_FORMULA) and not _is_number(text):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text


def clean(value: Any, depth: int = 0) -> Any:
    """A JSON value with every string made writable as UTF-8; too deep nesting is cut off."""
    if isinstance(value, str):
        return utf8(value)
    if depth > 64:
        return "(nested too deeply; cut by the grader)"
    if isinstance(value, dict):
        return {utf8(str(k)): clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v, depth + 1) for v in value]
    return value
