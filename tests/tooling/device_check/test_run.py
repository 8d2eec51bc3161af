"""course_utils.tooling.device_check.run: install, then every item side by side, the report as it goes (fakes)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course_utils.tooling.device_check import report as device_report
from course_utils.tooling.device_check import run as device_run
from course_utils.tooling.device_check.budget import SKIPPED_BUDGET, STOPPED_BUDGET
from tests.tooling.device_check.fakes import CLAIMS_JSON, Fakes, make

ROOT = Path(__file__).resolve().parents[3]
A, B = "notebooks/00_a.ipynb", "notebooks/01_b.ipynb"


def test_every_item_runs_and_lands_in_one_report(tmp_path):
    check, fakes, out = make(tmp_path)
    assert check.run() == 0
    assert [c[0] for c in fakes.calls[:4]] == [
        "probe",
        "versions",
        "install",
        "versions",
    ]
    assert sorted(fakes.started()) == sorted(
        [f"{m}:{n}" for m in ("smoke", "full", "tests") for n in (A, B)]
        + ["doctor", "claims"]
    )
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
    assert report["steps"]["tests"]["tests"] == 6
    assert [r["notebook"] for r in report["steps"]["tests"]["runs"]] == [A, B]
    assert sorted((n["notebook"], n["mode"]) for n in report["notebooks"]) == [
        (A, "full"),
        (A, "smoke"),
        (B, "full"),
        (B, "smoke"),
    ]
    assert report["claims"] == CLAIMS_JSON  # embedded as it is
    assert report["steps"]["claims"]["mode"] == "smoke"
    assert report["schedule"]["cores"] == 4
    assert not list(out.parent.glob("*.tmp"))


def test_the_longest_items_start_first_side_by_side(tmp_path):
    # lesson 00's shipped estimates: full 161.2 s, smoke 40.3 s, tests 50.3 s; claims 95 s
    check, fakes, _ = make(tmp_path, stems=("00_a",), install=False)
    fakes.cores = 2
    check.run()
    first = [c for c in fakes.calls if c[0] not in ("probe", "versions")][:2]
    assert [c[0] for c in first] == [f"full:{A}", "claims"]
    assert [c[2] for c in first] == [0.0, 0.0]  # both at once, one core each
    assert {c[3] for c in first} == {(0,), (1,)}


def test_on_a_tpu_items_run_one_at_a_time_with_every_core(tmp_path):
    # Only one process at a time may open a TPU's chips (libtpu's lock).
    fakes = Fakes(tmp_path, accelerator="tpu", cores=4)
    check, fakes, out = make(tmp_path, fakes, install=False)
    assert check.run() == 0
    assert fakes.most_children == 1 and fakes.most_cores == 4
    report = json.loads(out.read_text())
    assert report["schedule"]["one_at_a_time"] is True
    started = fakes.started()
    assert started[:3] == ["doctor", f"smoke:{A}", f"smoke:{B}"]
    # A GPU shares: the same check runs side by side, unless told otherwise.
    (tmp_path / "gpu").mkdir()
    (tmp_path / "told").mkdir()
    gpu, fakes_gpu, out_gpu = make(tmp_path / "gpu", install=False)
    assert gpu.run() == 0 and fakes_gpu.most_children > 1
    assert json.loads(out_gpu.read_text())["schedule"]["one_at_a_time"] is False
    told, fakes_told, _ = make(tmp_path / "told", install=False, one_at_a_time=True)
    assert told.run() == 0 and fakes_told.most_children == 1


def test_concurrency_never_exceeds_the_cores_or_the_gpu_memory(tmp_path):
    stems = [f"{i:02d}_x" for i in range(6)]
    fakes = Fakes(tmp_path, cores=2, gpu_memory_gib=10.0)
    fakes.times = {
        f"smoke:notebooks/{s}.ipynb": ("ok", 3.0 + i) for i, s in enumerate(stems)
    }
    check, fakes, out = make(tmp_path, fakes, stems=stems, install=False)
    assert check.run() == 0
    assert fakes.most_cores == 2 and fakes.most_children == 2
    # full mode holds 8 GiB of the 10: beside it only a 1 GiB doctor fits, no 4 GiB smoke
    assert fakes.most_gib <= 10.0
    report = json.loads(out.read_text())
    assert report["schedule"]["gpu_memory_gib"] == 10.0
    assert len(report["notebooks"]) == 12


def test_the_report_is_rewritten_after_every_item(tmp_path, monkeypatch):
    written: list[int] = []
    real = device_report.write_json

    def spy(path, data):
        written.append(len(data["notebooks"]))
        real(path, data)

    monkeypatch.setattr(device_report, "write_json", spy)
    check, fakes, out = make(tmp_path, install=False)
    fakes.cores = 1  # one item at a time, so each start follows the previous end
    check.run()
    # each of the 4 notebooks is on disk as soon as it ends, one save per item at least
    for n in range(1, 5):
        assert n in written
    assert len(written) >= 8 + 2  # 8 items, the first save and the last
    seen = fakes.snapshots
    assert all(s["complete"] is False for s in seen.values())
    started = fakes.started()
    for i, key in enumerate(started):
        before = [k for k in started[:i] if k.split(":")[0] in ("smoke", "full")]
        assert len(seen[key]["notebooks"]) == len(before)


def test_a_failing_lesson_fails_the_check_and_the_rest_still_runs(tmp_path):
    fakes = Fakes(tmp_path, times={f"smoke:{A}": ("failed", 2.0)})
    check, fakes, out = make(tmp_path, fakes)
    assert check.run() == 1
    report = json.loads(out.read_text())
    assert report["status"] == "failed"
    assert report["steps"]["smoke"]["status"] == "failed"
    assert report["steps"]["smoke"]["counts"] == {"failed": 1, "ok": 1}
    (bad,) = [n for n in report["notebooks"] if n["status"] == "failed"]
    assert (bad["notebook"], bad["cell"], bad["error"]) == (A, 3, "ValueError: boom")
    assert bad["output_tail"].endswith("ValueError: boom")
    assert report["steps"]["claims"]["status"] == "ok"


def test_a_full_lesson_waits_for_its_smoke_estimate_and_skips_what_cannot_finish(
    tmp_path,
):
    # shipped: 00 full 161.2 s, 01 full 156.8 s, neither fits in 100 s; smoke runs of
    # 5 s and 40 s give 20 s and 160 s (4x), so 00's full run starts, 01's is skipped
    fakes = Fakes(
        tmp_path,
        cores=1,
        times={f"smoke:{A}": ("ok", 5.0), f"smoke:{B}": ("ok", 40.0)},
    )
    check, fakes, out = make(
        tmp_path, fakes, budget=100.0, install=False, steps=("smoke", "full")
    )
    assert check.run() == 0
    report = json.loads(out.read_text())
    full = {n["notebook"]: n for n in report["notebooks"] if n["mode"] == "full"}
    assert full[A]["status"] == "ok" and full[A]["estimate_seconds"] == 20.0
    assert full[B]["status"] == SKIPPED_BUDGET and f"full:{B}" not in fakes.started()
    assert full[B]["estimate_seconds"] == 160.0
    assert report["steps"]["full"]["counts"] == {"ok": 1, SKIPPED_BUDGET: 1}


def test_the_budget_stops_what_runs_and_starts_nothing_near_its_end(tmp_path):
    fakes = Fakes(
        tmp_path,
        cores=2,
        times={
            f"smoke:{A}": ("ok", 80.0),
            f"smoke:{B}": ("ok", 30.0),
            "claims": ("ok", 95.0),
        },
    )
    fakes.cores = 3
    check, fakes, out = make(
        tmp_path, fakes, budget=45.0, install=False, steps=("smoke", "claims")
    )
    assert check.run() == 0  # stopped by the budget: no failure
    report = json.loads(out.read_text())
    status = {n["notebook"]: n["status"] for n in report["notebooks"]}
    assert status == {A: STOPPED_BUDGET, B: "ok"}
    # every child got the time left as its limit, and A was stopped when it ran out
    for _key, limit, started, _ids in fakes.calls[2:]:
        assert limit == pytest.approx(45.0 - started)
    assert (f"smoke:{A}", STOPPED_BUDGET) in [s[:2] for s in fakes.stops]
    # claims (95 s) started beside them at 0 s and was stopped too; nothing started late
    assert all(c[2] < 45.0 - 10.0 for c in fakes.calls[2:])
    assert report["steps"]["claims"]["status"] == STOPPED_BUDGET
    assert report["complete"] is True and report["status"] == "passed"


def test_nothing_starts_with_less_than_min_start_left(tmp_path):
    fakes = Fakes(tmp_path, cores=1, times={f"smoke:{A}": ("ok", 55.0)})
    check, fakes, out = make(
        tmp_path, fakes, budget=62.0, install=False, steps=("smoke",)
    )
    assert check.run() == 0
    report = json.loads(out.read_text())
    status = {n["notebook"]: n["status"] for n in report["notebooks"]}
    assert status == {A: "ok", B: SKIPPED_BUDGET}  # 7 s were left after A
    assert f"smoke:{B}" not in fakes.started()


def test_a_child_overrunning_its_own_limit_is_stopped_and_fails(tmp_path):
    fakes = Fakes(tmp_path, times={f"smoke:{A}": ("ok", 50.0)})
    check, fakes, out = make(
        tmp_path, fakes, budget=1000.0, install=False, timeout=30.0, steps=("smoke",)
    )
    assert check.run() == 1
    report = json.loads(out.read_text())
    (entry,) = [n for n in report["notebooks"] if n["notebook"] == A]
    assert entry["status"] == "timeout" and entry["seconds"] == pytest.approx(
        30.0, abs=1
    )
    assert entry["output_tail"].endswith("still going")
    assert fakes.stops[0][:2] == (f"smoke:{A}", "timeout")


def test_claims_run_in_smoke_mode_beside_the_lessons(tmp_path):
    check, fakes, out = make(tmp_path, steps=("smoke", "claims"), install=False)
    assert check.run() == 0
    report = json.loads(out.read_text())
    assert list(report["steps"]) == ["smoke", "claims"]
    assert report["steps"]["claims"]["mode"] == "smoke"
    assert report["claims"] == CLAIMS_JSON


def test_ctrl_c_stops_every_child_and_says_so(tmp_path):
    fakes = Fakes(tmp_path, cores=1, times={f"smoke:{A}": ("ok", 5.0)})
    real_sleep = fakes.sleep

    def interrupting(seconds):
        real_sleep(seconds)
        if fakes.t >= 2.0:
            raise KeyboardInterrupt

    fakes.sleep = interrupting
    check, fakes, out = make(tmp_path, fakes, install=False, steps=("smoke",))
    check.tools.sleep = interrupting
    assert check.run() == 130
    report = json.loads(out.read_text())
    assert report["status"] == "interrupted" and report["complete"] is True
    assert report["steps"]["smoke"]["status"] == "interrupted"
    assert {n["status"] for n in report["notebooks"]} == {"interrupted"}
    assert fakes.stops and fakes.stops[0][1] == "interrupted"
    assert f"smoke:{B}" not in fakes.started()


def test_require_accelerator_stops_before_installing_anything(tmp_path, capsys):
    fakes = Fakes(tmp_path, accelerator="cpu")
    check, fakes, out = make(tmp_path, fakes, require_accelerator=True)
    assert check.run() == 1
    assert [c[0] for c in fakes.calls] == ["probe", "versions"]
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
from course_utils.tooling.device_check import run as device_run

root = Path({tmp!r})
out = root / "build" / "report.json"

class Child:
    def __init__(self, key):
        self.key, self.t0 = key, time.monotonic()
    def poll(self):
        if self.key.endswith("01_b.ipynb") or time.monotonic() - self.t0 < 0.2:
            return None  # 01_b never ends
        return {{"status": "ok", "seconds": 0.2}}
    def stop(self, why):
        return {{"status": why, "seconds": 0.0}}

tools = device_run.Tools(
    probe=lambda root, timeout: {{"host": {{"accelerator": "gpu"}}}},
    versions=lambda cuda: {{}},
    launch=lambda item, limit, ids: Child(item.key),
    core_ids=lambda: [0, 1],
)
lessons = [root / "notebooks" / "00_a.ipynb", root / "notebooks" / "01_b.ipynb"]
opts = device_run.Options(
    out=out, lessons=lessons, install=False, steps=("doctor", "smoke", "claims")
)
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
            seen = json.loads(out.read_text()) if out.exists() else {}
            steps = seen.get("steps", {})
            if seen.get("notebooks") and all(
                steps[s]["status"] == "ok" for s in ("doctor", "claims")
            ):
                break
            time.sleep(0.1)
        time.sleep(0.5)  # 01_b still running: killed in the middle of the check
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    report = json.loads(out.read_text())
    assert report["complete"] is False and report["status"] == "running"
    assert report["steps"]["doctor"]["status"] == "ok"
    assert report["steps"]["claims"]["status"] == "ok"
    assert report["steps"]["smoke"]["status"] == "running"
    assert [(n["notebook"], n["status"]) for n in report["notebooks"]] == [
        ("notebooks/00_a.ipynb", "ok")
    ]


@pytest.mark.parametrize(
    "budget, status", [(None, "failed"), (1000.0, "failed"), (100.0, STOPPED_BUDGET)]
)
def test_a_step_timing_out_fails_unless_the_budget_shortened_its_limit(
    tmp_path, budget, status
):
    fakes = Fakes(tmp_path, times={"doctor": ("ok", 5000.0)})
    check, fakes, out = make(
        tmp_path, fakes, steps=("doctor",), install=False, budget=budget
    )
    assert check.run() == (1 if status == "failed" else 0)
    ((key, limit, *_),) = [c for c in fakes.calls if c[0] == "doctor"]
    assert limit == (300.0 if budget != 100.0 else 100.0)
    assert json.loads(out.read_text())["steps"]["doctor"]["status"] == status
