"""course_utils.tooling.device_run: the steps in order, the budget, the report written as it goes (with fakes)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_utils.tooling import device_report, device_run
from course_utils.tooling.device_budget import SKIPPED_BUDGET, STOPPED_BUDGET
from tests.tooling.device_fakes import CLAIMS_JSON, Fakes, make

ROOT = Path(__file__).resolve().parents[2]


def test_every_step_runs_in_order_and_lands_in_one_report(tmp_path):
    check, fakes, out = make(tmp_path)
    assert check.run() == 0
    assert fakes.names() == [
        "probe",
        "versions",
        "install",
        "versions",
        "doctor",
        "smoke:00_a",
        "smoke:01_b",
        "full:00_a",
        "full:01_b",
        "tests",
        "claims",
    ]
    report = json.loads(out.read_text())
    assert report["schema_version"] == device_report.SCHEMA_VERSION
    assert report["status"] == "passed" and report["complete"] is True
    assert report["exit_code"] == 0 and report["finished"] >= report["started"]
    assert report["host"]["accelerator"] == "gpu"
    assert report["versions"] == {
        "jax": "0.10.2",
        "torch_cuda": "13.0",
        "torch_cudnn": 91900,
    }
    assert list(report["steps"]) == [
        "install",
        "doctor",
        "smoke",
        "full",
        "tests",
        "claims",
    ]
    assert all(s["status"] == "ok" for s in report["steps"].values())
    assert report["steps"]["install"]["kept"] == ["torch==2.13.0"]
    assert report["steps"]["tests"]["tests"] == 36
    assert [(n["notebook"], n["mode"]) for n in report["notebooks"]] == [
        ("notebooks/00_a.ipynb", "smoke"),
        ("notebooks/01_b.ipynb", "smoke"),
        ("notebooks/00_a.ipynb", "full"),
        ("notebooks/01_b.ipynb", "full"),
    ]
    # course claims' JSON is embedded as it is, whatever fields it has
    assert report["claims"] == CLAIMS_JSON
    assert report["steps"]["claims"]["mode"] == "full"
    assert ("claims", False, None) in fakes.calls
    assert not list(out.parent.glob("*.tmp"))


def test_each_step_is_on_disk_before_the_next_one_starts(tmp_path):
    check, fakes, _ = make(tmp_path)
    check.run()
    seen = fakes.snapshots
    assert seen["install"]["steps"]["install"]["status"] == "running"
    assert seen["install"]["host"]["accelerator"] == "gpu"
    assert seen["doctor"]["steps"]["install"]["status"] == "ok"
    assert seen["smoke:01_b"]["notebooks"][0]["status"] == "ok"
    assert seen["full:00_a"]["steps"]["smoke"]["status"] == "ok"
    assert len(seen["tests"]["notebooks"]) == 4
    assert seen["claims"]["steps"]["tests"]["status"] == "ok"
    assert all(
        s["complete"] is False and s["status"] == "running" for s in seen.values()
    )


def test_a_failing_lesson_fails_the_check_and_the_rest_still_runs(tmp_path):
    fakes = Fakes(tmp_path, smoke={"00_a": ("failed", 2.0)})
    check, fakes, out = make(tmp_path, fakes)
    assert check.run() == 1
    report = json.loads(out.read_text())
    assert report["status"] == "failed"
    assert report["steps"]["smoke"]["status"] == "failed"
    assert report["steps"]["smoke"]["counts"] == {"failed": 1, "ok": 1}
    bad = report["notebooks"][0]
    assert (bad["status"], bad["cell"], bad["error"]) == (
        "failed",
        3,
        "ValueError: boom",
    )
    assert bad["output_tail"].endswith("ValueError: boom")
    assert "claims" in fakes.names() and report["steps"]["claims"]["status"] == "ok"


def test_a_step_that_raises_is_recorded_and_the_next_runs(tmp_path):
    check, fakes, out = make(tmp_path)

    def broken(root, timeout):
        raise RuntimeError("doctor exploded")

    check.tools.doctor = broken
    assert check.run() == 1
    report = json.loads(out.read_text())
    assert report["steps"]["doctor"] == {
        **report["steps"]["doctor"],
        "status": "failed",
        "error": "RuntimeError: doctor exploded",
    }
    assert report["steps"]["smoke"]["status"] == "ok"


def test_budget_estimates_full_runs_from_smoke_runs_and_skips_what_cannot_finish(
    tmp_path,
):
    # doctor 5 s; smoke 20 + 10 + 60 s; full runs take 3x their smoke time
    fakes = Fakes(
        tmp_path,
        step_seconds=5.0,
        tests_seconds=110.0,
        smoke={"00_a": ("ok", 20.0), "01_b": ("ok", 10.0), "02_c": ("ok", 60.0)},
        full={"00_a": ("ok", 60.0), "01_b": ("ok", 30.0), "02_c": ("ok", 180.0)},
    )
    check, fakes, out = make(
        tmp_path, fakes, stems=("00_a", "01_b", "02_c"), budget=300.0, install=False
    )
    assert check.run() == 0
    runs = {(c[0], c[1]): c for c in fakes.calls if c[0] in ("smoke", "full")}
    # each runner call gets the time left (or the per-notebook limit, if smaller)
    for _mode, _stem, timeout, started in runs.values():
        assert timeout == pytest.approx(min(900.0, 300.0 - started))
    report = json.loads(out.read_text())
    full = {
        Path(n["notebook"]).stem: n for n in report["notebooks"] if n["mode"] == "full"
    }
    # 00_a: no full run seen yet, so 4x its smoke time (80 s) against 205 s left
    assert full["00_a"]["estimate_seconds"] == 80.0 and full["00_a"]["status"] == "ok"
    # then the measured ratio (3x): 30 s against 145 s left, and 180 s against 115 s left
    assert full["01_b"]["estimate_seconds"] == 30.0 and full["01_b"]["status"] == "ok"
    assert full["02_c"]["estimate_seconds"] == 180.0
    assert full["02_c"]["status"] == SKIPPED_BUDGET and ("full", "02_c") not in runs
    assert report["steps"]["full"]["counts"] == {"ok": 2, SKIPPED_BUDGET: 1}
    # the tests get the 115 s left; they take 110, so 5 s are left: claims are skipped
    assert ("tests", 115.0) in fakes.calls
    assert "claims" not in fakes.names()
    assert report["steps"]["claims"]["status"] == SKIPPED_BUDGET
    assert report["claims"] is None
    assert report["budget_left_seconds"] == 5.0


def test_budget_spent_during_smoke_mode_still_gives_a_complete_report(tmp_path):
    fakes = Fakes(
        tmp_path, smoke={s: ("ok", 25.0) for s in ("00_a", "01_b", "02_c", "03_d")}
    )
    check, fakes, out = make(
        tmp_path,
        fakes,
        stems=("00_a", "01_b", "02_c", "03_d"),
        budget=62.0,
        install=False,
    )
    assert check.run() == 0
    report = json.loads(out.read_text())
    status = [
        (Path(n["notebook"]).stem, n["mode"], n["status"]) for n in report["notebooks"]
    ]
    # doctor 1 s, two lessons (51 s), the third stopped at 62 s, the fourth not started
    assert status[:4] == [
        ("00_a", "smoke", "ok"),
        ("01_b", "smoke", "ok"),
        ("02_c", "smoke", STOPPED_BUDGET),
        ("03_d", "smoke", SKIPPED_BUDGET),
    ]
    assert all(s == SKIPPED_BUDGET for _, mode, s in status if mode == "full")
    assert report["steps"]["full"]["status"] == SKIPPED_BUDGET
    assert report["steps"]["tests"]["status"] == SKIPPED_BUDGET
    assert report["steps"]["claims"]["status"] == SKIPPED_BUDGET
    assert [n for n in fakes.names() if n in ("tests", "claims")] == []
    assert report["complete"] is True and report["status"] == "passed"


def test_a_lesson_hitting_its_own_timeout_under_a_budget_is_a_failure(tmp_path):
    fakes = Fakes(tmp_path, smoke={"00_a": ("ok", 50.0)})
    check, fakes, out = make(
        tmp_path, fakes, stems=("00_a",), budget=1000.0, install=False, timeout=30.0
    )
    assert check.run() == 1
    report = json.loads(out.read_text())
    assert report["notebooks"][0]["status"] == "timeout"


def test_claims_run_in_smoke_mode_unless_every_full_lesson_ran(tmp_path):
    check, fakes, out = make(tmp_path, steps=("smoke", "claims"), install=False)
    assert check.run() == 0
    assert fakes.names() == ["probe", "versions", "smoke:00_a", "smoke:01_b", "claims"]
    assert ("claims", True, None) in fakes.calls
    report = json.loads(out.read_text())
    assert list(report["steps"]) == ["smoke", "claims"]
    assert report["steps"]["claims"]["mode"] == "smoke"


def test_ctrl_c_during_a_lesson_stops_the_check_and_says_so(tmp_path):
    fakes = Fakes(tmp_path, smoke={"00_a": ("interrupted", 0.0)})
    check, fakes, out = make(tmp_path, fakes, install=False)
    assert check.run() == 130
    report = json.loads(out.read_text())
    assert report["status"] == "interrupted" and report["complete"] is True
    assert report["steps"]["smoke"]["status"] == "interrupted"
    assert report["steps"]["claims"]["status"] == "not run: interrupted"
    assert "smoke:01_b" not in fakes.names() and "tests" not in fakes.names()


def test_require_accelerator_stops_before_installing_anything(tmp_path, capsys):
    fakes = Fakes(tmp_path, accelerator="cpu")
    check, fakes, out = make(tmp_path, fakes, require_accelerator=True)
    assert check.run() == 1
    assert fakes.names() == ["probe", "versions"]
    report = json.loads(out.read_text())
    assert report["status"] == "no accelerator" and report["complete"] is True
    err = capsys.readouterr().err.strip()
    assert err.startswith("course: error: --require-accelerator: no GPU or TPU in use")
    assert "jax uses cpu, torch uses cpu" in err


def test_no_accelerator_message_names_unused_hardware_and_missing_frameworks():
    msg = device_run.no_accelerator_message(
        {
            "nvidia_smi_gpu": True,
            "jax_backend": "cpu",
            "torch_device": "cpu",
            "env": {"jax": "0.10.2", "torch": "2.13.0"},
        }
    )
    assert "an NVIDIA GPU answers nvidia-smi, but neither framework uses it" in msg
    assert "docs/DEVICE_CHECK.md" in msg
    msg = device_run.no_accelerator_message({"env": {}, "tpu_host": True})
    assert "jax uses nothing (jax is not installed)" in msg
    assert "this looks like a TPU host" in msg


KILLED = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from course_utils.tooling import device_run
from course_utils.tooling.runner import Result

root = Path({tmp!r})
out = root / "build" / "report.json"

def run_notebooks(nbs, *, root, smoke, timeout, out_dir, progress):
    if nbs[0].stem == "01_b":
        time.sleep(120)
    return [Result(str(nbs[0]), "ok", 1.0)]

tools = device_run.Tools(
    probe=lambda root, timeout: {{"host": {{"accelerator": "gpu"}}}},
    versions=lambda cuda: {{}},
    doctor=lambda root, timeout: {{"ok": True, "exit_code": 0}},
    run_notebooks=run_notebooks,
)
lessons = [root / "notebooks" / "00_a.ipynb", root / "notebooks" / "01_b.ipynb"]
opts = device_run.Options(out=out, lessons=lessons, install=False)
sys.exit(device_run.Check(root, opts, tools).run())
"""


