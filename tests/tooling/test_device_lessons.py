"""course_utils.tooling.device_lessons: each lesson of one mode run, timed and recorded."""

from __future__ import annotations

from pathlib import Path

from course_utils.tooling.device_budget import SKIPPED_BUDGET, STOPPED_BUDGET, Budget
from course_utils.tooling.device_lessons import Lessons, relative, run_lessons
from course_utils.tooling.runner import Result


class Runner:
    """``runner.run_notebooks``, faked: each lesson takes its time on a fake clock."""

    def __init__(self, times: dict[str, tuple[str, float]]) -> None:
        self.t = 0.0
        self.times = times
        self.calls: list[tuple[str, bool, float, Path]] = []

    def clock(self) -> float:
        return self.t

    def __call__(self, nbs, *, root, smoke, timeout, out_dir, progress):
        (nb,) = nbs
        self.calls.append((nb.stem, smoke, timeout, out_dir))
        status, seconds = self.times.get(nb.stem, ("ok", 1.0))
        if seconds > timeout:
            status, seconds = "timeout", timeout
        self.t += seconds
        output = "line 1\nValueError: boom" if status == "failed" else ""
        return [Result(str(nb), status, seconds, error=output[7:], output=output)]


def _lesson_run(tmp_path, times, *, budget=None, timeout=900.0, stems=("00_a", "01_b")):
    runner = Runner(times)
    saves: list[int] = []
    lessons = Lessons(
        root=tmp_path,
        paths=[tmp_path / "notebooks" / f"{s}.ipynb" for s in stems],
        timeout=timeout,
        work=tmp_path / "work",
        budget=Budget(budget, runner.clock),
        run=runner,
        notebooks=[],
        save=lambda: saves.append(len(lessons.notebooks)),
    )
    return lessons, runner, saves


def test_every_lesson_is_recorded_and_saved_as_it_ends(tmp_path, capsys):
    lessons, runner, saves = _lesson_run(tmp_path, {"00_a": ("failed", 2.0)})
    status, detail, interrupted = run_lessons(lessons, "smoke")
    assert (status, detail, interrupted) == (
        "failed",
        {"counts": {"failed": 1, "ok": 1}},
        False,
    )
    assert saves == [1, 2]
    bad, good = lessons.notebooks
    assert (bad["notebook"], bad["mode"], bad["status"]) == (
        "notebooks/00_a.ipynb",
        "smoke",
        "failed",
    )
    assert bad["output_tail"].endswith("ValueError: boom")
    assert (good["status"], good["seconds"], good["timeout"]) == ("ok", 1.0, 900.0)
    assert "output_tail" not in good and "estimate_seconds" not in good
    assert runner.calls[0][1:] == (
        True,
        900.0,
        tmp_path / "work" / "executed" / "smoke",
    )
    assert "check-device: smoke 00_a failed (2.0 s)" in capsys.readouterr().out


def test_ctrl_c_in_a_lesson_stops_the_rest(tmp_path):
    lessons, runner, _ = _lesson_run(tmp_path, {"00_a": ("interrupted", 0.5)})
    assert run_lessons(lessons, "smoke") == (
        "interrupted",
        {"counts": {"interrupted": 1}},
        True,
    )
    assert [c[0] for c in runner.calls] == ["00_a"]


def test_own_timeout_fails_but_the_budgets_does_not(tmp_path):
    lessons, _, _ = _lesson_run(
        tmp_path, {"00_a": ("ok", 50.0)}, budget=1000.0, timeout=30.0
    )
    assert run_lessons(lessons, "smoke")[0] == "failed"
    assert lessons.notebooks[0]["status"] == "timeout"
    lessons, _, _ = _lesson_run(tmp_path, {"00_a": ("ok", 50.0)}, budget=40.0)
    status, detail, _ = run_lessons(lessons, "smoke")
    assert lessons.notebooks[0]["status"] == STOPPED_BUDGET
    assert lessons.notebooks[0]["timeout"] == 40.0
    assert (status, detail) == (
        "ok",
        {"counts": {STOPPED_BUDGET: 1, SKIPPED_BUDGET: 1}},
    )


def smoke_entry(stem: str, seconds: float) -> dict:
    name = f"notebooks/{stem}.ipynb"
    return {"notebook": name, "mode": "smoke", "status": "ok", "seconds": seconds}


def test_full_mode_skips_a_lesson_whose_estimate_does_not_fit(tmp_path):
    times = {"00_a": ("ok", 15.0), "01_b": ("ok", 90.0)}
    lessons, runner, _ = _lesson_run(tmp_path, times, budget=100.0)
    lessons.notebooks += [smoke_entry("00_a", 5.0), smoke_entry("01_b", 30.0)]
    status, detail, _ = run_lessons(lessons, "full")
    a, b = lessons.notebooks[2:]
    # 00_a: no full run seen yet, so 4x its smoke time, against 100 s left
    assert (a["estimate_seconds"], a["status"], a["seconds"]) == (20.0, "ok", 15.0)
    # 01_b: the measured ratio (3x): 90 s against 85 s left
    assert (b["estimate_seconds"], b["status"], b["seconds"]) == (
        90.0,
        SKIPPED_BUDGET,
        0.0,
    )
    assert [c[:2] for c in runner.calls] == [("00_a", False)]
    assert status == "ok" and detail == {"counts": {"ok": 1, SKIPPED_BUDGET: 1}}


def test_every_lesson_skipped_is_a_skipped_step(tmp_path):
    lessons, runner, _ = _lesson_run(tmp_path, {}, budget=5.0)
    assert run_lessons(lessons, "smoke")[:2] == (
        SKIPPED_BUDGET,
        {"counts": {SKIPPED_BUDGET: 2}},
    )
    assert runner.calls == []
    assert [n["seconds"] for n in lessons.notebooks] == [0.0, 0.0]


def test_lessons_are_named_relative_to_the_root_when_inside_it(tmp_path):
    assert relative(tmp_path / "notebooks" / "00_a.ipynb", tmp_path) == (
        "notebooks/00_a.ipynb"
    )
    assert relative(Path("/elsewhere/00_a.ipynb"), tmp_path) == "/elsewhere/00_a.ipynb"
