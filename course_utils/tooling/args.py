"""Argument types shared by every ``course`` command (a bad value is one line naming it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def number(kind: type, minimum: float) -> Callable[[str], float]:
    """An argparse ``type`` that reads an ``int`` or ``float`` of at least ``minimum``."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number, got {text!r}"
            ) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"must be at least {minimum}, got {text!r}"
            )
        return value

    return parse


def positive_seconds(text: str) -> float:
    """An argparse ``type`` for a number of seconds greater than zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds, got {text!r}"
        ) from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return value
