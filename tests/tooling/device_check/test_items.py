"""course_utils.tooling.device_check.items: the check's items, and each ending as the report records it."""

from __future__ import annotations

from pathlib import Path

from course_utils.tooling.device_check import estimates as est
from course_utils.tooling.device_check.budget import SKIPPED_BUDGET, STOPPED_BUDGET
from course_utils.tooling.device_check.items import (
    counts,
    entry,
    items,
    refresh,
    relative,
    step_status,
)
from course_utils.tooling.device_check.steps import tail


def _course(root: Path) -> Path:
    for folder, name in (
        ("notebooks", "03_jit.ipynb"),
        ("solutions", "03_jit_exercises.ipynb"),
        ("exercises", "03_jit_exercises.ipynb"),
    ):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / name).write_text("{}")
    return root / "notebooks" / "03_jit.ipynb"


def test_every_step_gives_its_items_with_the_shipped_estimates(tmp_path):
    lesson = _course(tmp_path)
    got = {
        i.key: i
        for i in items(
            tmp_path, [lesson], ("doctor", "smoke", "full", "tests", "claims"), 900.0
        )
    }
    assert sorted(got) == [
        "claims",
        "doctor",
        "full:notebooks/03_jit.ipynb",
        "smoke:exercises/03_jit_exercises.ipynb",
        "smoke:notebooks/03_jit.ipynb",
        "smoke:solutions/03_jit_exercises.ipynb",
        "tests:notebooks/03_jit.ipynb",
        "tests:solutions/03_jit_exercises.ipynb",
    ]
    full = got["full:notebooks/03_jit.ipynb"]
    assert (full.seconds, full.must_fit, full.timeout) == (
        est.FULL_S["03"],
        True,
        900.0,
    )
    assert got["smoke:notebooks/03_jit.ipynb"].seconds == est.SMOKE_S["03"]
    assert got["smoke:solutions/03_jit_exercises.ipynb"].kind == "master"
    assert got["smoke:exercises/03_jit_exercises.ipynb"].kind == "student"
    assert got["tests:notebooks/03_jit.ipynb"].seconds == est.SMOKE_S["03"] + 10.0
    assert got["doctor"].timeout == 300.0 and got["claims"].timeout is None
    assert not any(i.must_fit for k, i in got.items() if not k.startswith("full:"))
    only = items(tmp_path, [lesson], ("smoke",), 900.0)
    assert {i.step for i in only} == {"smoke"} and len(only) == 3


def test_full_estimates_refresh_from_ended_smoke_runs(tmp_path):
    lesson = _course(tmp_path)
    (full,) = items(tmp_path, [lesson], ("full",), 900.0)
    refresh([full], [])
    assert full.seconds == est.FULL_S["03"]
    smoke = {"notebook": full.notebook, "mode": "smoke", "status": "ok", "seconds": 7.0}
    refresh([full], [smoke])
    assert full.seconds == 28.0


def test_an_entry_names_the_notebook_mode_and_what_went_wrong(tmp_path):
    lesson = _course(tmp_path)
    by_kind = {i.kind: i for i in items(tmp_path, [lesson], ("smoke", "full"), 900.0)}
    result = {
        "status": "failed",
        "seconds": 3.14,
        "cell": 4,
        "error": "E: x",
        "output": "a\nE: x",
        "cores": [2],
        "started_at": 1.5,
        "timeout": 60.0,
    }
    got = entry(by_kind["master"], result)
    assert got == {
        "notebook": "solutions/03_jit_exercises.ipynb",
        "mode": "smoke",
        "kind": "master",
        "status": "failed",
        "seconds": 3.1,
        "timeout": 60.0,
        "cell": 4,
        "error": "E: x",
        "cores": [2],
        "started_at": 1.5,
        "output_tail": tail("a\nE: x", 20),
    }
    ok = entry(by_kind["full"], {"status": "ok", "seconds": 2.0, "output": "fine"})
    assert ok["mode"] == "full" and ok["estimate_seconds"] == est.FULL_S["03"]
    assert "output_tail" not in ok and "kind" not in ok


def test_a_steps_status_from_its_items():
    assert step_status(["ok", "ok"]) == "ok"
    assert step_status(["ok", STOPPED_BUDGET, SKIPPED_BUDGET]) == "ok"
    assert step_status([SKIPPED_BUDGET, SKIPPED_BUDGET]) == SKIPPED_BUDGET
    assert step_status([STOPPED_BUDGET, SKIPPED_BUDGET]) == STOPPED_BUDGET
    assert step_status(["ok", "timeout"]) == "failed"
    assert step_status(["ok", "interrupted"]) == "interrupted"
    assert counts(["ok", "ok", "failed"]) == {"ok": 2, "failed": 1}


def test_notebooks_are_named_relative_to_the_root_when_inside_it(tmp_path):
    assert relative(tmp_path / "notebooks" / "00_a.ipynb", tmp_path) == (
        "notebooks/00_a.ipynb"
    )
    assert relative(Path("/elsewhere/00_a.ipynb"), tmp_path) == "/elsewhere/00_a.ipynb"