def test_killed_in_the_middle_leaves_a_valid_report(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(KILLED.format(root=str(ROOT), tmp=str(tmp_path)))
    out = tmp_path / "build" / "report.json"
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and json.loads(out.read_text())["notebooks"]:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    report = json.loads(out.read_text())
    assert report["complete"] is False and report["status"] == "running"
    assert report["steps"]["doctor"]["status"] == "ok"
    assert report["steps"]["smoke"]["status"] == "running"
    assert report["steps"]["claims"]["status"] == "pending"
    assert [n["status"] for n in report["notebooks"]] == ["ok"]


@pytest.mark.parametrize(
    "budget, status", [(None, "failed"), (1000.0, "failed"), (100.0, STOPPED_BUDGET)]
)
def test_a_step_timing_out_fails_unless_the_budget_shortened_its_limit(
    tmp_path, budget, status
):
    check, fakes, out = make(tmp_path, steps=("doctor",), install=False, budget=budget)
    limits = []

    def slow_doctor(root, timeout):
        limits.append(timeout)
        fakes.t += timeout
        return {"ok": False, "exit_code": None, "output": "did not finish"}

    check.tools.doctor = slow_doctor
    assert check.run() == (1 if status == "failed" else 0)
    assert limits == [300.0 if budget != 100.0 else 100.0]
    assert json.loads(out.read_text())["steps"]["doctor"]["status"] == status
