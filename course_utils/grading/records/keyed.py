"""Keyed records: a ``grade.json`` counts only when the grader that wrote it signed it.

Anything in the report folder may have been rewritten by a student's code (or
anyone else who can write there), so a record is believed only when its
``seal``, an HMAC-SHA256 over the rest of the record, checks out with the key
of that report folder. The key is made on first use in
``DIR/.grader/key`` (folder mode 0700, file mode 0600, opened without
following links). :func:`problem` checks a record's shape, so a record that
passes is safe to put in the tables: a malformed or unsealed one is reported
and graded again, never fatal.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import stat
from pathlib import Path
from typing import Any

from course_utils.grading.inputs.ipynb import SubmissionError, read_file
from course_utils.grading.inputs.names import clean, folder_name, shown

PRIVATE = ".grader"  # the report folder's private state
KEY = "key"
SEAL = "seal"


def key(out: Path, *, create: bool = True) -> bytes | None:
    """The report folder's key, made (mode 0600) when missing or not trustworthy.

    With ``create=False`` nothing is written: None when there is no usable key.
    """
    folder = out / PRIVATE
    if not create:
        return _read_key(folder / KEY) if folder.is_dir() else None
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        st = None
    if st is not None and (not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid()):
        (shutil.rmtree if stat.S_ISDIR(st.st_mode) else os.unlink)(folder)
        st = None  # not the grader's own folder: a new one, and a new key
    if st is None:
        folder.mkdir(mode=0o700, parents=True)
    os.chmod(folder, 0o700)
    path = folder / KEY
    found = _read_key(path)
    if found is not None:
        return found
    new = secrets.token_bytes(32)
    tmp = folder / f".{KEY}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(new.hex().encode())
        f.flush()
        os.fsync(f.fileno())
    try:  # a concurrent first run of the same folder: the first key wins
        os.link(tmp, path)
    except FileExistsError:
        os.replace(tmp, path)  # the one there was not trustworthy (or raced): ours now
    else:
        os.unlink(tmp)
    return _read_key(path) or new


def _read_key(path: Path) -> bytes | None:
    """The key in ``path``; None when missing, a link, not ours, readable by others, or bad."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.getuid()
            or stat.S_IMODE(st.st_mode) & 0o077
        ):
            return None
        text = f.read(100)
    try:
        value = bytes.fromhex(text.decode("ascii").strip())
    except ValueError:
        return None
    return value if len(value) == 32 else None


def _mac(record: dict, secret: bytes) -> str:
    body = {k: v for k, v in record.items() if k != SEAL}
    text = json.dumps(body, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(secret, text.encode("ascii"), hashlib.sha256).hexdigest()


def seal(record: dict, secret: bytes) -> dict:
    """The record as it will read back from JSON, with its ``seal``."""
    body = json.loads(json.dumps(clean({k: v for k, v in record.items() if k != SEAL})))
    return body | {SEAL: _mac(body, secret)}


def sealed(record: Any, secret: bytes) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get(SEAL), str)
        and hmac.compare_digest(record[SEAL], _mac(record, secret))
    )


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def problem(record: Any, folder: str | None = None) -> str | None:
    """Why ``record`` cannot be a student's record (None when it can); ``folder``: where it was."""
    if not isinstance(record, dict):
        return "not a JSON object"
    student = record.get("student")
    if not isinstance(student, str) or not student or shown(student) != student:
        return "no valid 'student'"
    if folder is not None and folder_name(student) != folder:
        return f"its student {student!r} does not belong in folder {shown(folder)!r}"
    for name in ("total", "max_total"):
        if not _number(record.get(name)):
            return f"{name!r} is not a number"
    for name in ("status", "reason"):
        if not isinstance(record.get(name), str):
            return f"{name!r} is not text"
    exercises = record.get("exercises", {})
    if not isinstance(exercises, dict) or not all(
        isinstance(v, dict) and _number(v.get("points")) for v in exercises.values()
    ):
        return "'exercises' is not a table of points"
    flags = record.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        return "'flags' is not a list of text"
    return None


def read(path: Path, limit: int = 20 * 2**20) -> Any:
    """The JSON in ``path``, read without following a link or blocking; ValueError if unusable."""
    try:
        raw = read_file(path, limit)
    except SubmissionError as err:
        raise ValueError(str(err).replace("the notebook", "the record")) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"not JSON ({type(err).__name__})") from None


def file_hash(path: Path, limit: int = 200 * 2**20) -> str | None:
    """SHA-256 of a regular file (not followed through a link); None if there is none."""
    try:
        return hashlib.sha256(read_file(path, limit)).hexdigest()
    except SubmissionError:
        return None
