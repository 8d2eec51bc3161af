"""The CI one-liner, exactly: ``papermill NB out.ipynb -p SMOKE True``, nothing of the course first.

Papermill's own command line runs in a child process from the repository root, with
the course's variables removed from its environment (no ``COURSE_SMOKE``, no strict
``IPYTHONDIR``) and a fresh IPython directory, as on a CI runner. The quickest
course notebook, the Chinese student notebook 00, exits 0 with every exercise saying "not
implemented yet": this is its one run in the suite (its code cells are the English ones,
which JupyterLab runs in tests/tooling/test_lab_browser.py; nbval runs every lesson and
test_masters.py every master, in the course's own settings). Sharp
bits show their errors through ``course_utils.expect.expect_error``: a tiny notebook
whose expected error happens exits 0, one whose expected error does not happen exits
non-zero.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_utils import lessons
from tests import load
from tests.notebooks import test_student_notebooks as student_runs

ROOT = Path(__file__).resolve().parents[2]
# The quickest course notebook under plain papermill in smoke mode (2-core CPU).
STUDENT = ROOT / lessons.STUDENTS / lessons.CHINESE / student_runs.ELSEWHERE

pytestmark = pytest.mark.notebooks


def plain_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment without the course's own settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("COURSE_") and k != "IPYTHONDIR"
    }
    env["IPYTHONDIR"] = str(tmp_path / "ipython")  # a runner's empty profile
    return env


def papermill(notebook: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """``papermill NOTEBOOK OUT -p SMOKE True``, run by papermill's own CLI."""
    cmd = [
        sys.executable,
        "-m",
        "papermill",
        str(notebook),
        str(tmp_path / "out.ipynb"),
    ]
    return subprocess.run(
        [*cmd, "-p", "SMOKE", "True"],
        cwd=ROOT,
        env=plain_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=load.stretched(300),  # a busy machine starts kernels slowly
    )


def _tail(done: subprocess.CompletedProcess) -> str:
    return (done.stdout + done.stderr)[-3000:]


def test_plain_papermill_runs_a_course_notebook_to_its_end(tmp_path):
    done = papermill(STUDENT, tmp_path)
    assert done.returncode == 0, f"{STUDENT.relative_to(ROOT)}:\n{_tail(done)}"
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert student_runs.problems(out, STUDENT) == []


# A cell that prints the environment line once the mode is picked from SMOKE.
ENV_LINE = (
    "from course_utils import config, env\n"
    "S = config.sizes({'n': (1000, 10)}, SMOKE)\n"
    "print(env.report(include_frameworks=False).line())"
)


def _tiny(tmp_path: Path, body: str, *more: str) -> Path:
    """SMOKE, a sharp bit whose cell runs ``body``, the cells ``more``, a last print."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("SMOKE = None")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        params,
        nbformat.v4.new_code_cell(
            f"from course_utils.expect import expect_error\n\n"
            f"with expect_error(ZeroDivisionError):\n    {body}"
        ),
        *(nbformat.v4.new_code_cell(code) for code in more),
        nbformat.v4.new_code_cell("print('the notebook ran to its end')"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "sharp_bit.ipynb"
    nbformat.write(nb, path)
    return path


def _printed(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[subprocess.CompletedProcess, str]:
    """One papermill run, read by the next two tests: the expected error happens, then
    the environment line is printed. Its exit status and what its cells printed."""
    tmp_path = tmp_path_factory.mktemp("finished")
    done = papermill(_tiny(tmp_path, "1 / 0", ENV_LINE), tmp_path)
    out = tmp_path / "out.ipynb"
    return done, _printed(out) if out.exists() else ""


def test_an_expected_error_lets_papermill_finish(finished):
    done, printed = finished
    assert done.returncode == 0, _tail(done)
    assert "ZeroDivisionError: division by zero\n" in printed
    assert "the notebook ran to its end" in printed


def test_a_sharp_bit_that_no_longer_raises_fails_papermill(tmp_path):
    done = papermill(_tiny(tmp_path, "1 / 1"), tmp_path)
    assert done.returncode != 0
    assert "ExpectedErrorMissing" in done.stdout + done.stderr
    assert "nothing was raised" in done.stdout + done.stderr
    assert "the notebook ran to its end" not in _printed(tmp_path / "out.ipynb")


def test_the_environment_line_follows_the_smoke_parameter(finished):
    done, printed = finished
    assert done.returncode == 0, _tail(done)
    assert "smoke mode: True" in printed


LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_each_lesson_picks_its_sizes_before_it_prints_the_environment_line(lesson):
    text = lesson.read_text(encoding="utf-8")
    sizes, line = (
        text.find("config.sizes(SIZES, SMOKE)"),
        text.find("env.report().line()"),
    )
    assert 0 <= sizes < line, (
        f"{lesson.name}: call config.sizes(SIZES, SMOKE) before env.report().line(), "
        "so that the line says the mode papermill's -p SMOKE chose"
    )
