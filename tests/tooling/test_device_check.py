"""course check-device: steps, budget, the report written as it goes, the CLI (with fakes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_utils.tooling import (
    cli,
    device_check,
    device_report,
    device_run,
    device_steps,
)
from course_utils.tooling.device_budget import SKIPPED_BUDGET, STOPPED_BUDGET
from course_utils.tooling.device_run import Check, Options, Tools
from course_utils.tooling.runner import Result

ROOT = Path(__file__).resolve().parents[2]
CLAIMS_JSON = {
    "smoke": False,
    "machine": {"device": {"kind": "gpu"}},
    "claims": [{"id": "x"}],
}


class Fakes:
    """Every tool of the check, faked: a clock that each step advances, and a call log."""

    def __init__(
        self,
        root: Path,
        *,
        smoke=None,
        full=None,
        accelerator="gpu",
        step_seconds=1.0,
        tests_seconds=1.0,
        claims_seconds=1.0,
    ):
        self.root = root
        self.t = 0.0
        self.calls: list[tuple] = []
        self.smoke = smoke or {}  # stem -> (status, seconds)
        self.full = full or {}
        self.accelerator = accelerator
        self.step_seconds = step_seconds
        self.tests_seconds = tests_seconds
        self.claims_seconds = claims_seconds
        self.snapshots: dict[str, dict] = {}

    def clock(self) -> float:
        return self.t

    def _seen(self, name: str, out: Path) -> None:
        """What the report on disk says when step ``name`` starts."""
        self.snapshots[name] = json.loads(out.read_text())

    def tools(self, out: Path) -> Tools:
        def probe(root, timeout):
            self.calls.append(("probe", timeout))
            return {
                "host": {
                    "accelerator": self.accelerator,
                    "jax_backend": "cpu",
                    "torch_device": "cpu",
                    "gpu_name": "NVIDIA H100 80GB HBM3",
                    "env": {"jax": "0.10.2", "torch": "2.13.0"},
                },
                "torch_cuda": {"cuda": "13.0", "cudnn": 91900},
            }

        def versions(torch_cuda):
            self.calls.append(("versions",))
            return {"jax": "0.10.2", **{f"torch_{k}": v for k, v in torch_cuda.items()}}

        def install(root, work, wheels, timeout):
            self.calls.append(("install", wheels, timeout))
            self._seen("install", out)
            self.t += self.step_seconds
            return {"ok": True, "exit_code": 0, "kept": ["torch==2.13.0"]}

        def doctor(root, timeout):
            self.calls.append(("doctor", timeout))
            self._seen("doctor", out)
            self.t += self.step_seconds
            return {"ok": True, "exit_code": 0, "output": "Everything ..."}

        def run_notebooks(nbs, *, root, smoke, timeout, out_dir, progress):
            (nb,) = nbs
            mode = "smoke" if smoke else "full"
            self.calls.append((mode, nb.stem, timeout, self.t))
            self._seen(f"{mode}:{nb.stem}", out)
            status, seconds = (self.smoke if smoke else self.full).get(
                nb.stem, ("ok", 1.0)
            )
            if seconds > timeout:
                status, seconds = "timeout", timeout
            self.t += seconds
            error = "ValueError: boom" if status == "failed" else ""
            return [
                Result(
                    str(nb),
                    status,
                    seconds,
                    cell=3 if error else None,
                    error=error,
                    output="line 1\nValueError: boom" if error else "",
                )
            ]

        def tests(root, work, timeout):
            self.calls.append(("tests", timeout))
            self._seen("tests", out)
            seconds = self.tests_seconds
            if timeout is not None and seconds > timeout:
                self.t += timeout
                return {"ok": False, "exit_code": None, "output": "did not finish"}
            self.t += seconds
            return {"ok": True, "exit_code": 0, "tests": 36, "failures": 0}

        def claims(root, work, smoke, timeout):
            self.calls.append(("claims", smoke, timeout))
            self._seen("claims", out)
            self.t += self.claims_seconds
            return {
                "ok": True,
                "exit_code": 0,
                "json": json.loads(json.dumps(CLAIMS_JSON)),
            }

        return Tools(
            probe=probe,
            versions=versions,
            install=install,
            doctor=doctor,
            run_notebooks=run_notebooks,
            tests=tests,
            claims=claims,
            clock=self.clock,
        )

    def names(self) -> list[str]:
        return [
            c[0] if c[0] not in ("smoke", "full") else f"{c[0]}:{c[1]}"
            for c in self.calls
        ]


def lessons(root: Path, *stems: str) -> list[Path]:
    (root / "notebooks").mkdir(exist_ok=True)
    return [root / "notebooks" / f"{s}.ipynb" for s in stems]


def make(tmp_path, fakes=None, *, stems=("00_a", "01_b"), **opts):
    fakes = fakes or Fakes(tmp_path)
    out = tmp_path / "build" / "report.json"
    options = Options(out=out, lessons=lessons(tmp_path, *stems), **opts)
    return Check(tmp_path, options, fakes.tools(out)), fakes, out


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


def test_report_name_is_date_and_device():
    report = {
        "started": "2026-09-01T10:00:00+00:00",
        "host": {"gpu_name": "NVIDIA H100 80GB HBM3", "accelerator": "gpu"},
    }
    assert device_check.report_name(report) == "2026-09-01-nvidia-h100-80gb-hbm3.json"
    report["host"] = {"gpu_name": None, "accelerator": "tpu"}
    assert device_check.report_name(report) == "2026-09-01-tpu.json"


KILLED = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from course_utils.tooling import device_check
from course_utils.tooling.runner import Result

root = Path({tmp!r})
out = root / "build" / "report.json"

def run_notebooks(nbs, *, root, smoke, timeout, out_dir, progress):
    if nbs[0].stem == "01_b":
        time.sleep(120)
    return [Result(str(nbs[0]), "ok", 1.0)]

tools = device_check.Tools(
    probe=lambda root, timeout: {{"host": {{"accelerator": "gpu"}}}},
    versions=lambda cuda: {{}},
    doctor=lambda root, timeout: {{"ok": True, "exit_code": 0}},
    run_notebooks=run_notebooks,
)
lessons = [root / "notebooks" / "00_a.ipynb", root / "notebooks" / "01_b.ipynb"]
opts = device_check.Options(out=out, lessons=lessons, install=False)
sys.exit(device_check.Check(root, opts, tools).run())
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


# -------------------------------------------------------------- real steps


class Dist:
    def __init__(self, name, version):
        self.metadata = {"Name": name}
        self.version = version


DISTS = [
    Dist("torch", "2.11.0+cu128"),
    Dist("jax", "0.7.2"),
    Dist("jaxlib", "0.7.2"),
    Dist("jax_cuda12_plugin", "0.7.2"),
    Dist("jax-cuda12-pjrt", "0.7.2"),
    Dist("libtpu", "0.0.21.1"),
    Dist("torch_xla", "2.9.0"),
    Dist("flax", "0.11.2"),
    Dist("torchvision", "0.26.0"),
    Dist("jaxtyping", "0.3.2"),
    Dist("optax", "0.2.8"),
]


def test_pins_keep_the_frameworks_and_plugins_and_nothing_else(monkeypatch):
    monkeypatch.setattr(device_steps.metadata, "distributions", lambda: DISTS)
    assert device_steps.pins() == [
        "jax-cuda12-pjrt==0.7.2",
        "jax-cuda12-plugin==0.7.2",
        "jax==0.7.2",
        "jaxlib==0.7.2",
        "libtpu==0.0.21.1",
        "torch-xla==2.9.0",
        "torch==2.11.0+cu128",
        "torchvision==0.26.0",  # built against that torch: kept with it
    ]


def test_versions_list_plugins_and_what_torch_says_of_cuda(monkeypatch):
    monkeypatch.setattr(device_steps.metadata, "distributions", lambda: DISTS)
    v = device_steps.versions({"cuda": "12.8", "cudnn": 91002})
    assert (v["jax"], v["flax"], v["torch"], v["orbax-checkpoint"]) == (
        "0.7.2",
        "0.11.2",
        "2.11.0+cu128",
        None,
    )
    assert v["jax_plugins"] == {
        "jax-cuda12-pjrt": "0.7.2",
        "jax-cuda12-plugin": "0.7.2",
    }
    assert (v["libtpu"], v["torch_cuda"], v["torch_cudnn"]) == (
        "0.0.21.1",
        "12.8",
        91002,
    )
    assert v["python"].count(".") == 2


def test_install_pins_the_installed_builds_and_can_stay_offline(tmp_path, monkeypatch):
    monkeypatch.setattr(device_steps.metadata, "distributions", lambda: DISTS)
    seen = []

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.append(cmd)
        return 0, "Successfully installed"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_steps.install(ROOT, tmp_path, None, 100.0)
    assert result["ok"] and "torch==2.11.0+cu128" in result["kept"]
    cmd = seen[0]
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert cmd[cmd.index("-e") + 1] == f"{ROOT}[dev]"
    constraints = Path(cmd[cmd.index("--constraint") + 1])
    assert constraints.read_text().splitlines() == result["kept"]
    assert "--no-index" not in cmd
    device_steps.install(ROOT, tmp_path, tmp_path / "wheels", None)
    assert seen[1][-3:] == ["--no-index", "--find-links", str(tmp_path / "wheels")]


def test_claims_step_embeds_course_claims_json_and_picks_the_mode(
    tmp_path, monkeypatch
):
    seen = []

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.append((cmd, env["COURSE_SMOKE"]))
        folder = Path(cmd[cmd.index("--out") + 1])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "claims.json").write_text(json.dumps(CLAIMS_JSON))
        return 0, "3 claims"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_steps.claims(ROOT, tmp_path, True, 50.0)
    assert result["ok"] and result["json"] == CLAIMS_JSON
    assert seen[-1][0][3:5] == ["claims", "--out"] and seen[-1][0][-1] == "--smoke"
    assert seen[-1][1] == "1"
    device_steps.claims(ROOT, tmp_path, False, 50.0)
    assert "--smoke" not in seen[-1][0] and seen[-1][1] == "0"

    monkeypatch.setattr(
        device_steps, "run_command", lambda cmd, **kw: (None, "timeout")
    )
    result = device_steps.claims(ROOT, tmp_path, False, 50.0)
    assert not result["ok"] and result["json"] is None and result["exit_code"] is None


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"
errors="1" failures="1" skipped="0" tests="3"><testcase classname="notebooks.00_a.ipynb"
name="Cell 4"><failure message="AssertionError: parity&#10;more"/></testcase><testcase
classname="notebooks.01_b.ipynb" name="Cell 1"/><testcase classname="solutions.x.ipynb"
name="Cell 2"><error message="kernel died"/></testcase></testsuite></testsuites>"""


