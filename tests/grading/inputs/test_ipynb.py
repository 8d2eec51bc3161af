"""Reading notebook files: every unreadable kind gets a one-line reason a student can act on."""

from __future__ import annotations

import json
import os

import pytest

from course_utils.grading.inputs import ipynb
from course_utils.grading.inputs.ipynb import SubmissionError, read_cells
from tests.grading.helpers import MASTER, SUBS


@pytest.mark.parametrize(
    "name, reason",
    [
        ("empty", "the notebook file is empty"),
        ("truncated", "the notebook is truncated"),
        ("not_json", "not valid JSON: Expecting value at line 1 column 1"),
        ("wrong_shape", "JSON but not a notebook: it has no 'cells' list"),
    ],
)
def test_unreadable_submissions_get_a_reason(name, reason):
    with pytest.raises(SubmissionError) as err:
        read_cells(SUBS / f"{name}.ipynb")
    assert reason in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "data, reason",
    [
        ([1, 2], "a list, not an object"),
        ({"cells": [{"source": "x"}]}, "cell 0 is not a notebook cell"),
        ({"cells": [{"cell_type": "code", "source": 3}]}, "'source' that is not text"),
        ({"worksheets": []}, "nbformat 3"),
    ],
)
def test_wrong_shapes(tmp_path, data, reason):
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(data))
    with pytest.raises(SubmissionError, match=reason):
        read_cells(path)


def test_not_utf8_too_big_and_unreadable(tmp_path, monkeypatch):
    latin = tmp_path / "latin.ipynb"
    latin.write_bytes('{"cells": ["é"]}'.encode("latin-1"))
    with pytest.raises(SubmissionError, match="not UTF-8"):
        read_cells(latin)
    monkeypatch.setattr(ipynb, "MAX_NOTEBOOK_BYTES", 10)
    with pytest.raises(SubmissionError, match="over the 0 MiB limit"):
        read_cells(MASTER)
    with pytest.raises(SubmissionError, match="cannot read the notebook"):
        read_cells(tmp_path / "missing.ipynb")


def test_cells_are_plain_dicts_with_joined_sources(tmp_path):
    path = tmp_path / "x.ipynb"
    cell = {"cell_type": "code", "source": ["a = 1\n", "b = 2"], "metadata": []}
    path.write_text(json.dumps({"cells": [cell], "metadata": {}}))
    assert read_cells(path) == [
        {"cell_type": "code", "source": "a = 1\nb = 2", "metadata": {}}
    ]
    assert ipynb.nbgrader_meta({"metadata": {"nbgrader": {"points": 1}}}) == {
        "points": 1
    }
    assert ipynb.nbgrader_meta({"metadata": {"nbgrader": "x"}}) == {}


def test_links_special_files_and_huge_files_are_refused_unopened(tmp_path):
    (tmp_path / "link.ipynb").symlink_to(MASTER)
    (tmp_path / "zero.ipynb").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo.ipynb")
    with open(tmp_path / "huge.ipynb", "wb") as f:
        f.truncate(ipynb.MAX_NOTEBOOK_BYTES + 1)  # sparse: costs no disk
    for name, reason in [
        ("link", "is a symbolic link"),
        ("zero", "is a symbolic link"),
        ("fifo", "the notebook is a FIFO, not a file"),
        ("huge", "over the 50 MiB limit"),
    ]:
        with pytest.raises(SubmissionError, match=reason):
            read_cells(tmp_path / f"{name}.ipynb")
    with pytest.raises(SubmissionError, match="a folder, not a file"):
        ipynb.read_file(tmp_path)


def test_crafted_json_is_invalid_not_a_grader_error(tmp_path):
    path = tmp_path / "x.ipynb"
    for depth in (101, 100_000):  # under and over the parser's recursion limit
        path.write_text('{"cells": [], "metadata": ' + "[" * depth + "]" * depth + "}")
        with pytest.raises(SubmissionError, match="nested more than 100 levels"):
            read_cells(path)
    path.write_text('{"cells": [], "m": "a\\"' + "[" * 200 + '"}')  # in a string
    assert read_cells(path) == []
    cell = {
        "cell_type": "code",
        "source": "print('\ud800')",
    }  # JSON escape of a surrogate
    path.write_text(json.dumps({"cells": [cell]}))
    with pytest.raises(SubmissionError, match="cell 0 holds a character that is not"):
        read_cells(path)
