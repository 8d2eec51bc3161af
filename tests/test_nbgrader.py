"""Masters are valid nbgrader source notebooks: nbgrader's own preprocessors agree with ours."""

from pathlib import Path

import nbformat
import pytest

from course_utils.tooling import notebooks

nbgrader_pre = pytest.importorskip(
    "nbgrader.preprocessors",
    reason="nbgrader is a test-only dependency (pip install -e '.[dev]'); not installed here",
)

ROOT = Path(__file__).resolve().parents[1]
MASTERS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.parametrize("path", MASTERS, ids=[p.stem for p in MASTERS])
def test_nbgrader_leaves_the_same_student_code(path):
    master = nbformat.read(path, as_version=4)
    nbgrader_pre.CheckCellMetadata().preprocess(
        master, {}
    )  # validates ids, points, types
    cleared, _ = nbgrader_pre.ClearSolutions().preprocess(master, {})
    cleared, _ = nbgrader_pre.ClearHiddenTests().preprocess(cleared, {})
    theirs = [
        c
        for c in cleared.cells
        if not c.metadata.get("nbgrader", {})
        .get("grade_id", "")
        .endswith("-hidden-tests")
    ]
    ours = nbformat.reads(
        notebooks.render_student(path.with_suffix(".py"), ROOT), as_version=4
    ).cells
    assert len(theirs) == len(ours)
    badge_path = f"solutions/{path.name}"
    for i, (a, b) in enumerate(zip(theirs, ours, strict=True)):
        text_a = a.source.replace(badge_path, f"exercises/{path.name}")
        assert (a.cell_type, text_a.strip()) == (b.cell_type, b.source.strip()), (
            f"{path.name}: cell {i}"
        )
    grade_ids = [
        c.metadata["nbgrader"]["grade_id"]
        for c in master.cells
        if "nbgrader" in c.metadata
    ]
    assert len(grade_ids) == len(set(grade_ids))
