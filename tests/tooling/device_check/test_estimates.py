"""course_utils.tooling.device_check.estimates: the shipped table, where its numbers came from."""

from __future__ import annotations

import json
from pathlib import Path

from course_utils.tooling.device_check import estimates as est
from course_utils.tooling.device_check.budget import FULL_OVER_SMOKE

ROOT = Path(__file__).resolve().parents[3]


def test_every_lesson_has_an_estimate_in_each_mode():
    lessons = sorted(p.stem[:2] for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(est.table()) == lessons
    for row in est.table().values():
        assert all(v > 0 for v in row.values())


def test_the_measured_smoke_times_are_the_committed_reports_own():
    measured = {}
    for path in sorted((ROOT / "docs" / "device-reports").glob("*.json")):
        report = json.loads(path.read_text())
        if report["host"].get("accelerator") != "gpu":
            continue  # the estimates are a GPU's, where items share the machine
        for nb in report["notebooks"]:
            if nb["mode"] == "smoke" and nb["status"] in ("ok", "failed"):
                measured[Path(nb["notebook"]).stem[:2]] = nb["seconds"]
    assert measured  # 00-07 ran on the H200
    for lesson, seconds in measured.items():
        assert est.SMOKE_S[lesson] == seconds, lesson
    # 08 was stopped there by the budget: its time is a floor, not a measurement
    assert est.SMOKE_S["08"] >= 125.9


def test_full_mode_is_the_ratio_rule_but_where_a_full_run_was_recorded():
    for lesson, smoke in est.SMOKE_S.items():
        if lesson != "11":
            assert est.FULL_S[lesson] == round(smoke * FULL_OVER_SMOKE, 1)
    assert est.FULL_S["11"] == est.FULL_11_S


def test_unmeasured_items_get_the_stated_defaults():
    assert est.seconds("smoke", "99") == est.DEFAULT_SMOKE_S
    assert est.seconds("master", "00") == est.DEFAULT_SMOKE_S
    assert est.tests_seconds("smoke", "00") == est.SMOKE_S["00"] + est.PYTEST_START_S
    assert est.cores("full", "05") == 2 and est.cores("student", "05") == 1
    assert est.cores("smoke", "12") == 2 and est.cores("smoke", "11") == 1
    assert est.gpu_gib("full", "11") > est.gpu_gib("full", "00")


def test_a_full_estimate_follows_the_smoke_run_once_it_ended():
    runs = [{"notebook": "n", "mode": "smoke", "status": "ok", "seconds": 10.0}]
    assert est.full_estimate(runs, "n", 500.0) == 10.0 * FULL_OVER_SMOKE
    assert est.full_estimate([], "n", 500.0) == 500.0
