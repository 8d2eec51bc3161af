"""``grade slurm``'s options on ``course grade``, and the ``release`` and ``gradescope``
commands as the ``course`` command parses them."""

from __future__ import annotations

import pytest

from course_utils.cli import main
from tests.grading.helpers import MASTER


def test_grade_slurm_without_sbatch_says_where_to_run_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "subs").mkdir()
    argv = ["grade", "slurm", str(tmp_path / "subs"), "--source", str(MASTER)]
    argv += ["--out", str(tmp_path / "out"), "--tasks", "2"]
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(argv) == 2
    assert "sbatch not found" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["grade", "subs", "--out", "o", "--tasks", "2"], "only with grade slurm"),
        (["grade", "slurm", "--out", "o", "--tasks", "2"], "name one SUBMISSIONS"),
        (["grade", "slurm", "subs", "--out", "o"], "--tasks N are required"),
        (
            [
                "grade",
                "slurm",
                "s",
                "--source",
                "m",
                "--out",
                "o",
                "--tasks",
                "2",
                "--jobs",
                "4",
            ],
            "instead of --shard and --jobs",
        ),
        (
            [
                "grade",
                "slurm",
                "s",
                "--source",
                "m",
                "--out",
                "o",
                "--tasks",
                "2",
                "--only",
                "x",
            ],
            "grade slurm: --only: not with slurm",
        ),
    ],
)
def test_grade_slurm_options_are_checked(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
