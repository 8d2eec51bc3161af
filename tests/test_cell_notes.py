"""course_utils.cell_notes: a note said once per notebook cell, and shorter in the next."""

import pytest

from course_utils import cell_notes


@pytest.fixture
def cell(monkeypatch):
    now = [1]
    cell_notes.reset()
    monkeypatch.setattr(cell_notes, "cell", lambda: now[0])
    yield now
    cell_notes.reset()


def test_outside_a_notebook_every_note_is_new():
    assert cell_notes.cell() is None
    assert [cell_notes.seen("x") for _ in range(2)] == [cell_notes.NEW] * 2


def test_a_note_is_new_once_per_cell_and_previous_in_the_next(cell):
    assert cell_notes.seen("contended") == cell_notes.NEW
    assert cell_notes.seen("contended") == cell_notes.IN_CELL
    cell[0] = 2
    assert cell_notes.seen("contended") == cell_notes.PREVIOUS
    assert cell_notes.seen("contended") == cell_notes.IN_CELL
    assert cell_notes.seen("quiet") == cell_notes.NEW
    cell[0] = 4  # cell 3 said nothing: the note is new again
    assert cell_notes.seen("contended") == cell_notes.NEW
