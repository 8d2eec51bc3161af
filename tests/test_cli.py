import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils import cli

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "course_utils.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )


def test_help_lists_the_commands():
    out = run_cli("--help")
    assert out.returncode == 0
    for verb in ("doctor", "run", "sync", "build-exercises"):
        assert verb in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["run", "not_a_lesson"],
            "unknown notebook 'not_a_lesson'; lessons: 00_welcome_and_setup",
        ),
        (["run", "--timeout", "soon"], "expected a number of seconds"),
        (["run", "--timeout", "-1"], "must be positive"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["sync", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(args, message):
    out = run_cli(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("course: error: ") and message in lines[0]
    assert "Traceback" not in out.stderr


def test_sync_and_build_exercises_check_pass_on_the_repository(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    # In this process: `course --help` above starts the command as a process already.
    assert cli.main(["sync", "--check"]) == 0, capsys.readouterr()
    assert cli.main(["build-exercises", "--check"]) == 0, capsys.readouterr()


@pytest.fixture
def no_sync_check(monkeypatch):
    """The doctor without its pairing check (test_doctor_reports_both_frameworks and
    the sync test run it): the device tests below read only the device's lines."""
    from course_utils.tooling import notebooks

    monkeypatch.setattr(notebooks, "sync", lambda root, check=False: [])


def test_doctor_reports_both_frameworks(capsys):
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert "jax" in out and "torch" in out and "accelerator" in out
    assert code in (0, 1)
    if code == 0:
        assert "Everything the course needs is in place." in out


@pytest.mark.parametrize(
    "cuda, torch_cuda, fix",
    [
        (True, "13.0", "jax[cuda13]"),  # PyTorch on the GPU, JAX a CPU install
        (True, "12.6", "jax[cuda12]"),
    ],
)
def test_doctor_fails_when_the_frameworks_disagree_on_the_device(
    monkeypatch, capsys, no_sync_check, cuda, torch_cuda, fix
):
    import torch

    from course_utils import env

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "Fake GPU")
    monkeypatch.setattr(torch.version, "cuda", torch_cuda)
    monkeypatch.setattr(env, "_jax_cuda_plugin", lambda: None)
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert code == 1
    assert "To fix:" in out and fix in out


def test_doctor_flags_a_cpu_torch_next_to_a_gpu_jax(monkeypatch, capsys, no_sync_check):
    from course_utils import env

    real = env.report

    def fake_report(include_frameworks=True):
        rep = real(include_frameworks)
        rep.info.update(jax_device_kind="gpu", accelerator="gpu")
        rep.info["device_problem"] = env.device_problem("gpu", "cpu", torch_cuda=None)
        return rep

    monkeypatch.setattr(env, "report", fake_report)
    assert cli.main(["doctor"]) == 1
    assert "CPU-only build" in capsys.readouterr().out


@pytest.mark.slow
def test_run_executes_and_summarises(tmp_path):
    # A notebook of two cells: what `course run` does with it is what it does with a
    # lesson (the lessons themselves run under nbval in `make test`).
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("SMOKE = None"),
        nbformat.v4.new_code_cell(
            "import os\nassert SMOKE is True and os.environ['COURSE_SMOKE'] == '1'"
        ),
    ]
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook = tmp_path / "tiny.ipynb"
    nbformat.write(nb, notebook)
    out_dir = tmp_path / "out"
    smoke_off = {**os.environ, "COURSE_SMOKE": "0"}  # --smoke alone turns it on
    out = run_cli("run", str(notebook), "--smoke", "--out", str(out_dir), env=smoke_off)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{notebook}  ok" in out.stdout
    assert "1 of 1 notebooks ran without error" in out.stdout
    assert (out_dir / "tiny.ipynb").exists()