def test_notebook_tests_run_nbval_in_smoke_mode_and_count_results(
    tmp_path, monkeypatch
):
    seen = {}

    def fake_run(cmd, *, timeout, cwd, env=None):
        seen.update(cmd=cmd, timeout=timeout, smoke=env["COURSE_SMOKE"])
        Path(
            cmd[[c.startswith("--junitxml") for c in cmd].index(True)].split("=", 1)[1]
        ).write_text(JUNIT)
        return 1, "1 failed, 1 passed, 1 error"

    monkeypatch.setattr(device_steps, "run_command", fake_run)
    result = device_steps.notebook_tests(ROOT, tmp_path, 200.0)
    assert seen["smoke"] == "1" and seen["timeout"] == 200.0
    assert "--nbval-lax" in seen["cmd"] and seen["cmd"][-2:] == [
        "notebooks",
        "solutions",
    ]
    assert "--nbval-cell-timeout=200" in seen["cmd"]
    assert not result["ok"]
    assert (result["tests"], result["failures"], result["errors"]) == (3, 1, 1)
    assert result["failing"] == [
        "notebooks.00_a.ipynb::Cell 4: AssertionError: parity",
        "solutions.x.ipynb::Cell 2: kernel died",
    ]


def test_a_probe_that_crashes_reports_an_unknown_accelerator(monkeypatch):
    monkeypatch.setattr(
        device_steps,
        "run_command",
        lambda cmd, **kw: (1, "Traceback\nRuntimeError: CUDA init failed"),
    )
    got = device_steps.probe_in_child(ROOT, 10.0)
    assert got["host"]["accelerator"] == "unknown"
    assert "CUDA init failed" in got["host"]["error"]


