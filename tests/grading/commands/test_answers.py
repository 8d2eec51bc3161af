"""``course grade answers``: the command line, its errors, and its ``manual.csv`` taken
through ``course grade manual`` as it is, plain and anonymous, on the graded class."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest

from course_utils.cli import main as course_main
from course_utils.grading.records import answers, store
from tests.grading import answers_class as ac
from tests.grading.class_expect import copy_of


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("answers-cli")
    return ac.write_master(root / "master"), ac.write_class(root / "subs")


def _answers(made, out, *extra) -> int:
    master, subs = made
    argv = ["grade", "answers", str(subs), "--master", str(master), "--out", str(out)]
    return course_main([*argv, *extra])


def _fill(table, points: dict[tuple[str, str], tuple[str, str]], key=None) -> None:
    """Write points and comments into the table, as a grader would, by real student."""
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    for r in rows:
        who = key[r["student"]] if key else r["student"]
        if (who, r["item"]) in points:
            r["points"], r["comment"] = points[who, r["item"]]
    with table.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def test_the_command_writes_the_pages_and_the_table(made, tmp_path, capsys):
    out = tmp_path / "answers"
    assert _answers(made, out, "--points", "2") == 0
    printed = capsys.readouterr().out
    assert "not read: lea: the notebook is not valid JSON" in printed
    assert "why: 3 of 13 answered, worth 2" in printed
    assert "unit: 3 of 13 answered, worth 2" in printed
    assert f"fill {out / 'manual.csv'}, then: course grade manual REPORT_DIR" in printed
    for q in ac.QUESTIONS:
        assert (out / "questions" / f"{q}.html").is_file()
    assert (out / "index.html").is_file() and not (out / "_instructor").exists()


def test_out_has_a_default_and_blank_points_are_said(
    made, tmp_path, capsys, monkeypatch
):
    master, subs = made
    monkeypatch.chdir(tmp_path)
    assert course_main(["grade", "answers", str(subs), "--source", str(master)]) == 0
    assert (tmp_path / f"answers-{master.stem}" / "manual.csv").is_file()
    assert "max_points is blank (give --points N" in capsys.readouterr().out


@pytest.mark.parametrize(
    "words, message",
    [
        (["@SUBS"], "--master is required"),
        (["@MISSING", "--master", "@MASTER"], "SUBMISSIONS @MISSING: not a folder"),
        (["@EMPTY", "--master", "@MASTER"], "SUBMISSIONS @EMPTY: no notebooks"),
        (["@SUBS", "--master", "@MISSING"], "--master @MISSING: no such notebook"),
        (["@SUBS", "--master", "@PLAIN"], "no written answers"),
        (["@SUBS", "--master", "@MASTER", "--out", "@SUBS/x"], "inside SUBMISSIONS"),
        (["@SUBS", "@SUBS", "--master", "@MASTER"], "expected one SUBMISSIONS folder"),
        (["@SUBS", "--master", "@MASTER", "--points", "-1"], "--points"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_naming_the_input(
    made, tmp_path, capsys, words, message
):
    import nbformat

    master, subs = made
    (tmp_path / "empty").mkdir()
    plain = nbformat.read(master, as_version=4)
    plain.cells = [c for c in plain.cells if c.cell_type == "code"]
    nbformat.write(plain, tmp_path / "plain.ipynb")
    names = {
        "@SUBS": str(subs),
        "@MASTER": str(master),
        "@MISSING": str(tmp_path / "missing"),
        "@EMPTY": str(tmp_path / "empty"),
        "@PLAIN": str(tmp_path / "plain.ipynb"),
    }

    def filled(text: str) -> str:
        for key, value in names.items():
            text = text.replace(key, value)
        return text

    assert course_main(["grade", "answers", *map(filled, words)]) == 2
    err = capsys.readouterr().err
    assert filled(message) in err and err.count("\n") == 1


def _manual(out, student) -> dict:
    return next(r for r in store.records(out) if r["student"] == student)


def test_the_table_goes_through_course_grade_manual_as_it_is(
    made, graded_class, tmp_path, capsys
):
    report = copy_of(graded_class, tmp_path)
    before = {r["student"]: r["total"] for r in store.records(report)}
    out = tmp_path / "answers"
    assert _answers(made, out, "--points", "2") == 0
    table = out / "manual.csv"
    _fill(table, {("ada", "why"): ("2", "Clear."), ("fay", "unit"): ("1.5", "Units?")})
    assert course_main(["grade", "manual", str(report), str(table)]) == 0
    assert "manual grades of 13 student(s)" in capsys.readouterr().out
    ada, fay, lea = (_manual(report, s) for s in ("ada", "fay", "lea"))
    assert ada["total"] == before["ada"] + 2 and fay["total"] == before["fay"] + 1.5
    assert ada["max_total"] == fay["max_total"] == lea["max_total"]
    items = {m["item"]: m for m in fay["manual"]["items"]}
    assert items["unit"] == {"item": "unit", "points": 1.5, "max_points": 2.0,
                             "comment": "Units?"}  # fmt: skip
    assert items["why"]["points"] == 0
    lea_items = {m["item"]: m["comment"] for m in lea["manual"]["items"]}
    assert lea_items == {"why": answers.NO_ANSWER, "unit": answers.NO_ANSWER}
    nb = json.loads((store.student_dir(report, "fay") / "feedback.ipynb").read_text())
    assert "**unit**: 1.5 / 2 — Units?" in "".join(nb["cells"][1]["source"])


def test_an_anonymous_table_is_read_through_its_key(
    made, graded_class, tmp_path, capsys
):
    report = copy_of(graded_class, tmp_path)
    before = {r["student"]: r["total"] for r in store.records(report)}
    out = tmp_path / "blind"
    assert _answers(made, out, "--points", "2", "--anonymous") == 0
    printed = capsys.readouterr().out
    assert "students are shown under pseudonyms" in printed
    assert "not read: lea:" in printed  # the instructor's console names them
    key = answers.read_key(out / "_instructor" / "anonymous.csv")
    _fill(out / "manual.csv", {("bob", "why"): ("1", "Say more.")}, key)
    assert course_main(["grade", "manual", str(report), str(out / "manual.csv")]) == 0
    assert "anonymous ids read through" in capsys.readouterr().out
    assert _manual(report, "bob")["total"] == before["bob"] + 1
    kept = (report / "_instructor" / ".manual.csv").read_text()
    assert "bob,why,1,2,Say more." in kept and "anon-" not in kept
    # A copy of the table away from its key: refused until the key is given.
    elsewhere = tmp_path / "returned.csv"
    shutil.copy(out / "manual.csv", elsewhere)
    assert course_main(["grade", "manual", str(report), str(elsewhere)]) == 2
    err = capsys.readouterr().err
    assert "are pseudonyms" in err and "--key" in err and err.count("\n") == 1
    key_file = str(out / "_instructor" / "anonymous.csv")
    argv = ["grade", "manual", str(report), str(elsewhere), "--key", key_file]
    assert course_main(argv) == 0
    assert _manual(report, "bob")["total"] == before["bob"] + 1
    missing = ["grade", "manual", str(report), str(elsewhere), "--key", "nope.csv"]
    assert course_main(missing) == 2
    assert "--key nope.csv: no such file" in capsys.readouterr().err


def test_a_student_id_kept_from_a_spreadsheet_formula_is_read_back(
    graded_class, tmp_path
):
    report = copy_of(graded_class, tmp_path)
    before = _manual(report, "ada")["total"]
    table = tmp_path / "manual.csv"
    table.write_text("student,item,points,max_points,comment\n'ada,why,1,2,\n")
    assert course_main(["grade", "manual", str(report), str(table)]) == 0
    assert _manual(report, "ada")["total"] == before + 1


def test_canvas_names_without_lms_get_the_grade_warning_line(made, tmp_path, capsys):
    """Answers gathered from a Canvas download without ``--lms`` name students by whole
    file names, which a class graded with ``--lms canvas`` does not know: the command
    says so as ``course grade`` does; with ``--lms canvas`` the table has the logins."""
    _, subs = made
    canvas = tmp_path / "canvas"
    shutil.copytree(subs, canvas)
    (canvas / "ada.ipynb").rename(canvas / "ada_21_991_tiny_master.ipynb")
    (canvas / "fay.ipynb").rename(canvas / "fay_LATE_22_992_tiny_master.ipynb")
    argv = ["grade", "answers", str(canvas), "--master", str(made[0])]
    assert course_main([*argv, "--out", str(tmp_path / "a")]) == 0
    warned = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("warning:")
    ]
    assert warned == [
        "warning: 2 of 13 submission(s) are named as Canvas's download names them "
        "(ada_21_991_tiny_master.ipynb and 1 more): without --lms canvas each is named "
        "by that whole name in manual.csv, not as a class graded with --lms is; give "
        "--lms canvas if they are Canvas's"
    ], warned
    out = tmp_path / "b"
    assert course_main([*argv, "--out", str(out), "--lms", "canvas"]) == 0
    assert "warning:" not in capsys.readouterr().out
    ids = {r["student"] for r in csv.DictReader((out / "manual.csv").open())}
    assert {"ada", "fay"} <= ids and not any("_" in i for i in ids), ids
