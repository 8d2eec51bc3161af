"""course_utils.tooling.device_check.report: the report's shape, its atomic saves, its file name."""

from __future__ import annotations

import json

from course_utils.tooling.device_check import report as device_report


def test_a_new_report_has_every_planned_step_pending():
    options = {"steps": ["doctor"], "budget_seconds": 60.0}
    report = device_report.new_report(options, ["install", "doctor"])
    assert report["schema_version"] == device_report.SCHEMA_VERSION
    assert (report["status"], report["complete"]) == ("running", False)
    assert report["options"] is options and report["budget_left_seconds"] == 60.0
    assert report["steps"] == {
        "install": {"status": "pending"},
        "doctor": {"status": "pending"},
    }
    assert report["notebooks"] == [] and report["claims"] is None
    assert report["started"][:2] == "20" and report["finished"] is None


def test_save_stamps_the_time_and_writes_the_whole_report(tmp_path):
    out = tmp_path / "build" / "report.json"
    report = device_report.new_report({"budget_seconds": None}, ["doctor"])
    device_report.save(out, report, 12.345, -3.0)
    on_disk = json.loads(out.read_text())
    assert on_disk == report and on_disk["updated"] is not None
    assert (on_disk["seconds"], on_disk["budget_left_seconds"]) == (12.3, 0.0)
    device_report.save(out, report, 1.0, None)
    assert json.loads(out.read_text())["budget_left_seconds"] is None
    assert not list(out.parent.glob("*.tmp"))


def test_write_json_writes_what_json_cannot_as_text(tmp_path):
    out = tmp_path / "r.json"
    device_report.write_json(out, {"path": tmp_path})
    assert json.loads(out.read_text()) == {"path": str(tmp_path)}


def test_report_name_is_date_and_device():
    report = {
        "started": "2026-09-01T10:00:00+00:00",
        "host": {"gpu_name": "NVIDIA H100 80GB HBM3", "accelerator": "gpu"},
    }
    assert device_report.report_name(report) == "2026-09-01-nvidia-h100-80gb-hbm3.json"
    report["host"] = {"gpu_name": None, "accelerator": "tpu"}
    assert device_report.report_name(report) == "2026-09-01-tpu.json"
    assert device_report.report_name({}) == "-unknown.json"
