"""Prose carries each lesson: at least 1.5 characters of markdown per character of code."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MIN_RATIO = 1.5  # docs/AUTHORING.md


def prose_ratio(nb: nbformat.NotebookNode) -> float:
    """Characters in markdown cells over characters in code cells."""
    chars = {"markdown": 0, "code": 0}
    for cell in nb.cells:
        if cell.cell_type in chars:
            chars[cell.cell_type] += len(cell.source)
    return chars["markdown"] / max(chars["code"], 1)


def test_prose_ratio_counts_characters():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("abcdef"),
            nbformat.v4.new_code_cell("abc"),
            nbformat.v4.new_raw_cell("ignored"),
        ]
    )
    assert prose_ratio(nb) == 2.0


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_each_lesson_explains_more_than_it_codes(lesson):
    ratio = prose_ratio(nbformat.read(lesson, as_version=4))
    assert ratio >= MIN_RATIO, (
        f"{lesson.name}: {ratio:.2f} characters of prose per character of code, below "
        f"{MIN_RATIO}: open sections with the why and read each result after it "
        "(docs/AUTHORING.md)"
    )
