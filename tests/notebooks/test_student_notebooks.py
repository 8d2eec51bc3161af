"""Student notebooks run top to bottom: every exercise says "not implemented yet", nothing errors."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_utils import exercises, student_version
from course_utils.tooling.execution import runner
from tests import load

ROOT = Path(__file__).resolve().parents[2]
STUDENT = sorted((ROOT / "exercises").glob("*.ipynb"))
# One translated student notebook runs too (its code cells are the English ones).
STUDENT += sorted((ROOT / "exercises" / "zh").glob("00_*.ipynb"))
IDS = [str(p.relative_to(ROOT / "exercises").with_suffix("")) for p in STUDENT]


@pytest.mark.notebooks
@pytest.mark.parametrize("path", STUDENT, ids=IDS)
def test_student_notebook_runs_all_with_not_implemented(path, monkeypatch):
    for key, value in runner.kernel_env(ROOT, smoke=True).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv(exercises.GRADING_ENV, raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=load.stretched(300),
        startup_timeout=load.stretched(300),  # a busy machine starts kernels slowly
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        **runner.kernel_options(),  # Unix sockets where TCP is refused
    )
    client.execute()  # raises CellExecutionError on the first error
    printed = "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.get("output_type") == "stream"
    )
    master = nbformat.read(ROOT / "solutions" / path.name, as_version=4)
    visible = [
        ex.id
        for ex in student_version.parse(master, str(path)).values()
        if any(not t.hidden for t in ex.tests)
    ]
    assert visible, f"{path.name} has no exercise with visible tests"
    for ex_id in visible:
        assert f"{ex_id}: not implemented yet" in printed, (
            f"{path.name}: {ex_id} did not report"
        )
    assert "passed" not in printed.replace("not implemented yet", "")
