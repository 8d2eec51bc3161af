"""Per-student seeds: the instructor's variant secret, and the seed of each roster id.

A student's seed is the HMAC-SHA256 of their id under a secret only the instructor
holds (``--variant-secret FILE``, or ``$COURSE_VARIANT_SECRET_FILE``), cut to 16 hex
digits. ``course release --variants`` writes it into each student's copy; the grader
computes it again from the id it grades (the submission's file or folder name), never
from the notebook. Without the secret nobody can work out another student's seed from
their id, nor one for an id of their choosing. Without a secret, variants are off.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from course_utils.errors import CourseError
from course_utils.variants import Variant

SECRET_ENV = "COURSE_VARIANT_SECRET_FILE"
MIN_SECRET_BYTES = 16
MAX_SECRET_BYTES = 4096


def secret_file(option: str | os.PathLike | None) -> Path | None:
    """The secret's file: the option's, else ``$COURSE_VARIANT_SECRET_FILE``'s, else None."""
    chosen = option or os.environ.get(SECRET_ENV) or None
    return Path(chosen) if chosen else None


def _where(option: str | os.PathLike | None, path: Path) -> str:
    return f"--variant-secret {path}" if option else f"${SECRET_ENV} ({path})"


def load_secret(option: str | os.PathLike | None = None) -> tuple[bytes, Path] | None:
    """(the secret, its file) named by ``option`` or the environment; None when neither
    names one (variants off). A missing, unreadable, empty or short file is a
    :class:`CourseError` naming where it came from."""
    path = secret_file(option)
    if path is None:
        return None
    where = _where(option, path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SECRET_BYTES + 1)
    except OSError as err:
        raise CourseError(f"{where}: cannot read it: {err.strerror or err}") from None
    if len(raw) > MAX_SECRET_BYTES:
        raise CourseError(
            f"{where}: more than {MAX_SECRET_BYTES} bytes; is it the secret?"
        )
    secret = raw.strip()
    if len(secret) < MIN_SECRET_BYTES:
        raise CourseError(
            f"{where}: {len(secret)} bytes; a secret needs at least {MIN_SECRET_BYTES} "
            "(make one: python -c 'import secrets; print(secrets.token_hex(32))' > FILE)"
        )
    return secret, path.resolve()


def seed(secret: bytes, student: str) -> str:
    """The student's seed: HMAC-SHA256 of the id under ``secret``, 16 hex digits."""
    message = b"course-variant:" + student.encode("utf-8", "surrogatepass")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:16]


def variant(secret: bytes, student: str) -> Variant:
    """The roster id's variant."""
    return Variant(student, seed(secret, student))


def fingerprint(secret: bytes) -> str:
    """Names the secret in a record's options (a new secret grades again) without
    revealing it: an HMAC of a fixed message, so no seed can be worked out from it."""
    return hmac.new(secret, b"course-variant-fingerprint", hashlib.sha256).hexdigest()[
        :12
    ]


def email_id(email: str) -> str:
    """The id a Gradescope student's variant is drawn from: their account's email as
    Gradescope lists it (``submission_metadata.json``'s ``users``, the roster's Email
    column), trimmed and lower-cased, so that the two spellings give one seed."""
    return str(email).strip().lower()
