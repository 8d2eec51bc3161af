"""Student notebooks run top to bottom: every exercise says "not implemented yet", nothing errors.

Each student notebook runs once per suite: 01 to 12 here, in a kernel with the suite's
settings; 00 in JupyterLab, by Run All (tests/tooling/test_lab_browser.py), and its Chinese
twin, whose code cells are the English ones, under plain papermill
(test_plain_papermill.py). :func:`problems` is what every one of those runs must show.
"""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_utils import exercises, lessons, student_version
from course_utils.tooling.execution import runner
from tests import load

ROOT = Path(__file__).resolve().parents[2]
# Run elsewhere (above): the English student notebook 00 and its Chinese twin.
ELSEWHERE = "00_welcome_exercises.ipynb"
STUDENT = [p for p in lessons.files(ROOT, lessons.STUDENTS) if p.name != ELSEWHERE]
IDS = [p.stem for p in STUDENT]


def problems(nb, path: Path) -> list[str]:
    """What is wrong with an executed student notebook ``nb`` (read from ``path``): an
    error output, a visible check that did not say "not implemented yet", a check that
    passed."""
    found = [
        f"{path.name}: {o.get('ename')}: {o.get('evalue')}"
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    printed = "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
    master = nbformat.read(ROOT / "solutions" / path.name, as_version=4)
    visible = [
        ex.id
        for ex in student_version.parse(master, str(path)).values()
        if any(not t.hidden for t in ex.tests)
    ]
    if not visible:
        found.append(f"{path.name} has no exercise with visible tests")
    found += [
        f"{path.name}: {ex_id} did not report"
        for ex_id in visible
        if f"{ex_id}: not implemented yet" not in printed
    ]
    if "passed" in printed.replace("not implemented yet", ""):
        found.append(f"{path.name}: a check passed with the stubs in place")
    return found


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
    assert not problems(nb, path)


def test_a_stub_that_passes_or_a_check_that_is_silent_is_named():
    path = ROOT / "exercises" / ELSEWHERE
    nb = nbformat.read(path, as_version=4)
    assert problems(nb, path)  # never executed: no check reported
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("# TESTS: "):
            ex_id = cell.source.split()[2]
            text = f"{ex_id}: not implemented yet\n"
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    assert problems(nb, path) == []
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    last.outputs.append(
        nbformat.v4.new_output("stream", name="stdout", text="port-mlp: passed\n")
    )
    assert problems(nb, path) == [
        f"{path.name}: a check passed with the stubs in place"
    ]
    last.outputs = [nbformat.v4.new_output("error", ename="NameError", evalue="x")]
    assert f"{path.name}: NameError: x" in problems(nb, path)


def test_student_notebook_00_runs_in_jupyterlab_and_under_plain_papermill():
    from tests.notebooks import test_plain_papermill
    from tests.tooling import test_lab_browser

    assert test_lab_browser.EXERCISES == f"{lessons.STUDENTS}/{ELSEWHERE}"
    assert test_plain_papermill.STUDENT.name == ELSEWHERE
    assert test_plain_papermill.STUDENT.parent.name == lessons.CHINESE
    every = lessons.files(ROOT, lessons.STUDENTS)
    assert [p for p in every if p not in STUDENT] == [ROOT / "exercises" / ELSEWHERE]
