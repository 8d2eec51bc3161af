"""Adjustments applied to graded records: the late policy and manual grades."""

from __future__ import annotations

import argparse
from pathlib import Path


def after_grade(out: Path, args: argparse.Namespace) -> None:
    """Apply the report folder's stored late policy and manual grades (none yet)."""


def import_manual(out: Path, table: Path) -> int:
    raise NotImplementedError
