"""``expect_error``: show a sharp bit's error in a line, and fail when it does not happen.

A lesson shows a sharp bit as the natural code, the error it raises, then the
fix. The error cell wraps the natural code::

    with expect_error(TypeError, match="immutable"):
        x_jax[0] = 7.0

The block's error is caught and printed as ``%xmode Minimal`` would print it:
the error's type and the first line of its message (more with ``lines=``), no
traceback, so Run All, papermill and nbconvert carry on to the next cell. When
the block raises nothing, or an error whose message does not match, the cell
fails with :class:`ExpectedErrorMissing`: a sharp bit that a new framework
release fixed is noticed instead of passing silently. An error of any other
type propagates unchanged. The design follows ``pytest.raises``.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, version
from types import TracebackType

# Where an exception type's module says which framework raised it.
_FRAMEWORKS = {
    "jax": "jax",
    "jaxlib": "jax",
    "flax": "flax",
    "optax": "optax",
    "orbax": "orbax-checkpoint",
    "torch": "torch",
    "triton": "triton",
    "keras": "keras",
}


class ExpectedErrorMissing(AssertionError):
    """The block did not raise the error the cell expects (or its message differs)."""


# A source comment a framework appends to a quoted line: Dynamo's guards end in
# "  # return w - lr * grad  # /tmp/….py:4 in step".
_SOURCE_COMMENT = re.compile(r"\s{2,}#\s.*$")


def one_line(err: BaseException, lines: int = 1) -> str:
    """``TypeName: first line of the message`` (``lines`` non-blank lines of it).

    A line's trailing source comment (two spaces, then ``# ``) is left out.
    """
    text = [
        _SOURCE_COMMENT.sub("", line).rstrip()
        for line in str(err).splitlines()
        if line.strip()
    ]
    name = type(err).__name__
    if not text:
        return name
    return "\n".join([f"{name}: {text[0].lstrip()}", *text[1:lines]])


def _names(types: tuple[type[BaseException], ...]) -> str:
    return " or ".join(t.__name__ for t in types)


def _framework_versions(types: tuple[type[BaseException], ...]) -> str:
    """``jax 0.10.2``: the framework the expected types come from, else every one imported."""
    roots = {t.__module__.split(".")[0] for t in types}
    dists = list(dict.fromkeys(_FRAMEWORKS[r] for r in roots if r in _FRAMEWORKS))
    if not dists:
        dists = list(
            dict.fromkeys(d for m, d in _FRAMEWORKS.items() if m in sys.modules)
        )
    found = []
    for dist in dists:
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(dist)
    return ", ".join(found) or "the frameworks"


class ExpectError:
    """The context manager :func:`expect_error` returns; ``value`` is the error it caught."""

    def __init__(
        self,
        types: tuple[type[BaseException], ...],
        match: str | re.Pattern[str] | None,
        lines: int,
    ) -> None:
        self.types = types
        self.match = match
        self.lines = lines
        self.value: BaseException | None = None

    def __enter__(self) -> ExpectError:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if exc is None:
            raise ExpectedErrorMissing(
                f"expected {_names(self.types)}, nothing was raised: the sharp bit may "
                f"have been fixed in this version of {_framework_versions(self.types)}; "
                "check the cell and the prose that reads its error"
            )
        if not isinstance(exc, self.types):
            return False  # not the sharp bit: the error propagates unchanged
        if self.match is not None and not re.search(self.match, str(exc)):
            pattern = getattr(self.match, "pattern", self.match)
            raise ExpectedErrorMissing(
                f"expected {_names(self.types)} matching {pattern!r}, got "
                f"{one_line(exc)}: the message changed in this version of "
                f"{_framework_versions((type(exc),))}; update the cell's match and "
                "its prose"
            ) from exc
        self.value = exc
        print(one_line(exc, self.lines))
        return True


def expect_error(
    *types: type[BaseException],
    match: str | re.Pattern[str] | None = None,
    lines: int = 1,
) -> ExpectError:
    """Expect the ``with`` block to raise one of ``types``; print it in a line.

    ``match`` is a regular expression that must be found (``re.search``) in the
    error's message, as in ``pytest.raises``. ``lines`` is how many non-blank
    lines of the message to print (1: the first line, as most messages say the
    whole thing there). The error is kept as ``.value`` of the object the
    ``with`` statement binds. Raises :class:`ExpectedErrorMissing` when the block
    raises nothing or the message does not match; other errors pass through.
    """
    if not types:
        raise TypeError("expect_error needs at least one exception type")
    bad = [
        t for t in types if not (isinstance(t, type) and issubclass(t, BaseException))
    ]
    if bad:
        raise TypeError(f"expect_error takes exception types, not {bad!r}")
    if lines < 1:
        raise ValueError(f"lines must be at least 1, got {lines}")
    return ExpectError(types, match, lines)
