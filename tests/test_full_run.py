import json

import pytest

from course_utils import full_run
from course_utils.errors import CourseError

MACHINE = {"jax": "0.10.2", "flax": "0.12.8", "torch": "2.13.0", "smoke_mode": False}


def test_a_saved_run_loads_back_with_its_machine(tmp_path):
    path = full_run.save(
        "99_lesson", {"accuracy": 0.97, "device": "cpu"}, MACHINE, out=tmp_path
    )
    assert path == tmp_path / "99_lesson.json"
    run = full_run.load(path)
    assert run["lesson"] == "99_lesson" and run["smoke"] is False
    assert run["result"] == {"accuracy": 0.97, "device": "cpu"}
    assert run["fingerprint"]["jax"] == "0.10.2" and run["fingerprint"]["cpu"]
    assert "jax 0.10.2, flax 0.12.8, torch 2.13.0" in full_run.label(run)


def test_shipped_reads_one_lessons_files_in_order(tmp_path):
    for lesson, machine in (("99_lesson", "b"), ("99_lesson", "a"), ("98_other", "a")):
        saved = full_run.save(lesson, {"machine": machine}, MACHINE, out=tmp_path)
        saved.rename(tmp_path / f"{lesson}--{machine}.json")
    runs = full_run.shipped("99_lesson", tmp_path)
    assert [r["result"]["machine"] for r in runs] == ["a", "b"]


def test_a_bad_file_names_itself_and_the_field(tmp_path):
    bad = tmp_path / "99_lesson--x.json"
    bad.write_text(json.dumps({"schema": 1, "lesson": "99", "fingerprint": {}}))
    with pytest.raises(CourseError, match="99_lesson--x.json: result is missing"):
        full_run.load(bad)
    bad.write_text("{")
    with pytest.raises(CourseError, match="unreadable JSON"):
        full_run.load(bad)


def test_the_table_sets_runs_side_by_side_with_a_dash_where_one_lacks_a_row():
    text = full_run.table(
        [
            ("this run", {"acc": 0.5, "on": "cpu"}),
            ("shipped", {"acc": 0.975, "speed": 1234.5}),
        ],
        {"acc": ".1%", "speed": ",.0f", "on": ""},
    )
    assert text.splitlines() == [
        "| | this run | shipped |",
        "|---|---:|---:|",
        "| acc | 50.0% | 97.5% |",
        "| speed | — | 1,234 |",
        "| on | cpu | — |",
    ]


def test_every_shipped_file_is_valid():
    for path in full_run.SHIPPED.glob("*.json"):
        run = full_run.load(path)
        assert path.name.startswith(run["lesson"] + "--") or path.stem == run["lesson"]


def test_columns_put_this_run_last_with_each_machines_load(tmp_path):
    saved = full_run.save("99_lesson", {"steps": 800}, MACHINE, out=tmp_path)
    saved.rename(tmp_path / "99_lesson--a.json")
    cols = full_run.columns("99_lesson", {"steps": 30}, tmp_path)
    assert [h for h, _ in cols][-1] == "this run"
    assert [n["steps"] for _, n in cols] == [800, 30]
    assert all("load average" in n and "cores" in n for _, n in cols)


def test_load_note_says_whether_the_speeds_can_be_read():
    busy = full_run.load_note("a", {"load average": 16.2, "cores": 2})
    assert "load 16.2 on 2 cores, a busy machine" in busy
    assert "quiet enough" in full_run.load_note("b", {"load average": 0.5, "cores": 2})
    assert "load unknown" in full_run.load_note("c", {"load average": None, "cores": 2})
