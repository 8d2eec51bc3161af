"""``course check`` where the exercise notebook's setup cell leaves a Colab runtime: the
course installed as a package (no checkout anywhere), Colab's marker in the environment,
no bubblewrap, and the student's notebook alone in the working folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from course_utils import student_version
from course_utils.cli import main as course_main
from tests import load
from tests.grading.helpers import ROOT

NAME = "00_welcome_exercises.ipynb"
SOLVED = ("sync-timer", "break-even")  # port-mlp is left as the student got it


def _solved(path) -> None:
    """The course's student notebook with two exercises solved, as a student would."""
    master = nbformat.read(ROOT / "solutions" / NAME, as_version=4)
    answers = {}
    for cell in master.cells:
        ex = student_version.exercise_id(cell)
        if cell.cell_type == "code" and ex in SOLVED:
            lines = cell.source.split("\n")
            markers = {student_version.BEGIN_SOLUTION, student_version.END_SOLUTION}
            answers[ex] = "\n".join(x for x in lines if x.strip() not in markers)
    nb = nbformat.read(ROOT / "exercises" / NAME, as_version=4)
    for cell in nb.cells:
        ex = student_version.exercise_id(cell)
        if cell.cell_type == "code" and ex in answers:
            cell.source = answers[ex]
    nbformat.write(nb, path)


def _colab(tmp_path) -> tuple[dict[str, str], os.PathLike]:
    """The environment and working folder of a Colab runtime after the setup cell."""
    site = (
        tmp_path / "dist-packages"
    )  # what pip installs: the package, not the checkout
    shutil.copytree(
        ROOT / "course_utils",
        site / "course_utils",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    content, home, bin_ = tmp_path / "content", tmp_path / "root", tmp_path / "bin"
    for folder in (content, home, bin_):
        folder.mkdir()
    env = {
        "COLAB_RELEASE_TAG": "release-colab_20261201-060000_RC00",  # hosted.runtime_name
        "PYTHONPATH": str(site),
        "HOME": str(home),
        "PATH": str(bin_),  # no bwrap, as on Colab: course check runs unsandboxed
        "LANG": "C.UTF-8",
    }
    return env, content


@pytest.mark.slow  # a kernel importing jax and torch: about 5 s
def test_course_check_grades_a_lone_notebook_with_the_installed_package(tmp_path):
    env, content = _colab(tmp_path)
    _solved(content / NAME)
    where = subprocess.run(
        [sys.executable, "-c", "import course_utils; print(course_utils.__file__)"],
        env=env, cwd=content, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert where.stdout.startswith(str(tmp_path / "dist-packages")), where.stdout
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_utils.cli",
            "check",
            NAME,
        ],  # as the notebook's line
        env=env,
        cwd=content,
        capture_output=True,
        text=True,
        timeout=load.stretched(300),
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # one exercise is not done
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines()[1:4]}
    assert rows == {
        "sync-timer": ["2/2", "passed"],
        "port-mlp": ["0/2", "not"],
        "break-even": ["2/2", "passed"],
    }, out
    assert "visible tests: 4 / 6 points" in out
    assert sorted(os.listdir(content)) == [NAME]  # nothing left beside it


def test_a_missing_notebook_on_colab_says_how_to_make_it_a_file(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    assert course_main(["check", NAME]) == 2
    assert "Download .ipynb" not in capsys.readouterr().err  # elsewhere: the file only
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab_20261201-060000_RC00")
    assert course_main(["check", NAME]) == 2
    err = capsys.readouterr().err
    assert f"NOTEBOOK {NAME}: no such file; on Colab" in err
    assert "File → Download → Download .ipynb" in err and err.count("\n") == 1