def test_run_command_stops_what_runs_past_its_timeout(tmp_path):
    start = time.monotonic()
    code, out = device_steps.run_command(
        [sys.executable, "-u", "-c", "import time; print('started'); time.sleep(60)"],
        timeout=2.0,
        cwd=tmp_path,
    )
    assert code is None and out.splitlines() == ["started", "did not finish within 2 s"]
    assert time.monotonic() - start < 20


# ----------------------------------------------------------------------- CLI


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


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_real_run_of_doctor_and_one_smoke_lesson(tmp_path):
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "course_utils.tooling.cli",
            "check-device",
            "--no-install",
            "--steps",
            "doctor,smoke",
            "--lesson",
            "00",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=580,
        env={**os.environ, "COURSE_SMOKE": "0"},
    )
    report = json.loads(out.read_text())
    assert report["complete"] is True
    assert report["host"]["accelerator"] in ("cpu", "gpu", "tpu")
    assert report["versions"]["jax"] == device_steps.versions()["jax"]
    assert report["steps"]["doctor"]["exit_code"] in (0, 1)
    assert "accelerator" in report["steps"]["doctor"]["output"]
    (nb,) = report["notebooks"]
    assert (nb["notebook"], nb["mode"]) == (
        "notebooks/00_welcome_and_setup.ipynb",
        "smoke",
    )
    assert nb["status"] == "ok", nb
    assert proc.returncode == report["exit_code"], proc.stdout + proc.stderr
    assert (tmp_path / "executed" / "smoke" / "00_welcome_and_setup.ipynb").exists()


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
    assert (
        command
        == ".venv/bin/python -m course_utils.tooling.cli check-device --budget 60"
    )


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
    assert len(options) == 8
    missing = [o for o in options if f"`{o}" not in text]
    assert missing == []
    assert "docs/device-reports/<date>-<device>.json" in text


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
