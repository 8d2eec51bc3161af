"""``course grade export`` of the generated class in Canvas's, Moodle's and our CSV format."""

from __future__ import annotations

import csv

import pytest

from course_utils.cli import main as course_main
from course_utils.errors import CourseError
from course_utils.grading.integrations import gradebook
from tests.grading.class_expect import copy_of
from tests.grading.generated_class import ROSTER


def _roster(tmp_path, leave_out: str):
    path = tmp_path / "roster.csv"
    rows = ["Submission,ID,Name,Email,Section"]
    rows += [
        f'{s},{1000 + k},"{s.title()}, A.",{s}@uni.example,S{k % 2}'
        for k, s in enumerate(sorted(ROSTER))
        if s != leave_out
    ]
    rows.append("zed,2000,Zed,zed@uni.example,S1")  # enrolled, never submitted
    path.write_text("\n".join(rows) + "\n")
    return path


def _export(graded_class, tmp_path, fmt, *extra):
    target = tmp_path / f"{fmt}.csv"
    argv = ["grade", "export", str(graded_class.out), "--format", fmt]
    argv += ["--roster", str(_roster(tmp_path, "max")), "--out", str(target), *extra]
    return course_main(argv), list(csv.reader(target.open()))


def test_canvas_gradebook(graded_class, tmp_path, capsys):
    rc, rows = _export(graded_class, tmp_path, "canvas")
    printed = capsys.readouterr().out
    assert rc == 1  # max submitted but is not on the roster
    assert "error: submission 'max' has no roster entry" in printed
    assert "missing: zed (2000)" in printed
    assert rows[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "tiny_master",
    ]
    assert rows[1] == ["Points Possible", "", "", "", "", "8"]
    by_sis = {r[2]: r for r in rows[2:]}
    assert len(by_sis) == len(ROSTER)  # 12 on the roster and zed
    ada = by_sis["1000"]
    assert ada == [
        "Ada, A.",
        "",
        "1000",
        "ada@uni.example",
        "S0",
        f"{graded_class.expected['ada'][0]:g}",
    ]
    assert by_sis["2000"][-1] == ""  # missing: no grade


def test_moodle_and_csv_per_exercise(graded_class, tmp_path, capsys):
    rc, rows = _export(graded_class, tmp_path, "moodle", "--assignment", "Week 0")
    assert rows[0] == [
        "ID number",
        "Email address",
        "Full name",
        "Week 0",
        "Week 0 (feedback)",
    ]
    dee = next(r for r in rows if r[1] == "dee@uni.example")
    assert dee[3] == "7" and dee[4].startswith("7 / 8: ok: 2 of 3 exercises passed")
    rc, rows = _export(graded_class, tmp_path, "csv", "--per-exercise")
    head = rows[0]
    assert head[5:9] == [
        "tiny_master: square",
        "tiny_master: greet",
        "tiny_master: total",
        "tiny_master",
    ]
    status = {r[0]: r[head.index("status")] for r in rows[1:]}
    assert (
        status["zed"] == "missing"
        and status["lea"] == "invalid"
        and status["ada"] == "ok"
    )
    bob = next(r for r in rows if r[0] == "bob")
    assert bob[5:9] == ["1", "2", "3", "6"]


def test_a_roster_without_its_required_columns_is_refused(tmp_path):
    bad = tmp_path / "r.csv"
    bad.write_text("name,email\nAda,a@x\n")
    with pytest.raises(CourseError, match="no column submission, id"):
        gradebook.read_roster(bad)
    bad.write_text("submission,id\nada,1\nada,2\n")
    with pytest.raises(CourseError, match="'ada' twice"):
        gradebook.read_roster(bad)


def test_a_manual_item_on_some_students_keeps_each_students_maximum(
    graded_class, tmp_path, capsys
):
    """bob and dee have a manual item (8 + 1 points), the others do not (8): the csv
    gives each their own maximum, and Canvas's one Points Possible row the largest,
    whoever sorts first, with a warning naming the students of a smaller maximum."""
    out = copy_of(graded_class, tmp_path)
    manual = tmp_path / "manual.csv"
    manual.write_text("student,item,points,max_points,comment\n"
                      "bob,style,1,1,\ndee,style,0,1,\n")  # fmt: skip
    assert course_main(["grade", "manual", str(out), str(manual)]) == 0
    capsys.readouterr()
    roster = _roster(tmp_path, leave_out="")
    argv = ["grade", "export", str(out), "--roster", str(roster), "--out"]

    assert course_main([*argv, str(tmp_path / "g.csv"), "--format", "csv"]) == 0
    assert "warning" not in capsys.readouterr().out  # each row says its own
    rows = list(csv.reader((tmp_path / "g.csv").open()))
    top = {r[0]: r[rows[0].index("max_total")] for r in rows[1:]}
    assert top["bob"] == top["dee"] == "9" and top["ada"] == top["lea"] == "8"
    assert top["zed"] == "9"  # missing: the assignment's maximum

    assert course_main([*argv, str(tmp_path / "c.csv"), "--format", "canvas"]) == 0
    printed = capsys.readouterr().out
    rows = list(csv.reader((tmp_path / "c.csv").open()))
    assert rows[1] == ["Points Possible", "", "", "", "", "9"]  # not ada's 8
    (warning,) = [line for line in printed.splitlines() if "warning" in line]
    assert warning.startswith("warning: ")
    short = sorted(set(ROSTER) - {"bob", "dee"})
    assert f"11 student(s) ({', '.join(short)}) have a maximum of 8" in warning
    assert "style" in warning and "manual.csv" in warning
    assert "bob" not in warning and "dee" not in warning
    assert course_main([*argv, str(tmp_path / "m.csv"), "--format", "moodle"]) == 0
    assert "warning: moodle scores every student out of 9" in capsys.readouterr().out
