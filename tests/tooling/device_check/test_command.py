"""course_utils.tooling.device_check.command: the command's arguments, what it prints, make and the workflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_utils import cli
from course_utils.tooling.device_check import command as device_check
from course_utils.tooling.device_check import probe as device_probe
from tests.tooling.device_check.fakes import Fakes

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--steps", "doctor,bogus"], "unknown step 'bogus'; steps: doctor,smoke,full"),
        (["--steps", ","], "no steps given"),
        (["--budget", "-5"], "must be positive"),
        (["--budget", "soon"], "expected a number of seconds"),
        (["--wheels", "/no/such/folder"], "--wheels /no/such/folder: no such folder"),
        (["--wheels", ".", "--no-install"], "--wheels is for the install step"),
        (["--out", "."], "is a folder; give a file name"),
        (["--lesson", "99_nothing"], "unknown notebook '99_nothing'"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(args, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert cli.main(["check-device", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("course: error: ") and message in err[0]


def test_the_command_parses_its_options_and_prints_where_the_report_is(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(ROOT)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    out = tmp_path / "r" / "report.json"
    args = cli.build_parser().parse_args(
        [
            "check-device",
            "--out",
            str(out),
            "--budget",
            "600",
            "--wheels",
            str(wheels),
            "--steps",
            "claims,doctor",
            "--lesson",
            "00",
            "--timeout",
            "120",
        ]
    )
    opts = device_check.options_from_args(args, ROOT)
    assert opts.steps == ("doctor", "claims")  # always in the check's own order
    assert (opts.budget, opts.timeout, opts.install) == (600.0, 120.0, True)
    assert opts.wheels == wheels and opts.out == out
    assert [p.name for p in opts.lessons] == ["00_welcome_and_setup.ipynb"]
    fakes = Fakes(ROOT)
    assert device_check.cmd_check_device(args, fakes.tools(out)) == 0
    assert ("install", wheels, 600.0) in fakes.calls
    text = capsys.readouterr().out
    assert f"report in {out}" in text
    assert "to record it: cp" in text and "-nvidia-h100-80gb-hbm3.json" in text
    assert json.loads(out.read_text())["options"]["wheels"] == str(wheels)


def test_help_lists_check_device():
    assert "check-device" in cli.build_parser().format_help()


def _tiny_course(root: Path) -> None:
    """A checkout of one lesson, its master and its student notebook, each a cell that
    checks it runs in smoke mode; the package is this one (a link to it)."""
    import nbformat

    check = "import os\nassert os.environ['COURSE_SMOKE'] == '1'\nprint('{}')"
    for rel in (
        "notebooks/00_tiny.ipynb",
        "solutions/00_tiny_exercises.ipynb",
        "exercises/00_tiny_exercises.ipynb",
    ):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(check.format(rel))]
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, root / rel)
    (root / "course_utils").symlink_to(ROOT / "course_utils", target_is_directory=True)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_real_run_of_doctor_and_one_smoke_lesson(tmp_path):
    # The command as a process, its real doctor and probe, and real kernels for a tiny
    # lesson (the course's lessons run under nbval in `make test`).
    root = tmp_path / "course"
    _tiny_course(root)
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_utils.cli",
            "check-device",
            "--no-install",
            "--steps",
            "doctor,smoke",
            "--lesson",
            "00",
            "--out",
            str(out),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=580,
        env={**os.environ, "COURSE_SMOKE": "0"},
    )
    report = json.loads(out.read_text())
    assert report["complete"] is True
    assert report["host"]["accelerator"] in ("cpu", "gpu", "tpu")
    assert report["versions"]["jax"] == device_probe.versions()["jax"]
    assert report["steps"]["doctor"]["exit_code"] in (0, 1)
    assert "accelerator" in report["steps"]["doctor"]["output"]
    # the lesson, its master and its student notebook, side by side
    names = sorted(n["notebook"] for n in report["notebooks"])
    assert names == [
        "exercises/00_tiny_exercises.ipynb",
        "notebooks/00_tiny.ipynb",
        "solutions/00_tiny_exercises.ipynb",
    ]
    assert {n["mode"] for n in report["notebooks"]} == {"smoke"}
    assert all(n["status"] == "ok" for n in report["notebooks"]), report["notebooks"]
    assert proc.returncode == report["exit_code"], proc.stdout + proc.stderr
    executed = tmp_path / "executed" / "smoke"
    for name, copy in zip(names, [names[0], "00_tiny.ipynb", names[2]], strict=True):
        assert name in (executed / copy).read_text(), copy  # its own cell ran


# ----------------------------------------------------- make, workflow, docs


def test_make_gpu_check_runs_check_device_with_the_venv_python():
    # Under `make test` the outer make's flags would leak in and add directory lines.
    # (and its command-line variables, such as VENV under `make test-versions`).
    leaks = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES", "VENV", "CHECK_ARGS")
    clean = {k: v for k, v in os.environ.items() if k not in leaks}
    out = subprocess.run(
        ["make", "--no-print-directory", "-n", "gpu-check", "CHECK_ARGS=--budget 60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean,
    )
    assert out.returncode == 0, out.stderr
    command = out.stdout.strip().splitlines()[-1]
    assert command == ".venv/bin/python -m course_utils.cli check-device --budget 60"


def test_the_workflow_runs_gpu_check_on_a_gpu_runner_by_hand_and_weekly():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github/workflows/device-check.yml").read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "workflow_dispatch" in on and on["schedule"][0]["cron"].endswith("* * 1")
    job = workflow["jobs"]["device-check"]
    assert job["runs-on"] == ["self-hosted", "gpu"]
    runs = [step.get("run", "") for step in job["steps"]]
    assert any(
        r.startswith("make gpu-check") and "--require-accelerator" in r for r in runs
    )
    (upload,) = [s for s in job["steps"] if "upload-artifact" in s.get("uses", "")]
    assert upload["if"] == "always()"  # a failed check still leaves its report
    assert "build/device-check/report.json" in upload["with"]["path"]


def test_the_docs_explain_every_option():
    text = (ROOT / "docs" / "DEVICE_CHECK.md").read_text()
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    options = [
        o
        for action in sub.choices["check-device"]._actions
        for o in action.option_strings
        if o.startswith("--") and o != "--help"
    ]
    assert len(options) == 12
    missing = [o for o in options if f"`{o}" not in text]
    assert missing == []
    assert "docs/device-reports/<date>-<device>.json" in text


def test_the_plan_for_one_h200_fits_everything_in_600_s(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = ["--budget", "600", "--cores", "16", "--gpu-memory", "139", "--no-install"]
    assert cli.main(["check-device", *args, "--plan"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "check-device plan: budget 600 s, 16 cores, GPU memory 139 GiB"
    rows = lines[2:-1]
    keys = [row.split()[-1] for row in rows]
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    expected = (
        [f"{m}:notebooks/{n}" for n in lessons for m in ("smoke", "full", "tests")]
        + [
            f"smoke:{d}/{p.name}"
            for d in ("solutions", "exercises")
            for p in sorted((ROOT / d).glob("*.ipynb"))
        ]
        + [
            f"tests:solutions/{p.name}"
            for p in sorted((ROOT / "solutions").glob("*.ipynb"))
        ]
        + ["doctor", "claims"]
    )
    assert sorted(keys) == sorted(expected) and len(lessons) == 13
    for row in rows:
        start, end, estimate = (float(x) for x in row.split()[:3])
        assert start >= 0 and abs(end - start - estimate) < 0.2
        assert end <= 600.0, row
    wall = float(lines[-1].split()[2])
    assert wall <= 600.0 and lines[-1].endswith("0 skipped")
    assert lines[-1].startswith(f"predicted wall: {wall:.1f} s of the 600 s budget")


def test_the_plan_runs_nothing_and_names_what_would_be_cut(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(ROOT)
    report = tmp_path / "report.json"
    args = ["--budget", "120", "--cores", "2", "--out", str(report), "--plan"]
    assert cli.main(["check-device", *args]) == 0
    out = capsys.readouterr().out
    assert "install (alone)" in out  # the install step comes first, by itself
    assert "(skipped: budget)" in out  # full-mode lessons that cannot finish
    assert "(past the budget: would be stopped)" in out
    assert not report.exists()


def test_more_cores_than_this_process_has_is_an_error_unless_planning(
    capsys, monkeypatch
):
    monkeypatch.chdir(ROOT)
    assert cli.main(["check-device", "--cores", "100000"]) == 2
    assert "--cores 100000: this process may run on" in capsys.readouterr().err


def test_sigterm_stops_the_check_as_ctrl_c_does():
    import signal

    def run():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
        return 0

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        device_check._stoppable(run)
    assert signal.getsignal(signal.SIGTERM) == before
